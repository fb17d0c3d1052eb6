package geminiadapter_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/geminiadapter"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

func TestResponseMedia(t *testing.T) {
	call := &genai.FunctionCall{ID: "fc-1", Name: "screenshot"}
	r := toolset.Result{Output: "the login page", Media: []toolset.Media{
		{MIMEType: "image/png", Data: []byte("\x89PNG")},
		{MIMEType: "audio/wav", Data: []byte("RIFF")},
	}}
	got := geminiadapter.Response(call, r)
	want := &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: "fc-1", Name: "screenshot",
		Response: map[string]any{"result": "the login page"},
		Parts: []*genai.FunctionResponsePart{
			{InlineData: &genai.FunctionResponseBlob{MIMEType: "image/png", Data: []byte("\x89PNG")}},
			{InlineData: &genai.FunctionResponseBlob{MIMEType: "audio/wav", Data: []byte("RIFF")}},
		}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Response() mismatch (-want +got):\n%s", diff)
	}
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	const wantJSON = `{"functionResponse":{"parts":[{"inlineData":{"mimeType":"image/png","data":"iVBORw=="}},` +
		`{"inlineData":{"mimeType":"audio/wav","data":"UklGRg=="}}],"id":"fc-1","name":"screenshot","response":{"result":"the login page"}}}`
	if string(b) != wantJSON {
		t.Errorf("Response() JSON = %s\nwant %s", b, wantJSON)
	}
	ref := geminiadapter.Response(call, toolset.Result{Media: []toolset.Media{{MIMEType: "image/png", URI: "artifact:chart.png?version=2", Name: "chart.png"}}})
	if b, _ := json.Marshal(ref); string(b) != `{"functionResponse":{"parts":[{"fileData":{"fileUri":"artifact:chart.png?version=2","mimeType":"image/png"}}],"id":"fc-1","name":"screenshot","response":{"result":null}}}` {
		t.Errorf("Response() of a medium named by a URI = %s; want a fileData part", b)
	}
	if parts := geminiadapter.Response(call, toolset.Result{Output: "x"}).FunctionResponse.Parts; parts != nil {
		t.Errorf("Response() without media has Parts %v; want nil", parts)
	}
}

func TestMediaInResponses(t *testing.T) {
	for model, want := range map[string]bool{
		"gemini-3-flash-preview":                    true,
		"gemini-3.1-pro-preview":                    true,
		"gemini-3":                                  true,
		"models/gemini-3-pro-preview":               true,
		"publishers/google/models/gemini-3.5-flash": true,
		"gemini-3.5-flash":                          true,
		"gemini-4-ultra":                            true,
		"gemini-10-flash":                           true,
		"gemini-2.5-flash":                          false,
		"gemini-2.0-flash-001":                      false,
		"gemini-1.5-pro":                            false,
		"gemini-30x":                                false,
		"gemini-flash-latest":                       false,
		"tunedModels/my-gemini-3-model":             false,
		"":                                          false,
	} {
		if got := geminiadapter.MediaInResponses(model); got != want {
			t.Errorf("MediaInResponses(%q) = %t, want %t", model, got, want)
		}
	}
}

func TestDescribeMedia(t *testing.T) {
	png := toolset.Media{MIMEType: "image/png", Data: make([]byte, 48213)}
	wav := toolset.Media{MIMEType: "audio/wav", Data: make([]byte, 1200)}
	const desc = "[media not shown, this model cannot receive media from tools: image/png, 48213 bytes; audio/wav, 1200 bytes]"
	for _, tc := range []struct {
		name string
		in   toolset.Result
		want toolset.Result
	}{
		{"no output", toolset.Result{Media: []toolset.Media{png, wav}}, toolset.Result{Output: desc}},
		{"empty text", toolset.Result{Output: "", Media: []toolset.Media{png, wav}}, toolset.Result{Output: desc}},
		{"text", toolset.Result{Output: "the chart", Media: []toolset.Media{png, wav}}, toolset.Result{Output: "the chart\n" + desc}},
		{"object", toolset.Result{Output: map[string]any{"rows": 3.0}, Media: []toolset.Media{png, wav}},
			toolset.Result{Output: map[string]any{"output": map[string]any{"rows": 3.0}, "media": desc}}},
		{"error", toolset.Result{Output: "partly failed", IsError: true, Media: []toolset.Media{png, wav}},
			toolset.Result{Output: "partly failed\n" + desc, IsError: true}},
		{"no media", toolset.Result{Output: 1.0}, toolset.Result{Output: 1.0}},
		{"by reference", toolset.Result{Media: []toolset.Media{{MIMEType: "image/png", URI: "artifact:c.png?version=1", Name: "c.png"}, {MIMEType: "text/csv", URI: "artifact:d.csv?version=1"}}},
			toolset.Result{Output: `[media not shown, this model cannot receive media from tools: image/png, the file "c.png"; text/csv, artifact:d.csv?version=1]`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, geminiadapter.DescribeMedia(tc.in)); diff != "" {
				t.Errorf("DescribeMedia() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
