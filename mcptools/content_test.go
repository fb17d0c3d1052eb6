package mcptools_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolnexus/toolnexus-go/mcptools"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// Output for every kind of content a server can send.
func TestOutput(t *testing.T) {
	png := toolset.Media{MIMEType: "image/png", Data: pngData}
	for _, tc := range []struct {
		name    string
		res     *mcp.CallToolResult
		want    any
		wantErr string
	}{
		{"nil", nil, "", ""},
		{"no content", &mcp.CallToolResult{}, "", ""},
		{"empty text is a success", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{}}}, "", ""},
		{"texts", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "one"}, &mcp.TextContent{Text: "two"}}},
			"one\ntwo", ""},
		{"structured wins over text", &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: `{"n":1}`}},
			StructuredContent: map[string]any{"n": 1.0}},
			map[string]any{"n": 1.0}, ""},
		{"structured array", &mcp.CallToolResult{StructuredContent: []any{1.0, 2.0}}, []any{1.0, 2.0}, ""},
		{"image", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a dot"}, &mcp.ImageContent{MIMEType: "image/png", Data: pngData}}},
			toolset.MediaOutput{Output: "a dot", Media: []toolset.Media{png}}, ""},
		{"audio", &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{MIMEType: "audio/wav", Data: wavData}}},
			toolset.MediaOutput{Output: "", Media: []toolset.Media{{MIMEType: "audio/wav", Data: wavData}}}, ""},
		{"image with structured content", &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.ImageContent{MIMEType: "image/png", Data: pngData}},
			StructuredContent: map[string]any{"w": 2.0}},
			toolset.MediaOutput{Output: map[string]any{"w": 2.0}, Media: []toolset.Media{png}}, ""},
		{"image without a type or data", &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.ImageContent{Data: pngData}, &mcp.AudioContent{MIMEType: "audio/wav"}}},
			"[image: 13 bytes of an unknown type, not shown]\n[audio: 0 bytes of audio/wav, not shown]", ""},
		{"embedded text resource", &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
			URI: "file:///src/main.go", MIMEType: "text/x-go", Text: "package main\n"}}}},
			"[resource file:///src/main.go]\npackage main\n", ""},
		{"embedded text blob", &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
			URI: "file:///notes.txt", MIMEType: "text/plain", Blob: []byte("hello")}}}},
			"[resource file:///notes.txt]\nhello", ""},
		{"embedded image", &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
			URI: "file:///a.png", MIMEType: "image/png", Blob: pngData}}}},
			toolset.MediaOutput{Output: "", Media: []toolset.Media{png}}, ""},
		{"embedded pdf", &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
			URI: "file:///a.pdf", MIMEType: "application/pdf", Blob: pdfData}}}},
			toolset.MediaOutput{Output: "", Media: []toolset.Media{{MIMEType: "application/pdf", Data: pdfData}}}, ""},
		{"embedded binary", &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
			URI: "file:///a.zip", MIMEType: "application/zip", Blob: []byte("PK\x03\x04")}}}},
			"[resource file:///a.zip: 4 bytes of application/zip, not shown]", ""},
		{"embedded nothing", &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{}}}, "", ""},
		{"resource link", &mcp.CallToolResult{Content: []mcp.Content{&mcp.ResourceLink{
			URI: "https://example.com/r/1", Name: "r1", MIMEType: "text/csv", Description: "rows"}}},
			"[resource link https://example.com/r/1; name: r1; type: text/csv; description: rows]", ""},
		{"error text", &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "rate limited"}}},
			nil, "rate limited"},
		{"error without text", &mcp.CallToolResult{IsError: true}, nil, "the tool failed and gave no reason"},
		{"structured with other text", &mcp.CallToolResult{
			Content: []mcp.Content{
				&mcp.TextContent{Text: "3 rows; the full table is linked below"},
				&mcp.TextContent{Text: `{"rows": 3}`}, // the structured content again
				&mcp.ResourceLink{URI: "https://example.com/t.csv", Name: "t.csv"}},
			StructuredContent: map[string]any{"rows": 3.0}},
			map[string]any{
				"structuredContent": map[string]any{"rows": 3.0},
				"text":              "3 rows; the full table is linked below\n[resource link https://example.com/t.csv; name: t.csv]",
			}, ""},
		{"structured with a resource link only", &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.ResourceLink{URI: "file:///report.pdf"}},
			StructuredContent: map[string]any{"pages": 2.0}},
			map[string]any{"structuredContent": map[string]any{"pages": 2.0}, "text": "[resource link file:///report.pdf]"}, ""},
		{"structured string repeated as text", &mcp.CallToolResult{
			Content: []mcp.Content{&mcp.TextContent{Text: `"ok"`}}, StructuredContent: "ok"}, "ok", ""},
		{"error with only structured content", &mcp.CallToolResult{IsError: true,
			StructuredContent: map[string]any{"error": "quota exceeded", "retryAfter": 30.0}},
			nil, `{"error":"quota exceeded","retryAfter":30}`},
		{"error with text and structured content", &mcp.CallToolResult{IsError: true,
			Content:           []mcp.Content{&mcp.TextContent{Text: "quota exceeded"}},
			StructuredContent: map[string]any{"retryAfter": 30.0}},
			nil, "quota exceeded\n{\"retryAfter\":30}"},
		{"error whose text is its structured content", &mcp.CallToolResult{IsError: true,
			Content:           []mcp.Content{&mcp.TextContent{Text: `{"code": 7}`}},
			StructuredContent: map[string]any{"code": 7.0}},
			nil, `{"code":7}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mcptools.Output(tc.res)
			if tc.wantErr != "" {
				var te *mcptools.ToolError
				if !errors.As(err, &te) || te.Message != tc.wantErr {
					t.Fatalf("Output() error = %v; want a ToolError %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Output() error = %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Output() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
