package mcptools_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/mcptools"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// newFake starts a fake Gemini server that fails the test if it rejects
// any request.
func newFake(t *testing.T) *fake.Server {
	t.Helper()
	srv := fake.NewServer()
	t.Cleanup(func() {
		for _, rj := range srv.Rejections() {
			t.Errorf("the fake rejected request #%d (rule %s): %s", rj.Seq, rj.Rule, rj.Err.Message)
		}
		srv.Close()
	})
	return srv
}

// lastResponse returns the first function response of the last request.
func lastResponse(t *testing.T, srv *fake.Server) *genai.FunctionResponse {
	t.Helper()
	req := srv.LastRequest()
	for _, p := range req.Contents[len(req.Contents)-1].Parts {
		if p.FunctionResponse != nil {
			return p.FunctionResponse
		}
	}
	t.Fatal("the last request answers no function call")
	return nil
}

// The agent loop with a native tool and an MCP server's tools side by side,
// against the real genai client and the fake API.
func TestAgentWithMCPTools(t *testing.T) {
	c := connect(t, mcptools.InMemory(mcptools.NewServer(demoSet(), nil)), &mcptools.Options{Prefix: "mcp_"})
	native := toolset.MustFunc("add", "Add two numbers", func(_ context.Context, in struct {
		A float64 `json:"a"`
		B float64 `json:"b"`
	}) (float64, error) {
		return in.A + in.B, nil
	})
	set := toolset.MustNew(append([]*toolset.Tool{native}, c.Tools()...)...)
	srv := newFake(t)
	srv.Enqueue(
		fake.Calls(fake.Call("mcp_get_weather", map[string]any{"city": "Oslo"}), fake.Call("add", map[string]any{"a": 2, "b": 3})),
		fake.Text("Oslo is 14°C; 2+3=5."),
	)
	res, err := agent.Run(t.Context(), agent.Config{Models: srv.Client().Models, Model: "gemini-3-flash-preview", Tools: set},
		[]*genai.Content{genai.NewContentFromText("weather in Oslo, and 2+3?", genai.RoleUser)})
	if err != nil {
		t.Fatalf("Run() = %v", err)
	}
	if res.Text != "Oslo is 14°C; 2+3=5." {
		t.Errorf("Text = %q", res.Text)
	}
	first := srv.Requests()[0]
	var declared []string
	for _, d := range first.Tools[0].FunctionDeclarations {
		declared = append(declared, d.Name)
	}
	if len(declared) != 4 || declared[0] != "add" || declared[3] != "mcp_get_weather" {
		t.Errorf("declared %v; want add and the three MCP tools", declared)
	}
	got := lastResponse(t, srv)
	if w, ok := got.Response["result"].(map[string]any); !ok || w["city"] != "Oslo" || w["temp_c"] != 14.0 {
		t.Errorf("the MCP tool's response = %v", got.Response)
	}
}

// Images and audio from an MCP server reach a Gemini 3 model as media in
// the function response, and an older model as a description; the fake
// refuses media parts for the older one, so this also shows the loop never
// sends them there.
func TestAgentMCPMedia(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "camera", Version: "v1"}, nil)
	type none struct{}
	mcp.AddTool(srv, &mcp.Tool{Name: "snapshot", Description: "Take a picture and record a sound"},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "the front door"},
				&mcp.ImageContent{MIMEType: "image/png", Data: pngData},
				&mcp.AudioContent{MIMEType: "audio/wav", Data: wavData},
			}}, nil, nil
		})
	c := connect(t, mcptools.InMemory(srv), nil)
	set := toolset.MustNew(c.Tools()...)
	for _, tc := range []struct {
		model string
		media bool
	}{
		{"gemini-3-flash-preview", true},
		{"gemini-2.5-flash", false},
	} {
		t.Run(tc.model, func(t *testing.T) {
			gemini := newFake(t)
			gemini.Enqueue(fake.Calls(fake.Call("snapshot", nil)), fake.Text("A closed door."))
			_, err := agent.Run(t.Context(), agent.Config{Models: gemini.Client().Models, Model: tc.model, Tools: set},
				[]*genai.Content{genai.NewContentFromText("who is at the door?", genai.RoleUser)})
			if err != nil {
				t.Fatalf("Run() = %v", err)
			}
			fr := lastResponse(t, gemini)
			if !tc.media {
				want := "the front door\n[media not shown, this model cannot receive media from tools: image/png, 13 bytes; audio/wav, 16 bytes]"
				if len(fr.Parts) != 0 || fr.Response["result"] != want {
					t.Errorf("function response = %+v, %d parts; want result %q and no parts", fr.Response, len(fr.Parts), want)
				}
				return
			}
			if fr.Response["result"] != "the front door" || len(fr.Parts) != 2 ||
				fr.Parts[0].InlineData.MIMEType != "image/png" || !bytes.Equal(fr.Parts[0].InlineData.Data, pngData) ||
				fr.Parts[1].InlineData.MIMEType != "audio/wav" || !bytes.Equal(fr.Parts[1].InlineData.Data, wavData) {
				t.Errorf("function response = %+v with parts %+v; want the text, the PNG and the WAV", fr.Response, fr.Parts)
			}
		})
	}
}
