package session_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// hangGuard bounds a wait that a synchronization of the test ends; it only
// turns a bug that would hang the test into a failure.
const hangGuard = time.Minute

// byAgent scripts the fake for several agents, told apart by their system
// instructions ("You are <name>.").
func byAgent(srv *fake.Server, scripts map[string]func(*fake.Request) *fake.Reply) {
	srv.SetReplyFunc(func(r *fake.Request) *fake.Reply {
		who := ""
		if r.SystemInstruction != nil && len(r.SystemInstruction.Parts) > 0 {
			who = strings.TrimSuffix(strings.TrimPrefix(r.SystemInstruction.Parts[0].Text, "You are "), ".")
		}
		if script := scripts[who]; script != nil {
			return script(r)
		}
		return fake.Error(500, "no script for agent "+who)
	})
}

// named returns an agent called name whose system instruction names it,
// with tools.
func named(t *testing.T, srv *fake.Server, name string, tools ...*toolset.Tool) *agent.Agent {
	t.Helper()
	return newAgent(t, srv, func(c *agent.Config) {
		c.Name = name
		c.Tools = toolset.MustNew(tools...)
		c.GenerateConfig = &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText("You are "+name+".", genai.RoleUser)}
	})
}

func asTool(t *testing.T, a *agent.Agent, name string) *toolset.Tool {
	t.Helper()
	tool, err := agent.AsTool(a, name, "Asks the "+name+" agent.")
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// lastAnswers returns the function responses of a request's last content.
func lastAnswers(r *fake.Request) []*genai.FunctionResponse {
	var out []*genai.FunctionResponse
	for _, p := range r.Contents[len(r.Contents)-1].Parts {
		if p.FunctionResponse != nil {
			out = append(out, p.FunctionResponse)
		}
	}
	return out
}

// A coordinator that calls two agents as tools in parallel, through
// session.Stream: the sub-agents' runs report to the coordinator's
// observers from their tool goroutines, at the same time, and their
// EventDone is not the run's. Under -race, this failed when the observer
// Stream adds recorded every EventDone it saw.
func TestStreamAgentsAsToolsInParallel(t *testing.T) {
	srv := newServer(t)
	// Each specialist's model call waits until both have arrived: the two
	// sub-agent runs are in flight at once.
	var arrived sync.WaitGroup
	arrived.Add(2)
	both := make(chan struct{})
	go func() { arrived.Wait(); close(both) }()
	specialist := func(r *fake.Request) *fake.Reply {
		if len(r.Contents) == 1 {
			arrived.Done()
			select {
			case <-both:
			case <-time.After(hangGuard):
				return fake.Error(500, "the other specialist never started: the calls did not run in parallel")
			}
		}
		return fake.Text("notes on " + r.Contents[0].Parts[0].Text)
	}
	byAgent(srv, map[string]func(*fake.Request) *fake.Reply{
		"researcher": specialist,
		"writer":     specialist,
		"coordinator": func(r *fake.Request) *fake.Reply {
			if rs := lastAnswers(r); len(rs) > 0 {
				var parts []string
				for _, a := range rs {
					parts = append(parts, fmt.Sprint(a.Response["result"]))
				}
				return fake.Text(strings.Join(parts, " | "))
			}
			return fake.Calls(fake.Call("researcher", map[string]any{"request": "Paris"}),
				fake.Call("writer", map[string]any{"request": "Tokyo"}))
		},
	})
	coordinator := named(t, srv, "coordinator",
		asTool(t, named(t, srv, "researcher"), "researcher"), asTool(t, named(t, srv, "writer"), "writer"))
	store := session.NewMemory()

	var done []*agent.Event
	for e, err := range session.Stream(ctx, coordinator, store, "c", genai.Text("Paris and Tokyo?")...) {
		if err != nil {
			t.Fatalf("Stream yielded %v with %v", err, e.Kind)
		}
		if e.Agent != "coordinator" || e.Parent != nil {
			t.Errorf("Stream yielded a %v event of agent %q (with a parent: %t); want only the coordinator's", e.Kind, e.Agent, e.Parent != nil)
		}
		if e.Kind == agent.EventDone {
			done = append(done, e)
		}
	}
	if len(done) != 1 {
		t.Fatalf("%d EventDone; want 1", len(done))
	}
	const want = "notes on Paris | notes on Tokyo"
	if done[0].Result.Text != want {
		t.Errorf("EventDone's Result.Text = %q; want the coordinator's %q", done[0].Result.Text, want)
	}
	stored, err := store.Load(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != 4 || stored[3].Parts[0].Text != want {
		t.Errorf("%d contents stored; want the coordinator's conversation: question, calls, answers, %q", len(stored), want)
	}
}

// lateStore is a Memory store whose Append, before it appends, runs
// before, once.
type lateStore struct {
	session.Memory
	before func()
	once   sync.Once
}

func (s *lateStore) Append(ctx context.Context, id string, contents []*genai.Content) error {
	s.once.Do(s.before)
	return s.Memory.Append(ctx, id, contents)
}

// A sub-agent run that ends after the calling run (its tool ignores the
// run's cancellation) reports its EventDone late, while session.Stream is
// saving the run: the EventDone that Stream yields, and the conversation it
// saves, are still the run's own. This failed when the observer Stream adds
// took the last EventDone it saw for the run's.
func TestStreamLateSubAgentDone(t *testing.T) {
	srv := newServer(t)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	release := make(chan struct{})
	byAgent(srv, map[string]func(*fake.Request) *fake.Reply{
		"researcher": func(r *fake.Request) *fake.Reply {
			cancel() // the coordinator's run ends while the researcher's goes on
			select {
			case <-release:
			case <-time.After(hangGuard):
			}
			return fake.Text("late notes")
		},
		"coordinator": func(r *fake.Request) *fake.Reply {
			return fake.Calls(fake.Call("research", map[string]any{"request": "Paris"}))
		},
	})
	researcher := asTool(t, named(t, srv, "researcher"), "researcher")
	// research runs the researcher on a context the run's end does not
	// cancel: the researcher's run outlives the call.
	finished := make(chan struct{})
	research := toolset.MustDefine(toolset.Tool{Name: "research", Description: "Researches, however long it takes.",
		InputSchema: researcher.InputSchema,
		Run: func(ctx context.Context, args map[string]any) (any, error) {
			defer close(finished)
			res := researcher.Execute(context.WithoutCancel(ctx), args)
			return res.Output, res.Err
		}})
	coordinator := named(t, srv, "coordinator", research)
	store := &lateStore{before: func() {
		// The run is over and is being saved: the researcher's run ends now.
		close(release)
		select {
		case <-finished:
		case <-time.After(hangGuard):
			t.Error("the researcher's run never ended")
		}
	}}

	var done *agent.Event
	var doneErr error
	for e, err := range session.Stream(runCtx, coordinator, store, "c", genai.Text("Paris?")...) {
		if e.Kind == agent.EventDone {
			done, doneErr = e, err
		}
	}
	if done == nil {
		t.Fatal("no EventDone")
	}
	if done.Agent != "coordinator" || done.Parent != nil {
		t.Errorf("EventDone of agent %q (with a parent: %t); want the coordinator's", done.Agent, done.Parent != nil)
	}
	if !errors.Is(doneErr, context.Canceled) || !errors.Is(done.Err, context.Canceled) {
		t.Errorf("EventDone error = %v (Err %v); want the coordinator's cancellation", doneErr, done.Err)
	}
	stored, err := store.Load(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if len(done.Result.History) != 3 || len(stored) != 3 || stored[1].Parts[0].FunctionCall == nil {
		t.Errorf("EventDone's History has %d contents, %d stored; want the coordinator's 3: question, call, answer",
			len(done.Result.History), len(stored))
	}
}
