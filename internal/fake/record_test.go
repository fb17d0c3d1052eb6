package fake_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

func TestRecording(t *testing.T) {
	srv := newServer(t)
	srv.Enqueue(fake.Text("ok"), fake.Text("ok"))
	c := srv.Client()
	temp := float32(0.25)
	cfg := &genai.GenerateContentConfig{
		SystemInstruction: genai.NewContentFromText("Be brief.", ""),
		Temperature:       &temp,
		Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{
			Name: "get_weather", Parameters: &genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{"city": {Type: genai.TypeString}}},
		}}}},
		ToolConfig: &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeAny}},
	}
	contents := []*genai.Content{user("Weather in Paris?")}
	if _, err := c.Models.GenerateContent(context.Background(), model, contents, cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := stream(context.Background(), c, "gemini-3-flash-preview", contents, nil); err != nil {
		t.Fatal(err)
	}

	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests; want 2", len(reqs))
	}
	r := reqs[0]
	if r.Seq != 1 || r.Method != fake.MethodGenerateContent || r.Model != model || r.APIVersion != "v1beta" || r.APIKey != fake.APIKey {
		t.Errorf("request = #%d %s %s %s key %q; want #1 generateContent %s v1beta with the key", r.Seq, r.Method, r.Model, r.APIVersion, r.APIKey, model)
	}
	if !strings.HasPrefix(r.Header.Get("User-Agent"), "google-genai-sdk/") || r.Header.Get("X-Goog-Api-Client") == "" {
		t.Errorf("headers %v; want the SDK's User-Agent and X-Goog-Api-Client", r.Header)
	}
	if diff := cmp.Diff(contents, r.Contents); diff != "" {
		t.Errorf("Contents (-sent +recorded):\n%s", diff)
	}
	if diff := cmp.Diff(cfg.Tools, r.Tools); diff != "" {
		t.Errorf("Tools (-sent +recorded):\n%s", diff)
	}
	if diff := cmp.Diff(cfg.ToolConfig, r.ToolConfig); diff != "" {
		t.Errorf("ToolConfig (-sent +recorded):\n%s", diff)
	}
	if r.SystemInstruction.Parts[0].Text != "Be brief." || r.SystemInstruction.Role != genai.RoleUser {
		t.Errorf("SystemInstruction = %+v; want the text with role user", r.SystemInstruction)
	}
	if r.GenerationConfig == nil || *r.GenerationConfig.Temperature != temp {
		t.Errorf("GenerationConfig = %+v; want temperature %v", r.GenerationConfig, temp)
	}
	if !json.Valid(r.Body) || !strings.Contains(string(r.Body), `"temperature":0.25`) {
		t.Errorf("Body = %s; want the raw JSON", r.Body)
	}
	if s := reqs[1]; s.Method != fake.MethodStreamGenerateContent || s.Model != "gemini-3-flash-preview" || s.GenerationConfig != nil {
		t.Errorf("second request = %s %s config %v; want a stream to gemini-3 without config", s.Method, s.Model, s.GenerationConfig)
	}
}

func TestRequestsAreCopies(t *testing.T) {
	srv := newServer(t)
	srv.Enqueue(fake.Text("ok"))
	if _, err := srv.Client().Models.GenerateContent(context.Background(), model, []*genai.Content{user("original")}, nil); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	r.Contents[0].Parts[0].Text = "changed"
	r.Header.Set("User-Agent", "changed")
	r.Body[0] = 'X'
	r.Model = "changed"
	again := srv.LastRequest()
	if again.Contents[0].Parts[0].Text != "original" || again.Header.Get("User-Agent") == "changed" || again.Body[0] != '{' || again.Model != model {
		t.Errorf("the server's record changed with the returned copy: %+v", again)
	}
}

func TestRejectedRequestsAreRecorded(t *testing.T) {
	srv := newServer(t)
	if srv.LastRequest() != nil {
		t.Error("LastRequest() before any request is not nil")
	}
	code, _ := post(t, srv, http.MethodPost, "/v1beta/models/m:generateContent", fake.APIKey, `{"contents": [`)
	if code != http.StatusBadRequest {
		t.Fatalf("status %d; want 400", code)
	}
	_, err := srv.Client().Models.GenerateContent(context.Background(), model, []*genai.Content{user("hi"), user("")}, nil)
	if asAPIError(t, err).Code != http.StatusBadRequest {
		t.Fatalf("error %v; want 400", err)
	}
	reqs := srv.Requests()
	if r := reqs[0]; r.Rejection == nil || r.Rejection.Rule != "json-syntax" || r.Contents != nil || string(r.Body) != `{"contents": [` {
		t.Errorf("malformed request recorded as %+v; want its body, rule json-syntax and no contents", r)
	}
	if r := reqs[1]; r.Rejection == nil || r.Rejection.Rule != "part-data" || len(r.Contents) != 2 {
		t.Errorf("request with an empty part recorded as %+v; want rule part-data and its contents", r)
	}
	rej := srv.Rejections()
	if len(rej) != 2 || rej[1].Seq != 2 || rej[1].Err.Code != http.StatusBadRequest {
		t.Fatalf("Rejections() = %+v; want 2", rej)
	}
	rej[1].Err.Message = "changed"
	if srv.Rejections()[1].Err.Message == "changed" {
		t.Error("Rejections() returned the server's own record")
	}
}
