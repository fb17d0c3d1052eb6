package agent_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// plotTool returns a chart as an image, with a caption as its output.
func plotTool() *toolset.Tool {
	return tool("plot", func(context.Context, map[string]any) (any, error) {
		return toolset.MediaOutput{Output: "sales by month", Media: []toolset.Media{{MIMEType: "image/png", Data: []byte("\x89PNG\r\n\x1a\n")}}}, nil
	})
}

func TestMediaResponses(t *testing.T) {
	for _, tc := range []struct {
		model     string
		wantParts bool
	}{
		{model3, true},
		{"gemini-3.1-pro-preview", true},
		{model, false},
		{"gemini-2.0-flash", false},
	} {
		t.Run(tc.model, func(t *testing.T) {
			srv := newServer(t) // fails the test on any rejected request
			srv.Enqueue(fake.Calls(fake.Call("plot", nil)), fake.Text("A rising line."))
			a := newAgent(t, srv, toolset.MustNew(plotTool()), func(c *agent.Config) { c.Model = tc.model })
			res, err := a.Run(context.Background(), user("plot the sales"))
			if err != nil {
				t.Fatalf("Run() = %v", err)
			}
			fr := lastResponses(t, srv)[0]
			if tc.wantParts {
				if len(fr.Parts) != 1 || fr.Parts[0].InlineData == nil || fr.Parts[0].InlineData.MIMEType != "image/png" ||
					!bytes.Equal(fr.Parts[0].InlineData.Data, []byte("\x89PNG\r\n\x1a\n")) {
					t.Errorf("function response parts = %+v; want the PNG", fr.Parts)
				}
				if fr.Response["result"] != "sales by month" {
					t.Errorf("response = %v; want the caption as result", fr.Response)
				}
			} else {
				if len(fr.Parts) != 0 {
					t.Errorf("function response has %d parts; want none for %s", len(fr.Parts), tc.model)
				}
				want := "sales by month\n[media not shown, this model cannot receive media from tools: image/png, 8 bytes]"
				if fr.Response["result"] != want {
					t.Errorf("response = %v; want result %q", fr.Response, want)
				}
			}
			// The run's own record keeps the media, whatever the model.
			if got := res.Turns[0].Results[0].Media; len(got) != 1 {
				t.Errorf("Turns[0].Results[0].Media = %v; want the PNG", got)
			}
		})
	}
}

// The fake refuses media in a function response for a model before Gemini
// 3, as the API does: what mediaFor protects the loop from.
func TestFakeRefusesMediaBeforeGemini3(t *testing.T) {
	srv := fake.NewServer()
	defer srv.Close()
	srv.Enqueue(fake.Text("unused"))
	call := &genai.FunctionCall{Name: "plot"}
	contents := []*genai.Content{
		genai.NewContentFromText("plot the sales", genai.RoleUser),
		{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: call}}},
		{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{Name: "plot",
			Response: map[string]any{"result": "chart"},
			Parts:    []*genai.FunctionResponsePart{genai.NewFunctionResponsePartFromBytes([]byte("png"), "image/png")}}}}},
	}
	config := &genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{Name: "plot"}}}}}
	_, err := srv.Client().Models.GenerateContent(context.Background(), model, contents, config)
	var apiErr genai.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != 400 || !strings.Contains(apiErr.Message, "`function_response.parts` is not supported for this model") {
		t.Fatalf("GenerateContent() = %v; want the 400 refusing function_response.parts", err)
	}
	if rj := srv.Rejections(); len(rj) != 1 || rj[0].Rule != "function-response-parts" {
		t.Errorf("Rejections() = %+v; want one by function-response-parts", rj)
	}
}
