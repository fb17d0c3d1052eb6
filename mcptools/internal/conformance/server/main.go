// The server command is mcptools' server as the MCP conformance suite
// tests one: a toolset of the suite's tools, served by mcptools.NewServer
// over streamable HTTP at http://ADDR/mcp.
//
//	go run ./mcptools/internal/conformance/server -addr ADDR
//
// Once it listens, it prints its URL on standard output (with -addr
// 127.0.0.1:0, the port it was given). It serves until interrupted.
//
// The tools are ordinary toolset tools: their results are strings, errors
// and toolset.MediaOutput. The ones that log to the client, ask its user
// (elicitation) or its model (sampling) reach the client through
// mcptools.Request; the one that reports progress calls
// toolset.ReportProgress. The suite's resources, prompts and completions
// are no toolset's: see the baselines.
//
//lint:file-ignore SA1019 the suite tests logging and sampling, which protocol version 2026-07-28 deprecates (SEP-2577)
package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolnexus/toolnexus-go/mcptools"
	"github.com/toolnexus/toolnexus-go/toolset"
)

func main() {
	addr := flag.String("addr", "", "serve on `addr` (host:port), at http://addr/mcp")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("conformance server: ")
	if *addr == "" || flag.NArg() > 0 {
		log.Fatal("usage: server -addr host:port")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, *addr); err != nil {
		log.Fatal(err)
	}
}

// serve serves the suite's tools on addr until ctx is done.
func serve(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	// An event store makes the streams resumable: a client whose stream
	// breaks, or is closed (test_reconnection), reconnects and is sent
	// what it missed.
	mux.Handle("/mcp", mcptools.NewHTTPHandler(tools(), &mcp.Implementation{Name: "toolnexus-go-conformance", Version: "v1"},
		&mcptools.HandlerOptions{Streamable: &mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)}}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// tools is the set of the suite's tools.
func tools() *toolset.Set {
	noArgs := &jsonschema.Schema{Type: "object"}
	text := func(name, description, out string) *toolset.Tool {
		return toolset.MustDefine(toolset.Tool{Name: name, Description: description, InputSchema: noArgs,
			Run: func(context.Context, map[string]any) (any, error) { return out, nil }})
	}
	media := func(name, description string, out toolset.MediaOutput) *toolset.Tool {
		return toolset.MustDefine(toolset.Tool{Name: name, Description: description, InputSchema: noArgs,
			Run: func(context.Context, map[string]any) (any, error) { return out, nil }})
	}
	resource := toolset.Media{MIMEType: "text/plain", Data: []byte("This is an embedded resource")}
	picture := toolset.Media{MIMEType: "image/png", Data: pngDot()}
	return toolset.MustNew(
		text("test_simple_text", "Returns a simple text", "This is a simple text response for testing."),
		media("test_image_content", "Returns an image", toolset.MediaOutput{Media: []toolset.Media{picture}}),
		media("test_audio_content", "Returns a sound", toolset.MediaOutput{Media: []toolset.Media{{MIMEType: "audio/wav", Data: wavBeep()}}}),
		media("test_embedded_resource", "Returns an embedded resource", toolset.MediaOutput{Media: []toolset.Media{resource}}),
		media("test_multiple_content_types", "Returns text, an image and an embedded resource",
			toolset.MediaOutput{Output: "This is text content", Media: []toolset.Media{picture, resource}}),
		toolset.MustDefine(toolset.Tool{Name: "test_error_handling", Description: "Always fails", InputSchema: noArgs,
			Run: func(context.Context, map[string]any) (any, error) {
				return nil, errors.New("this tool intentionally returns an error for testing")
			}}),
		toolset.MustDefine(toolset.Tool{Name: "test_tool_with_logging", Description: "Logs to the client as it works", InputSchema: noArgs,
			Run: func(ctx context.Context, _ map[string]any) (any, error) {
				for _, step := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
					if req := mcptools.Request(ctx); req != nil {
						if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "conformance", Data: step}); err != nil {
							return nil, err
						}
					}
				}
				return "Tool with logging executed successfully", nil
			}}),
		// The suite wants three increasing progress notifications: the
		// server sends them for the tool's reports, at most one per
		// toolset.DefaultProgressInterval, so the tool waits that long
		// between two (the suite's example waits about 50 ms).
		toolset.MustDefine(toolset.Tool{Name: "test_tool_with_progress", Description: "Works in three steps, reporting each", InputSchema: noArgs,
			Run: func(ctx context.Context, _ map[string]any) (any, error) {
				for i, done := range []float64{0, 50, 100} {
					if i > 0 {
						select {
						case <-time.After(toolset.DefaultProgressInterval):
						case <-ctx.Done():
							return nil, ctx.Err()
						}
					}
					toolset.ReportProgress(ctx, done, 100, fmt.Sprintf("step %d of 3", i+1))
				}
				return "Tool with progress executed successfully", nil
			}}),
		toolset.MustDefine(toolset.Tool{Name: "test_sampling", Description: "Asks the client's model",
			InputSchema: objectOf(map[string]*jsonschema.Schema{"prompt": {Type: "string", Description: "what to ask the model"}}, "prompt"),
			Run: func(ctx context.Context, args map[string]any) (any, error) {
				req := mcptools.Request(ctx)
				if req == nil {
					return nil, errors.New("no MCP client to ask")
				}
				res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 100, Messages: []*mcp.SamplingMessage{
					{Role: "user", Content: &mcp.TextContent{Text: args["prompt"].(string)}}}})
				if err != nil {
					return nil, fmt.Errorf("sampling failed: %w", err)
				}
				answer := "(not text)"
				if t, ok := res.Content.(*mcp.TextContent); ok {
					answer = t.Text
				}
				return "LLM response: " + answer, nil
			}}),
		elicit("test_elicitation", "Asks the client's user for a username",
			objectOf(map[string]*jsonschema.Schema{"message": {Type: "string", Description: "what to tell the user"}}, "message"),
			func(args map[string]any) (string, any) {
				message, _ := args["message"].(string)
				return message, &jsonschema.Schema{Type: "object", Required: []string{"username"},
					Properties: map[string]*jsonschema.Schema{"username": {Type: "string", Description: "Your preferred username"}}}
			}),
		elicit("test_elicitation_sep1034_defaults", "Asks the client's user, with defaults (SEP-1034)", noArgs,
			func(map[string]any) (string, any) { return "Test defaults for primitives", jsonObject(defaultsSchema) }),
		elicit("test_elicitation_sep1330_enums", "Asks the client's user to choose (SEP-1330)", noArgs,
			func(map[string]any) (string, any) { return "Test enum schemas", jsonObject(enumsSchema) }),
		toolset.MustDefine(toolset.Tool{Name: "test_reconnection", Description: "Closes the call's stream before it answers (SEP-1699)",
			InputSchema: noArgs,
			Run: func(ctx context.Context, _ map[string]any) (any, error) {
				if req := mcptools.Request(ctx); req != nil && req.Extra != nil && req.Extra.CloseSSEStream != nil {
					req.Extra.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: 10 * time.Millisecond})
				}
				return "Reconnection test completed: the answer came after the stream was closed", nil
			}}),
		asking("test_input_required_result_elicitation", "Asks the user's name (2026-07-28: input_required)",
			func(ctx context.Context) (string, error) {
				name, err := askName(ctx, "user_name", "What is your name?")
				return "Hello, " + name + "!", err
			}),
		asking("test_input_required_result_sampling", "Asks the client's model (2026-07-28: input_required)",
			func(ctx context.Context) (string, error) {
				text, err := sample(ctx, "capital_question", "What is the capital of France?")
				return "Sampling response: " + text, err
			}),
		asking("test_input_required_result_list_roots", "Asks the client's roots (2026-07-28: input_required)",
			func(ctx context.Context) (string, error) {
				n, err := roots(ctx, "client_roots")
				return fmt.Sprintf("Client exposed %d root(s)", n), err
			}),
		asking("test_input_required_result_request_state", "Asks for a confirmation, carried in a signed requestState",
			func(ctx context.Context) (string, error) {
				_, err := mcptools.Elicit(ctx, "confirm", &mcp.ElicitParams{Message: "Please confirm", RequestedSchema: confirmSchema})
				return "state-ok: requestState received and confirmation accepted", err
			}),
		asking("test_input_required_result_tampered_state", "Asks for a confirmation; a tampered requestState is refused",
			func(ctx context.Context) (string, error) {
				_, err := mcptools.Elicit(ctx, "confirm", &mcp.ElicitParams{Message: "Please confirm", RequestedSchema: confirmSchema})
				return "state-ok: requestState received and confirmation accepted", err
			}),
		asking("test_input_required_result_multiple_inputs", "Asks the user, the model and the roots in one round",
			func(ctx context.Context) (string, error) {
				// Each is asked before any answer is needed: one round.
				name, err1 := askName(ctx, "user_name", "What is your name?")
				greeting, err2 := sample(ctx, "greeting", "Generate a greeting")
				n, err3 := roots(ctx, "client_roots")
				return fmt.Sprintf("%s %s — %d root(s) visible", greeting, name, n), errors.Join(err1, err2, err3)
			}),
		asking("test_input_required_result_multi_round", "Asks the user twice, in two rounds",
			func(ctx context.Context) (string, error) {
				name, err := askName(ctx, "step1", "Step 1: What is your name?")
				if err != nil {
					return "", err
				}
				res, err := mcptools.Elicit(ctx, "step2", &mcp.ElicitParams{Message: "Step 2: What is your favorite color?",
					RequestedSchema: objectOf(map[string]*jsonschema.Schema{"color": {Type: "string"}}, "color")})
				if err != nil {
					return "", err
				}
				color, _ := res.Content["color"].(string)
				return fmt.Sprintf("Multi-round complete: %s likes %s", name, color), nil
			}),
		asking("test_input_required_result_capabilities", "Asks only what the client declared it can answer",
			func(ctx context.Context) (string, error) {
				var errs []error
				for _, err := range []error{
					func() error { _, err := askName(ctx, "user_name", "What is your name?"); return err }(),
					func() error { _, err := sample(ctx, "greeting", "Generate a short greeting"); return err }(),
					func() error { _, err := roots(ctx, "client_roots"); return err }(),
				} {
					if !errors.Is(err, mcptools.ErrNoCapability) {
						errs = append(errs, err)
					}
				}
				return "Capability-aware input requests fulfilled", errors.Join(errs...)
			}),
		// The stateless scenario's diagnostics (SEP-2575).
		toolset.MustDefine(toolset.Tool{Name: "test_missing_capability", Description: "Needs the client's sampling capability",
			InputSchema: noArgs,
			Run: func(ctx context.Context, _ map[string]any) (any, error) {
				if req := mcptools.Request(ctx); req != nil {
					if caps := req.ClientCapabilities(); caps == nil || caps.Sampling == nil {
						data, _ := json.Marshal(mcp.MissingRequiredClientCapabilityData{
							RequiredCapabilities: &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}}})
						return nil, &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities,
							Message: "sampling capability required but not declared by client", Data: data}
					}
				}
				return "Client declared the sampling capability; tool executed.", nil
			}}),
		text("test_streaming_elicitation", "Answers with its result only, no request of its own",
			"stream observed: result frames only, no top-level requests"),
		toolset.MustDefine(toolset.Tool{Name: "test_logging_tool", Description: "Logs, at the level the client asked for",
			InputSchema: noArgs,
			Run: func(ctx context.Context, _ map[string]any) (any, error) {
				if req := mcptools.Request(ctx); req != nil {
					_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "test_logging_tool executed"})
				}
				return "Log attempted; go-sdk sends it only at the level the request's _meta asks for.", nil
			}}),
		// SEP-2243: an argument mirrored in an Mcp-Param-Region header.
		toolset.MustDefine(toolset.Tool{Name: "test_x_mcp_header", Description: "Takes a region mirrored in a header",
			InputSchema: objectOf(map[string]*jsonschema.Schema{
				"region": {Type: "string", Description: "mirrored into Mcp-Param-Region", Extra: map[string]any{"x-mcp-header": "Region"}},
				"level":  {Type: "integer", Description: "not mirrored"}}),
			Run: func(_ context.Context, args map[string]any) (any, error) {
				return fmt.Sprintf("region=%v", args["region"]), nil
			}}),
		toolset.MustDefine(toolset.Tool{Name: "json_schema_2020_12_tool", Description: "Takes arguments described with JSON Schema 2020-12",
			InputSchema: schema2020,
			Run: func(_ context.Context, args map[string]any) (any, error) {
				b, _ := json.Marshal(args)
				return "JSON Schema 2020-12 tool called with: " + string(b), nil
			}}),
	)
}

// elicit is a tool that asks the client's user for what ask says (a
// message and a requested schema), and answers with what they said.
func elicit(name, description string, input *jsonschema.Schema, ask func(args map[string]any) (string, any)) *toolset.Tool {
	return toolset.MustDefine(toolset.Tool{Name: name, Description: description, InputSchema: input,
		Run: func(ctx context.Context, args map[string]any) (any, error) {
			req := mcptools.Request(ctx)
			if req == nil {
				return nil, errors.New("no MCP client to ask")
			}
			message, schema := ask(args)
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: message, RequestedSchema: schema})
			if err != nil {
				return nil, fmt.Errorf("elicitation failed: %w", err)
			}
			b, _ := json.Marshal(res.Content)
			return fmt.Sprintf("Elicitation result: action=%s, content=%s", res.Action, b), nil
		}})
}

// asking is a tool without arguments that asks its client through
// mcptools.Input (run reports its failures, ErrInputRequired among them,
// as errors) and answers with what run returns.
func asking(name, description string, run func(ctx context.Context) (string, error)) *toolset.Tool {
	return toolset.MustDefine(toolset.Tool{Name: name, Description: description, InputSchema: &jsonschema.Schema{Type: "object"},
		Run: func(ctx context.Context, _ map[string]any) (any, error) {
			out, err := run(ctx)
			if err != nil {
				return nil, err
			}
			return out, nil
		}})
}

// confirmSchema asks for a yes or no.
var confirmSchema = objectOf(map[string]*jsonschema.Schema{"ok": {Type: "boolean"}}, "ok")

// askName asks the user for their name under key.
func askName(ctx context.Context, key, message string) (string, error) {
	res, err := mcptools.Elicit(ctx, key, &mcp.ElicitParams{Message: message,
		RequestedSchema: objectOf(map[string]*jsonschema.Schema{"name": {Type: "string"}}, "name")})
	if err != nil {
		return "", err
	}
	name, _ := res.Content["name"].(string)
	return name, nil
}

// sample asks the client's model prompt under key and returns its text.
func sample(ctx context.Context, key, prompt string) (string, error) {
	res, err := mcptools.Sample(ctx, key, &mcp.CreateMessageParams{MaxTokens: 100,
		Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: prompt}}}})
	if err != nil {
		return "", err
	}
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text, nil
		}
	}
	return "(not text)", nil
}

// roots asks the client for its roots under key and returns how many.
func roots(ctx context.Context, key string) (int, error) {
	res, err := mcptools.Input(ctx, key, &mcp.ListRootsParams{})
	if err != nil {
		return 0, err
	}
	r, ok := res.(*mcp.ListRootsResult)
	if !ok {
		return 0, fmt.Errorf("the client answered the roots request with a %T", res)
	}
	return len(r.Roots), nil
}

func objectOf(properties map[string]*jsonschema.Schema, required ...string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Properties: properties, Required: required}
}

// jsonObject decodes a JSON object written in the source.
func jsonObject(s string) map[string]any {
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		panic(err)
	}
	return v
}

// defaultsSchema asks for one field of each primitive type, each with a
// default (SEP-1034).
const defaultsSchema = `{
	"type": "object",
	"properties": {
		"name": {"type": "string", "description": "User name", "default": "John Doe"},
		"age": {"type": "integer", "description": "User age", "default": 30},
		"score": {"type": "number", "description": "User score", "default": 95.5},
		"status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
		"verified": {"type": "boolean", "description": "Verification status", "default": true}
	}
}`

// enumsSchema asks for choices in each of SEP-1330's forms: single and
// multiple, with and without titles, and the legacy enumNames.
const enumsSchema = `{
	"type": "object",
	"properties": {
		"untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
		"titledSingle": {"type": "string", "oneOf": [
			{"const": "value1", "title": "First Option"},
			{"const": "value2", "title": "Second Option"},
			{"const": "value3", "title": "Third Option"}]},
		"legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
		"untitledMulti": {"type": "array", "minItems": 1, "maxItems": 3,
			"items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
		"titledMulti": {"type": "array", "minItems": 1, "maxItems": 3,
			"items": {"type": "string", "anyOf": [
				{"const": "value1", "title": "First Option"},
				{"const": "value2", "title": "Second Option"},
				{"const": "value3", "title": "Third Option"}]}}
	}
}`

// schema2020 uses the JSON Schema 2020-12 keywords the suite checks survive
// a listing (SEP-1613): $schema, $defs and $ref, additionalProperties, and
// more of the vocabulary ($anchor, allOf, anyOf, if/then/else).
var schema2020 = func() *jsonschema.Schema {
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(`{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"type": "object",
		"$defs": {
			"address": {
				"$anchor": "address",
				"type": "object",
				"properties": {"street": {"type": "string"}, "city": {"type": "string"}}
			}
		},
		"properties": {
			"name": {"type": "string"},
			"address": {"$ref": "#/$defs/address"},
			"contactMethod": {"type": "string", "enum": ["phone", "email"]},
			"phone": {"type": "string"},
			"email": {"type": "string"}
		},
		"allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
		"if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
		"then": {"required": ["phone"]},
		"else": {"required": ["email"]},
		"additionalProperties": false
	}`), &s); err != nil {
		panic(err)
	}
	return &s
}()

// pngDot is a 2×2 PNG.
func pngDot() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	for i, c := range []color.RGBA{{255, 0, 0, 255}, {0, 255, 0, 255}, {0, 0, 255, 255}, {255, 255, 255, 255}} {
		img.Set(i%2, i/2, c)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// wavBeep is a tenth of a second of a square wave, as 8 kHz 8-bit mono WAV.
func wavBeep() []byte {
	const rate, n = 8000, 800
	var b bytes.Buffer
	le := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	le(uint32(36 + n))
	b.WriteString("WAVEfmt ")
	le(uint32(16))
	le(uint16(1)) // PCM
	le(uint16(1)) // mono
	le(uint32(rate))
	le(uint32(rate)) // bytes per second
	le(uint16(1))    // block size
	le(uint16(8))    // bits per sample
	b.WriteString("data")
	le(uint32(n))
	for i := range n {
		sample := byte(64)
		if i/10%2 == 0 {
			sample = 192
		}
		b.WriteByte(sample)
	}
	return b.Bytes()
}
