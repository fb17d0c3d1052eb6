package fake_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

func TestVertexClient(t *testing.T) {
	srv := newServer(t)
	created := time.Date(2026, 3, 12, 18, 5, 57, 737661000, time.UTC)
	srv.SetTimeNowFunc(func() time.Time { return created })
	srv.Enqueue(fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"})), fake.Text("Sunny.").WithTextChunk(3))
	c := srv.VertexClient()
	ctx := context.Background()
	const gemini3 = "gemini-3-flash-preview"

	resp, err := c.Models.GenerateContent(ctx, gemini3, []*genai.Content{user("Weather?")}, nil)
	if err != nil {
		t.Fatalf("GenerateContent: %v", err)
	}
	req := srv.LastRequest()
	if req.Backend != genai.BackendVertexAI || req.APIVersion != "v1beta1" || req.Project != fake.VertexProject ||
		req.Location != fake.VertexLocation || req.Model != gemini3 || req.Token != fake.AccessToken || req.APIKey != "" {
		t.Errorf("request = %+v; want Vertex AI v1beta1 %s/%s, model %s, bearer %s, no key",
			req, fake.VertexProject, fake.VertexLocation, gemini3, fake.AccessToken)
	}
	call := resp.FunctionCalls()
	cand := resp.Candidates[0]
	// Vertex AI sends Gemini 3's function-call ids (since mid-2026), no
	// finishMessage, a createTime and a trafficType (see fill.go).
	if len(call) != 1 || call[0].ID == "" || len(cand.Content.Parts[0].ThoughtSignature) == 0 || cand.FinishMessage != "" {
		t.Errorf("call %+v, signature %q, finishMessage %q; want one call with an id and a signature, no finishMessage",
			call, cand.Content.Parts[0].ThoughtSignature, cand.FinishMessage)
	}
	if !resp.CreateTime.Equal(created) || resp.UsageMetadata.TrafficType != genai.TrafficTypeOnDemand ||
		len(resp.UsageMetadata.CandidatesTokensDetails) != 1 {
		t.Errorf("createTime %v, usage %+v; want %v, ON_DEMAND and candidatesTokensDetails", resp.CreateTime, resp.UsageMetadata, created)
	}

	history := []*genai.Content{user("Weather?"), cand.Content,
		{Role: genai.RoleUser, Parts: []*genai.Part{genai.NewPartFromFunctionResponse("get_weather", map[string]any{"result": "sunny"})}}}
	var chunks []*genai.GenerateContentResponse
	for chunk, err := range c.Models.GenerateContentStream(ctx, gemini3, history, nil) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		chunks = append(chunks, chunk)
	}
	if len(chunks) != 2 || chunks[0].UsageMetadata.TotalTokenCount != 0 || chunks[0].UsageMetadata.TrafficType != genai.TrafficTypeOnDemand ||
		chunks[1].UsageMetadata.TotalTokenCount == 0 || !chunks[1].CreateTime.Equal(created) {
		t.Errorf("chunks %d, usage %+v then %+v; want 2, the first with only the trafficType", len(chunks), chunks[0].UsageMetadata, chunks[len(chunks)-1].UsageMetadata)
	}
	if rej := srv.Rejections(); len(rej) != 0 {
		t.Errorf("Rejections() = %+v; want none", rej)
	}
}

// The raw JSON Vertex AI answers: no candidate index, a createTime.
func TestVertexResponseJSON(t *testing.T) {
	srv := newServer(t)
	srv.SetTimeNowFunc(func() time.Time { return time.Date(2026, 3, 12, 18, 5, 57, 737661000, time.UTC) })
	body := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`
	srv.Enqueue(fake.Text("Hi."))
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/projects/p/locations/europe-west4/publishers/google/models/gemini-2.5-flash:generateContent", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer t")
	r, err := srv.ClientConfig().HTTPClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var raw map[string]any
	if err := json.NewDecoder(r.Body).Decode(&raw); err != nil {
		t.Fatal(err)
	}
	cand := raw["candidates"].([]any)[0].(map[string]any)
	if _, hasIndex := cand["index"]; hasIndex || raw["createTime"] != "2026-03-12T18:05:57.737661Z" {
		t.Errorf("response %v; want no index and createTime 2026-03-12T18:05:57.737661Z", raw)
	}
	if got := srv.LastRequest(); got.APIVersion != "v1" || got.Location != "europe-west4" {
		t.Errorf("request version %q location %q; want v1, europe-west4", got.APIVersion, got.Location)
	}
}

func TestVertexExpressMode(t *testing.T) {
	srv := newServer(t)
	srv.Enqueue(fake.Text("ok"))
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{Backend: genai.BackendVertexAI, APIKey: "express-key",
		HTTPClient: srv.ClientConfig().HTTPClient, HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Models.GenerateContent(context.Background(), "gemini-2.5-flash", []*genai.Content{user("hi")}, nil); err != nil {
		t.Fatal(err)
	}
	if req := srv.LastRequest(); req.Backend != genai.BackendVertexAI || req.Project != "" || req.APIKey != "express-key" {
		t.Errorf("request = %+v; want Vertex AI express mode with the key", req)
	}
}

func TestVertexAuth(t *testing.T) {
	srv := newServer(t)
	const path = "/v1beta1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent"
	body := `{"contents":[{"parts":[{"text":"hi"}]}]}`
	code, b := post(t, srv, http.MethodPost, path, "", body)
	ae := apiErrorBody(t, b)
	if code != http.StatusUnauthorized || ae.Status != "UNAUTHENTICATED" ||
		!strings.HasPrefix(ae.Message, "Request is missing required authentication credential.") ||
		len(ae.Details) != 1 || ae.Details[0]["reason"] != "CREDENTIALS_MISSING" {
		t.Errorf("no credentials: %d %+v; want 401 UNAUTHENTICATED with a CREDENTIALS_MISSING ErrorInfo", code, ae)
	}
	code, b = post(t, srv, http.MethodPost, path, "some-key", body)
	if ae := apiErrorBody(t, b); code != http.StatusUnauthorized || !strings.HasPrefix(ae.Message, "API keys are not supported by this API.") {
		t.Errorf("API key on a project route: %d %+v; want 401 naming API keys", code, ae)
	}
	if rej := srv.Rejections(); len(rej) != 2 || rej[0].Rule != "auth" {
		t.Errorf("Rejections() = %+v; want two by rule auth", rej)
	}
}

// Vertex AI takes function-call ids back, as the real one does since 2026
// (fields.go); genai sends the ids it is given.
func TestVertexAcceptsFunctionCallIDs(t *testing.T) {
	srv := newServer(t)
	srv.Enqueue(fake.Text("ok"), fake.Text("ok"))
	call := &genai.FunctionCall{ID: "call-1", Name: "f"}
	resp := genai.NewPartFromFunctionResponse("f", map[string]any{})
	resp.FunctionResponse.ID = "call-1"
	history := []*genai.Content{user("hi"), {Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: call}}},
		{Role: genai.RoleUser, Parts: []*genai.Part{resp}}}
	for name, c := range map[string]*genai.Client{"Vertex AI": srv.VertexClient(), "the Gemini API": srv.Client()} {
		if _, err := c.Models.GenerateContent(context.Background(), "gemini-2.5-flash", history, nil); err != nil {
			t.Errorf("history with function-call ids on %s: %v; want accepted", name, err)
		}
	}
	for _, r := range srv.Requests() {
		if got := r.Contents[2].Parts[0].FunctionResponse.ID; got != "call-1" {
			t.Errorf("request #%d (%v) carried response id %q; want call-1", r.Seq, r.Backend, got)
		}
	}
}

// Response fidelity on the Gemini API: a function-call turn finishes with a
// finishMessage, and a requested service tier is echoed.
func TestGeminiResponseFidelity(t *testing.T) {
	srv := newServer(t)
	srv.Enqueue(fake.Text("ok"))
	c := srv.Client()
	cfg := &genai.GenerateContentConfig{ServiceTier: genai.ServiceTierPriority}
	resp, err := c.Models.GenerateContent(context.Background(), model, []*genai.Content{user("hi")}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if h := resp.SDKHTTPResponse.Headers.Get("X-Gemini-Service-Tier"); h != "priority" {
		t.Errorf("x-gemini-service-tier = %q; want priority", h)
	}

	srv.Enqueue(fake.Calls(fake.Call("f", nil)))
	code, b := post(t, srv, http.MethodPost, "/v1beta/models/gemini-2.5-flash:generateContent?key=k",
		"", `{"contents":[{"parts":[{"text":"hi"}]}],"serviceTier":"flex"}`)
	var raw struct {
		Candidates []struct {
			FinishMessage string `json:"finishMessage"`
			Index         *int   `json:"index"`
		}
		UsageMetadata struct {
			ServiceTier string `json:"serviceTier"`
		}
	}
	if err := json.Unmarshal(b, &raw); err != nil || code != 200 {
		t.Fatalf("%d %s (%v)", code, b, err)
	}
	if c := raw.Candidates[0]; c.FinishMessage != "Model generated function call(s)." || c.Index == nil || raw.UsageMetadata.ServiceTier != "flex" {
		t.Errorf("response %s; want finishMessage \"Model generated function call(s).\", index 0 and serviceTier flex", b)
	}
	if req := srv.LastRequest(); req.APIKey != "k" {
		t.Errorf("APIKey = %q; want the key query parameter", req.APIKey)
	}
}
