package geminiinteractions_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/geminiinteractions"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	iw "github.com/toolnexus/toolnexus-go/internal/interactionswire"
	"google.golang.org/genai"
)

// Built-in tool steps come back as generateContent's parts and go back
// exactly as they came, beside the function calls; the built-in tools are
// declared beside the functions.
func TestBuiltinStepsGoBackExactly(t *testing.T) {
	srv := newServer(t)
	m := geminiinteractions.New(srv.Client(), geminiinteractions.Config{Stateless: true})
	a := newAgent(t, m, func(c *agent.Config) {
		c.GenerateConfig = &genai.GenerateContentConfig{Tools: []*genai.Tool{{GoogleSearch: &genai.GoogleSearch{}}}}
	})
	search := `{"type":"google_search_call","id":"gs-1","arguments":{"queries":["weather Paris"]},"signature":"c2VhcmNo","new_field":[1,{"b":2}]}`
	found := `{"type":"google_search_result","call_id":"gs-1","result":[{"search_suggestions":"<div>Paris</div>"}],"signature":"Zm91bmQ="}`
	srv.Enqueue(fake.Parts(
		&genai.Part{PartMetadata: map[string]any{"interactions_step": search}},
		&genai.Part{PartMetadata: map[string]any{"interactions_step": found}},
		&genai.Part{FunctionCall: call("Paris")},
	), fake.Text("Sunny, as the search said."))
	var events []*agent.Event
	for e, err := range a.Stream(context.Background(), user("Paris?")) {
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, e)
	}
	res := events[len(events)-1].Result
	if res.Text != "Sunny, as the search said." {
		t.Fatalf("Stream() = %q", res.Text)
	}
	turn := res.History[1].Parts
	var tc *genai.ToolCall
	var tr *genai.ToolResponse
	for _, p := range turn {
		if p.ToolCall != nil {
			tc = p.ToolCall
		}
		if p.ToolResponse != nil {
			tr = p.ToolResponse
		}
	}
	if tc == nil || tc.ID != "gs-1" || tc.ToolType != genai.ToolTypeGoogleSearchWeb || tr == nil || tr.ID != "gs-1" {
		t.Errorf("the model's turn = %+v; want the search call and result as toolCall and toolResponse parts", turn)
	}
	second := creates(srv)[1]
	var body struct {
		Input []json.RawMessage `json:"input"`
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(second.Body, &body); err != nil {
		t.Fatal(err)
	}
	var sent []string
	for _, s := range body.Input {
		c, err := iw.Canonical(s)
		if err != nil {
			t.Fatal(err)
		}
		sent = append(sent, string(c))
	}
	all := strings.Join(sent, "\n")
	// The same JSON values: members in another order, no HTML escaping.
	for _, step := range []string{search, found} {
		want, err := iw.Canonical([]byte(step))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(all, string(want)) {
			t.Errorf("the second request sent\n%s\nwant the search step as it came:\n%s", all, want)
		}
	}
	if len(body.Tools) != 2 || !strings.Contains(string(body.Tools[0]), `"google_search"`) && !strings.Contains(string(body.Tools[1]), `"google_search"`) {
		t.Errorf("tools = %s", body.Tools)
	}
}

// A typed answer goes by response_format; the answer is decoded.
func TestTypedOutputByResponseFormat(t *testing.T) {
	srv := newServer(t)
	a := newAgent(t, geminiinteractions.New(srv.Client(), geminiinteractions.Config{}))
	srv.Enqueue(fake.Text(`{"city":"Paris","high":21}`))
	type fc struct {
		City string `json:"city"`
		High int    `json:"high"`
	}
	got, _, err := agent.RunTyped[fc](context.Background(), a, user("Paris?"))
	if err != nil || got != (fc{"Paris", 21}) {
		t.Fatalf("RunTyped() = %+v, %v", got, err)
	}
	var body struct {
		ResponseFormat map[string]any `json:"response_format"`
	}
	if err := json.Unmarshal(srv.LastRequest().Body, &body); err != nil {
		t.Fatal(err)
	}
	rf := body.ResponseFormat
	if rf["type"] != "text" || rf["mime_type"] != "application/json" || rf["schema"] == nil {
		t.Errorf("response_format = %v", rf)
	}
}

// Usage: input, output, thought, cached and tool-use tokens, as
// generateContent's usage metadata; a chained request's history is
// cached on the server.
func TestUsage(t *testing.T) {
	srv := newServer(t)
	a := newAgent(t, geminiinteractions.New(srv.Client(), geminiinteractions.Config{}))
	scripted := fake.Text("ok")
	scripted.Response.UsageMetadata = &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 100, CandidatesTokenCount: 10,
		ThoughtsTokenCount: 7, CachedContentTokenCount: 40, ToolUsePromptTokenCount: 5, TotalTokenCount: 122}
	srv.Enqueue(fake.Calls(call("Paris")), scripted)
	res, err := a.Run(context.Background(), user("Paris?"))
	if err != nil {
		t.Fatal(err)
	}
	u := res.Turns[1].Usage
	if u.PromptTokens != 100 || u.CandidatesTokens != 10 || u.ThoughtsTokens != 7 || u.CachedTokens != 40 || u.ToolUsePromptTokens != 5 || u.TotalTokens != 122 {
		t.Errorf("second turn's usage = %+v", u)
	}
	if u := res.Turns[0].Usage; u.PromptTokens == 0 || u.CandidatesTokens == 0 || u.CachedTokens != 0 {
		t.Errorf("first turn's usage = %+v", u)
	}
	srv.Enqueue(fake.Text("again"))
	res, err = a.Run(context.Background(), append(res.History, genai.NewContentFromText("More?", genai.RoleUser)))
	if err != nil {
		t.Fatal(err)
	}
	if u := res.Turns[0].Usage; u.CachedTokens == 0 || u.CachedTokens >= u.PromptTokens {
		t.Errorf("a chained turn's usage = %+v; want part of the prompt cached", u)
	}
}

// Settings the Interactions API has no field for fail before anything is
// sent.
func TestUnsupportedSettings(t *testing.T) {
	srv := newServer(t)
	k := float32(4)
	a := newAgent(t, geminiinteractions.New(srv.Client(), geminiinteractions.Config{}), func(c *agent.Config) {
		c.GenerateConfig = &genai.GenerateContentConfig{TopK: &k}
	})
	_, err := a.Run(context.Background(), user("hi"))
	if err == nil || !strings.Contains(err.Error(), "TopK") || len(srv.Requests()) != 0 {
		t.Errorf("Run() = %v after %d requests; want an error naming TopK, and none", err, len(srv.Requests()))
	}
}

// The Interactions API caches implicitly only: a named cache is refused
// before anything is sent (its deprecated cached_content is never
// forwarded), and agent.New refuses an explicit cache policy.
func TestNoExplicitCaching(t *testing.T) {
	srv := newServer(t)
	models := geminiinteractions.New(srv.Client(), geminiinteractions.Config{})
	a := newAgent(t, models, func(c *agent.Config) {
		c.GenerateConfig = &genai.GenerateContentConfig{CachedContent: "cachedContents/abc"}
	})
	_, err := a.Run(context.Background(), user("hi"))
	if err == nil || !strings.Contains(err.Error(), "CachedContent") || !strings.Contains(err.Error(), "implicitly") || len(srv.Requests()) != 0 {
		t.Errorf("Run() = %v after %d requests; want an error naming CachedContent, and none", err, len(srv.Requests()))
	}

	_, err = agent.New(agent.Config{Models: models, Model: model,
		Cache: &agent.CachePolicy{Caches: srv.Client().Caches, TTL: time.Hour}})
	if !errors.Is(err, agent.ErrNoExplicitCaching) || !strings.Contains(err.Error(), "geminiinteractions") {
		t.Errorf("New(Cache on geminiinteractions) = %v; want ErrNoExplicitCaching naming the Models", err)
	}
}

// A prompt the API blocks (400 content_blocked) ends the run as a blocked
// prompt does on generateContent.
func TestBlockedPrompt(t *testing.T) {
	srv := newServer(t)
	a := newAgent(t, geminiinteractions.New(srv.Client(), geminiinteractions.Config{}))
	srv.Enqueue(fake.Blocked(genai.BlockedReasonSafety))
	_, err := a.Run(context.Background(), user("something bad"))
	if !errors.Is(err, agent.ErrPromptBlocked) {
		t.Errorf("Run() = %v; want ErrPromptBlocked", err)
	}
}

// How an interaction ends: incomplete is a cut answer, failed for safety
// an unsafe one, failed or cancelled otherwise an InteractionError.
func TestFinishStates(t *testing.T) {
	unsafe := fake.Text("so far")
	unsafe.Response.Candidates[0].FinishReason = genai.FinishReasonSafety
	for _, tc := range []struct {
		name  string
		reply *fake.Reply
		want  error
	}{
		{"failed for safety", unsafe, agent.ErrUnsafe},
		{"failed", &fake.Reply{Body: []byte(`{"id":"v1_x","status":"failed","errors":[{"code":"internal","message":"boom"}]}`)}, nil},
		{"cancelled", &fake.Reply{Body: []byte(`{"id":"v1_y","status":"cancelled"}`)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t)
			a := newAgent(t, geminiinteractions.New(srv.Client(), geminiinteractions.Config{}))
			srv.Enqueue(tc.reply, fake.Text("unreachable"))
			_, err := a.Run(context.Background(), user("hi"))
			if tc.want != nil {
				if !errors.Is(err, tc.want) {
					t.Errorf("Run() = %v; want %v", err, tc.want)
				}
				return
			}
			var ie *geminiinteractions.InteractionError
			if !errors.As(err, &ie) || ie.Status != tc.name {
				t.Errorf("Run() = %v; want an InteractionError %s", err, tc.name)
			}
			if srv.Pending() != 1 {
				t.Error("the loop retried")
			}
		})
	}
}

// The Interactions API on Vertex AI: genai's client sends the project's
// path and the bearer token.
func TestVertexAI(t *testing.T) {
	srv := newServer(t)
	a := newAgent(t, geminiinteractions.New(srv.VertexClient(), geminiinteractions.Config{}))
	srv.Enqueue(fake.Calls(call("Paris")), fake.Text("Sunny."))
	if _, err := a.Run(context.Background(), user("Paris?")); err != nil {
		t.Fatal(err)
	}
	for _, r := range srv.Requests() {
		if r.Backend != genai.BackendVertexAI || r.Project != fake.VertexProject || r.Token != fake.AccessToken {
			t.Errorf("request #%d: %v %q %q", r.Seq, r.Backend, r.Project, r.Token)
		}
	}
	if r := srv.LastRequest(); r.PreviousInteractionID == "" {
		t.Error("Vertex AI's second request sent the whole history")
	}
}
