package main

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolnexus/toolnexus-go/mcptools"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// askingWeather is an MCP server whose get_weather asks the user which
// unit they want (mcptools.Elicit) before it answers.
func askingWeather() *toolset.Set {
	return toolset.MustNew(toolset.MustDefine(toolset.Tool{Name: "get_weather", Description: "The weather in a city, in the user's unit",
		InputSchema: &jsonschema.Schema{Type: "object", Required: []string{"city"},
			Properties: map[string]*jsonschema.Schema{"city": {Type: "string"}}},
		Run: func(ctx context.Context, args map[string]any) (any, error) {
			res, err := mcptools.Elicit(ctx, "unit", &mcp.ElicitParams{Message: "Which unit?",
				RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
					"unit": {Type: "string", Description: "celsius or fahrenheit"}}}})
			if err != nil {
				return nil, err
			}
			if res.Action != "accept" {
				return map[string]any{"city": args["city"], "unit": "none: the user " + res.Action + "d"}, nil
			}
			return map[string]any{"city": args["city"], "unit": res.Content["unit"]}, nil
		}}))
}

// An MCP server's question reaches the chat's user, who answers it on the
// next line, whether the server asks through its result (2026-07-28) or
// with a request of its own (2025-11-25); no answer declines.
func TestMCPElicitation(t *testing.T) {
	for _, tc := range []struct {
		name, versions, answer, want string
	}{
		{"2026-07-28", "", "celsius", `"unit":"celsius"`},
		{"2025-11-25", "2025-11-25", "fahrenheit", `"unit":"fahrenheit"`},
		{"declined", "", "", `"unit":"none: the user declined"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var opts *mcptools.HandlerOptions
			if tc.versions != "" {
				opts = &mcptools.HandlerOptions{ProtocolVersions: []string{tc.versions}}
			}
			ts := httptest.NewServer(mcptools.NewHTTPHandler(askingWeather(), nil, opts))
			defer ts.Close()
			out := chatOutput(t, options{mcpHTTP: []string{"demo=" + ts.URL}, loginFile: filepath.Join(t.TempDir(), "logins.json")},
				"What is the weather in Paris?\n"+tc.answer+"\n")
			for _, want := range []string{"an MCP server asks: Which unit?", "  unit (celsius or fahrenheit): " + tc.answer + "\n", tc.want} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
		})
	}
}
