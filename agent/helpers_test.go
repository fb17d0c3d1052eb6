package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

const (
	model   = "gemini-2.5-flash"
	model3  = "gemini-3-flash-preview"
	noRetry = 1
)

// newServer starts a fake Gemini server, closed when the test ends, that
// fails the test if any request broke the protocol.
func newServer(t *testing.T) *fake.Server {
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

// hangGuard bounds the waits that only a bug makes long: what a test
// waits for (a run to return promptly after a cancellation, a call to
// start) takes milliseconds, but on a loaded machine it can take seconds,
// and a bound must not fail a test that would have passed.
const hangGuard = time.Minute

// fastRetry retries quickly, so that tests of retries take milliseconds.
var fastRetry = agent.RetryPolicy{InitialDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond, Jitter: -1}

// newAgent returns an agent on srv with tools, fast retries and the given
// changes to its config.
func newAgent(t *testing.T, srv *fake.Server, tools *toolset.Set, edit ...func(*agent.Config)) *agent.Agent {
	t.Helper()
	cfg := agent.Config{Models: srv.Client().Models, Model: model, Tools: tools, Retry: fastRetry}
	for _, e := range edit {
		e(&cfg)
	}
	a, err := agent.New(cfg)
	if err != nil {
		t.Fatalf("agent.New() = %v", err)
	}
	return a
}

type weatherIn struct {
	City string `json:"city" jsonschema:"the city"`
}

// weatherTool returns a get_weather tool that records how many calls run at
// once. Each call waits on release, when it is not nil.
type weatherTool struct {
	inFlight, peak, calls atomic.Int32
	release               chan struct{}
	started               chan string
}

func (w *weatherTool) tool() *toolset.Tool {
	return toolset.MustFunc("get_weather", "Current weather for a city", func(ctx context.Context, in weatherIn) (string, error) {
		w.calls.Add(1)
		n := w.inFlight.Add(1)
		defer w.inFlight.Add(-1)
		for {
			p := w.peak.Load()
			if n <= p || w.peak.CompareAndSwap(p, n) {
				break
			}
		}
		if w.started != nil {
			w.started <- in.City
		}
		if w.release != nil {
			select {
			case <-w.release:
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
		return "sunny in " + in.City, nil
	})
}

// tool builds a tool from a function, for tests that need a one-off.
func tool(name string, run func(ctx context.Context, args map[string]any) (any, error)) *toolset.Tool {
	return toolset.MustDefine(toolset.Tool{Name: name, Description: "test tool " + name, Run: run})
}

// user is one user message.
func user(text string) []*genai.Content {
	return []*genai.Content{genai.NewContentFromText(text, genai.RoleUser)}
}

// responses returns the functionResponse parts of a content.
func responses(c *genai.Content) []*genai.FunctionResponse {
	var out []*genai.FunctionResponse
	for _, p := range c.Parts {
		if p.FunctionResponse != nil {
			out = append(out, p.FunctionResponse)
		}
	}
	return out
}

// lastResponses returns the function responses of the last content of the
// last request the server received.
func lastResponses(t *testing.T, srv *fake.Server) []*genai.FunctionResponse {
	t.Helper()
	req := srv.LastRequest()
	if req == nil || len(req.Contents) == 0 {
		t.Fatalf("no request recorded")
	}
	return responses(req.Contents[len(req.Contents)-1])
}

// eventLog is an Observer that records the kinds of events it sees.
type eventLog struct {
	mu     sync.Mutex
	events []*agent.Event
}

func (l *eventLog) Observe(_ context.Context, e *agent.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

func (l *eventLog) kinds() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, e := range l.events {
		out = append(out, e.Kind.String())
	}
	return out
}

func (l *eventLog) of(kind agent.EventKind) []*agent.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*agent.Event
	for _, e := range l.events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

func cities(n int) []*genai.FunctionCall {
	calls := make([]*genai.FunctionCall, n)
	for i := range calls {
		calls[i] = fake.Call("get_weather", map[string]any{"city": fmt.Sprintf("city-%d", i)})
	}
	return calls
}

// jsonLen returns the length of v's JSON, as the SDK encodes it.
func jsonLen(t *testing.T, v any) int {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("json.Marshal: %v", err)
	}
	return len(b)
}
