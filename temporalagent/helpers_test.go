package temporalagent

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"google.golang.org/genai"
)

const testModel = "gemini-3-flash-preview"

// quiet is a Temporal logger that drops everything.
var quiet = log.NewStructuredLogger(slog.New(slog.DiscardHandler))

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

// fastRetry retries quickly, so that tests of retries take milliseconds.
var fastRetry = agent.RetryPolicy{InitialDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond, Jitter: -1}

// newAgent returns an agent on srv with tools, fast retries and the given
// changes to its config.
func newAgent(t *testing.T, srv *fake.Server, tools *toolset.Set, edit ...func(*agent.Config)) *agent.Agent {
	t.Helper()
	cfg := agent.Config{Models: srv.Client().Models, Model: testModel, Tools: tools, Retry: fastRetry}
	for _, e := range edit {
		e(&cfg)
	}
	a, err := agent.New(cfg)
	if err != nil {
		t.Fatalf("agent.New() = %v", err)
	}
	return a
}

// newEnv returns a workflow test environment with agents registered.
func newEnv(t *testing.T, agents ...Agent) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(quiet)
	env := s.NewTestWorkflowEnvironment()
	if err := Register(env, agents...); err != nil {
		t.Fatalf("Register() = %v", err)
	}
	return env
}

// execute runs the workflow in env on contents and returns what Run.Result
// would.
func execute(env *testsuite.TestWorkflowEnvironment, name string, contents []*genai.Content) (*agent.Result, error) {
	env.ExecuteWorkflow(WorkflowName, runInput{Agent: name, Contents: contents})
	var out runOutput
	err := env.GetWorkflowError()
	if err == nil {
		if err := env.GetWorkflowResult(&out); err != nil {
			return nil, err
		}
	}
	return outcome(err, &out)
}

// user is one user message.
func user(text string) []*genai.Content {
	return []*genai.Content{genai.NewContentFromText(text, genai.RoleUser)}
}

type weatherIn struct {
	City string `json:"city" jsonschema:"the city"`
}

// weatherTool is a get_weather tool that counts its calls and how many run
// at once.
type weatherTool struct {
	calls, inFlight, peak atomic.Int32
	delay                 time.Duration
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
		if w.delay > 0 {
			select {
			case <-time.After(w.delay):
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
		return "sunny in " + in.City, nil
	})
}

// eventLog is an Observer that records the events it sees.
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

func (l *eventLog) count(kind agent.EventKind) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, e := range l.events {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

// containsAll reports whether s contains every one of subs.
func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// all returns the events observed so far.
func (l *eventLog) all() []*agent.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*agent.Event(nil), l.events...)
}

// sameRequests requires the durable run's server to have received the very
// requests, byte for byte, that agent.Run's did: n of them.
func sameRequests(t *testing.T, durable, direct *fake.Server, n int) {
	t.Helper()
	gotReqs, wantReqs := durable.Requests(), direct.Requests()
	if len(gotReqs) != n || len(wantReqs) != n {
		t.Fatalf("durable run made %d requests, agent.Run %d; want %d", len(gotReqs), len(wantReqs), n)
	}
	for i := range wantReqs {
		if !bytes.Equal(gotReqs[i].Body, wantReqs[i].Body) {
			t.Errorf("request %d differs:\n durable: %s\n     Run: %s", i+1, gotReqs[i].Body, wantReqs[i].Body)
		}
	}
}
