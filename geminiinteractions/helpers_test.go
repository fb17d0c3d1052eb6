package geminiinteractions_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/geminiinteractions"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

const model = "gemini-3-flash-preview"

// newServer starts a fake server, closed when the test ends, that fails
// the test on any request that broke the protocol.
func newServer(t *testing.T) *fake.Server {
	t.Helper()
	srv := fake.NewServer()
	srv.SetLogger(t.Logf)
	t.Cleanup(func() {
		for _, r := range srv.Rejections() {
			t.Errorf("the fake rejected request #%d (rule %s): %s", r.Seq, r.Rule, r.Err.Message)
		}
		srv.Close()
	})
	return srv
}

// weather is a get_weather tool that answers "sunny in {city}".
var weather = toolset.MustFunc("get_weather", "Current weather for a city", func(ctx context.Context, in struct {
	City string `json:"city"`
}) (string, error) {
	return "sunny in " + in.City, nil
})

var fastRetry = agent.RetryPolicy{InitialDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond, Jitter: -1}

// newAgent returns an agent on models with the weather tool and fast retries.
func newAgent(t *testing.T, models agent.Models, edit ...func(*agent.Config)) *agent.Agent {
	t.Helper()
	cfg := agent.Config{Models: models, Model: model, Tools: toolset.MustNew(weather), Retry: fastRetry}
	for _, e := range edit {
		e(&cfg)
	}
	a, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func user(text string) []*genai.Content {
	return []*genai.Content{genai.NewContentFromText(text, genai.RoleUser)}
}

func call(city string) *genai.FunctionCall {
	return fake.Call("get_weather", map[string]any{"city": city})
}

// creates returns the server's create requests.
func creates(srv *fake.Server) []*fake.Request {
	var out []*fake.Request
	for _, r := range srv.Requests() {
		if r.Method == fake.MethodCreateInteraction {
			out = append(out, r)
		}
	}
	return out
}

// input returns the raw input steps of a request's body.
func input(t *testing.T, r *fake.Request) []map[string]any {
	t.Helper()
	var body struct {
		Input []map[string]any `json:"input"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("request #%d: %v", r.Seq, err)
	}
	return body.Input
}

// stepTypes returns the types of a request's input steps.
func stepTypes(t *testing.T, r *fake.Request) []string {
	t.Helper()
	var out []string
	for _, s := range input(t, r) {
		out = append(out, s["type"].(string))
	}
	return out
}

// roundTrip returns contents through JSON, as a session store keeps them.
func roundTrip(t *testing.T, contents []*genai.Content) []*genai.Content {
	t.Helper()
	b, err := json.Marshal(contents)
	if err != nil {
		t.Fatal(err)
	}
	var out []*genai.Content
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

var _ = geminiinteractions.API
