// The client command is mcptools' client as the MCP conformance suite
// tests one:
//
//	go run ./mcptools/internal/conformance/client URL
//
// The suite starts it with the URL of a server it plays, the scenario's
// name in MCP_CONFORMANCE_SCENARIO and, for some scenarios, a JSON object
// in MCP_CONFORMANCE_CONTEXT. It connects with mcptools.Connect over
// mcptools.NewHTTP, logging in with an mcptools.Login when the server asks
// for OAuth, and calls the tools the scenario expects through the toolset
// tools the client makes, as an agent would. The user's browser is played
// by an HTTP client that follows the authorization URL, which the suite's
// authorization server redirects at once to the login's loopback port.
// It exits non-zero when a step fails.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/toolnexus/toolnexus-go/mcptools"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// scenarioTimeout bounds one scenario, within the 2 minutes that
// conformance_test.go gives the suite's scenarios.
const scenarioTimeout = 100 * time.Second

// clientIDMetadataURL is the client ID metadata document the suite's
// authorization servers accept as a client ID (auth/basic-cimd).
const clientIDMetadataURL = "https://conformance-test.local/client-metadata.json"

// A call is a tool call a scenario expects.
type call struct {
	name string
	args map[string]any
}

// calls are the tool calls of each scenario, after the connection and the
// listing every scenario makes. Every auth/ scenario calls test-tool.
var calls = map[string][]call{
	"initialize":                          nil,
	"tools_call":                          {{"add_numbers", map[string]any{"a": 5, "b": 3}}},
	"sse-retry":                           {{"test_reconnection", map[string]any{}}},
	"elicitation-sep1034-client-defaults": {{"test_client_elicitation_defaults", map[string]any{}}},
	// 2026-07-28: the version and capabilities in each request's _meta,
	// and a schema's network $ref never fetched, are seen on the
	// connection and the listing.
	"request-metadata":         nil,
	"json-schema-ref-no-deref": nil,
}

// tolerant are the scenarios whose calls may fail as the scenario means
// them to (a server that answers wrongly, a tool the client must not
// call): their failures are logged, not fatal. Their calls are made by
// callsFor.
var tolerant = map[string]bool{
	"sep-2322-client-request-state":    true,
	"http-standard-headers":            true,
	"http-custom-headers":              true,
	"http-invalid-tool-headers":        true,
	"json-schema-2020-12-preservation": true,
}

// callsFor returns the calls of a tolerant scenario, given the tools
// listed and the scenario's context.
func callsFor(scenario string, set *toolset.Set, config map[string]any) []call {
	switch scenario {
	case "sep-2322-client-request-state":
		// The server asks through input_required results; the client
		// answers and echoes requestState (go-sdk's multi-round trips).
		var cs []call
		for _, name := range []string{"test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type"} {
			cs = append(cs, call{name, map[string]any{}})
		}
		return cs
	case "http-standard-headers":
		if tools := set.Tools(); len(tools) > 0 {
			return []call{{tools[0].Name, map[string]any{}}}
		}
	case "http-custom-headers":
		var cs []call
		raw, _ := config["toolCalls"].([]any)
		for _, item := range raw {
			obj, _ := item.(map[string]any)
			name, _ := obj["name"].(string)
			args, _ := obj["arguments"].(map[string]any)
			cs = append(cs, call{name, args})
		}
		return cs
	case "http-invalid-tool-headers":
		// The tools whose x-mcp-header is invalid are not listed; the
		// others are called.
		var cs []call
		for _, t := range set.Tools() {
			cs = append(cs, call{t.Name, map[string]any{"region": "us-west1"}})
		}
		return cs
	case "json-schema-2020-12-preservation":
		// The schema of the focal tool, as the client keeps it, is
		// echoed back for the suite to see which keywords survived.
		if t, ok := set.Lookup("json_schema_2020_12_tool"); ok {
			b, _ := json.Marshal(t.Schema())
			var schema map[string]any
			_ = json.Unmarshal(b, &schema)
			return []call{{"json_schema_echo", map[string]any{"schema": schema}}}
		}
	}
	return nil
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("conformance client: ")
	if len(os.Args) != 2 {
		log.Fatal("usage: client URL (with MCP_CONFORMANCE_SCENARIO set)")
	}
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	var config map[string]any
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &config); err != nil {
			log.Fatalf("MCP_CONFORMANCE_CONTEXT: %v", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), scenarioTimeout)
	defer cancel()
	if err := run(ctx, os.Args[1], scenario, config); err != nil {
		log.Fatalf("scenario %q: %v", scenario, err)
	}
}

// run plays scenario against the server at url.
func run(ctx context.Context, url, scenario string, config map[string]any) error {
	want, ok := calls[scenario]
	if strings.HasPrefix(scenario, "auth/") {
		want, ok = []call{{"test-tool", map[string]any{}}}, true
	}
	ok = ok || tolerant[scenario]
	if !ok {
		return fmt.Errorf("unknown scenario")
	}
	login, err := mcptools.NewLogin(url, &mcptools.LoginOptions{
		Open:                browse,
		Timeout:             scenarioTimeout,
		ClientName:          "toolnexus-go conformance client",
		ClientIDMetadataURL: clientIDMetadataURL,
		Client:              preregistered(config),
		Logger:              slog.New(slog.NewTextHandler(os.Stderr, nil)),
	})
	if err != nil {
		return err
	}
	c, err := mcptools.Connect(ctx, mcptools.NewHTTP(url, &mcptools.HTTPOptions{OAuth: login}), &mcptools.Options{
		ClientOptions: &mcp.ClientOptions{ElicitationHandler: accept},
	})
	if err != nil {
		return err
	}
	defer c.Close()
	set, err := toolset.New(c.Tools()...)
	if err != nil {
		return err
	}
	if tolerant[scenario] {
		for _, cl := range callsFor(scenario, set, config) {
			if t, ok := set.Lookup(cl.name); !ok {
				log.Printf("the server has no tool %s", cl.name)
			} else if r := t.Execute(ctx, cl.args); r.IsError {
				log.Printf("calling %s (as the scenario may mean): %v", cl.name, r.Output)
			}
		}
		return nil
	}
	for _, cl := range want {
		t, ok := set.Lookup(cl.name)
		if !ok {
			return fmt.Errorf("the server has no tool %s", cl.name)
		}
		if r := t.Execute(ctx, cl.args); r.IsError {
			return fmt.Errorf("calling %s: %v", cl.name, r.Output)
		}
	}
	return nil
}

// accept plays the user asked for input by the server: they accept and
// fill in nothing, so that the client applies the schema's defaults
// (elicitation-sep1034-client-defaults).
func accept(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	if os.Getenv("MCP_CONFORMANCE_SCENARIO") == "sep-2322-client-request-state" {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirmed": true}}, nil
	}
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
}

// preregistered is the client the scenario registered beforehand, if its
// context gives one (auth/pre-registration).
func preregistered(config map[string]any) *oauthex.ClientCredentials {
	id, _ := config["client_id"].(string)
	if id == "" {
		return nil
	}
	c := &oauthex.ClientCredentials{ClientID: id}
	if secret, _ := config["client_secret"].(string); secret != "" {
		c.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: secret}
	}
	return c
}

// browse plays the user's browser: it follows the authorization URL, and
// the redirects, to the login's loopback port.
func browse(ctx context.Context, authURL string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("the browser: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.Request.URL.Hostname() != "127.0.0.1" {
		// The authorization server did not send the browser back.
		return fmt.Errorf("the browser: %s answered %s", resp.Request.URL.Host, resp.Status)
	}
	return nil
}
