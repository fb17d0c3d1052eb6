package temporalagent

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/genai"
)

// TestModelRetries checks that model calls are retried through the
// activity retry policy as agent.Run retries them: transient failures
// again, after at least the API's RetryInfo delay; permanent ones not;
// attempts bounded by the agent's policy.
func TestModelRetries(t *testing.T) {
	for _, regular := range []bool{false, true} {
		name := "local"
		if regular {
			name = "regular"
		}
		t.Run(name+"/transient", func(t *testing.T) {
			srv := newServer(t)
			srv.Enqueue(fake.RateLimited(40*time.Millisecond), fake.Error(503, "overloaded"), fake.Text("ok"))
			var log eventLog
			env := newEnv(t, Agent{Name: "w", RegularModelCalls: regular,
				Agent: newAgent(t, srv, nil, func(c *agent.Config) { c.Observer = &log })})
			res, err := execute(env, "w", user("Hi"))
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != "ok" || res.Turns[0].Attempts != 3 || len(srv.Requests()) != 3 {
				t.Errorf("result %q after %d attempts and %d requests, want ok after 3", res.Text, res.Turns[0].Attempts, len(srv.Requests()))
			}
			var delays []time.Duration
			for _, e := range log.events {
				if e.Kind == agent.EventRetry {
					delays = append(delays, e.Delay)
				}
			}
			if len(delays) != 2 || delays[0] < 40*time.Millisecond {
				t.Errorf("retry delays = %v, want 2 retries, the first at least the RetryInfo delay (40ms)", delays)
			}
			if got := log.count(agent.EventModelRequest); got != 3 {
				t.Errorf("%d EventModelRequest events, want 3", got)
			}
		})
		t.Run(name+"/permanent", func(t *testing.T) {
			srv := newServer(t)
			srv.Enqueue(fake.Error(403, "no access"))
			env := newEnv(t, Agent{Name: "w", RegularModelCalls: regular, Agent: newAgent(t, srv, nil)})
			_, err := execute(env, "w", user("Hi"))
			var me *agent.ModelError
			var apiErr genai.APIError
			if !errors.As(err, &me) || !errors.As(err, &apiErr) || apiErr.Code != 403 || me.Attempts != 1 || me.Turn != 0 {
				t.Fatalf("err = %v, want a ModelError of turn 0 after 1 attempt wrapping the 403", err)
			}
			if len(srv.Requests()) != 1 {
				t.Errorf("%d requests, want 1: a 403 is not retried", len(srv.Requests()))
			}
		})
		t.Run(name+"/attempts", func(t *testing.T) {
			srv := newServer(t)
			for range 5 {
				srv.Enqueue(fake.Error(500, "boom"))
			}
			env := newEnv(t, Agent{Name: "w", RegularModelCalls: regular, Agent: newAgent(t, srv, nil)})
			_, err := execute(env, "w", user("Hi"))
			var me *agent.ModelError
			var apiErr genai.APIError
			if !errors.As(err, &me) || !errors.As(err, &apiErr) || apiErr.Code != 500 || me.Attempts != 4 {
				t.Fatalf("err = %v, want a ModelError after 4 attempts wrapping the 500", err)
			}
			if len(srv.Requests()) != 4 {
				t.Errorf("%d requests, want 4 (the policy's MaxAttempts)", len(srv.Requests()))
			}
		})
	}
}

// TestReasks: an empty reply is asked again, counting an attempt; a
// response stopped for safety ends the run with agent.Run's StopError.
func TestReasks(t *testing.T) {
	srv := newServer(t)
	srv.Enqueue(fake.Empty(), fake.Text("here"))
	env := newEnv(t, Agent{Name: "w", Agent: newAgent(t, srv, nil)})
	res, err := execute(env, "w", user("Hi"))
	if err != nil || res.Text != "here" || res.Turns[0].Attempts != 2 {
		t.Fatalf("Run = %v, %+v; want the second answer after 2 attempts", err, res)
	}

	srv.Enqueue(fake.Finish(genai.FinishReasonSafety))
	env = newEnv(t, Agent{Name: "w", Agent: newAgent(t, srv, nil)})
	_, err = execute(env, "w", user("Hi"))
	var stop *agent.StopError
	if !errors.Is(err, agent.ErrUnsafe) || !errors.As(err, &stop) || stop.FinishReason != genai.FinishReasonSafety {
		t.Fatalf("err = %v, want a StopError of kind ErrUnsafe", err)
	}

	for range 3 {
		srv.Enqueue(fake.Empty())
	}
	env = newEnv(t, Agent{Name: "w", Agent: newAgent(t, srv, nil)})
	_, err = execute(env, "w", user("Hi"))
	if !errors.Is(err, agent.ErrEmptyReply) || !errors.As(err, &stop) || stop.Attempts != 3 {
		t.Fatalf("err = %v, want ErrEmptyReply after 3 attempts (2 re-asks)", err)
	}
}

// TestInterruptedCalls: a tool call whose activity fails (its worker was
// lost) is answered as interrupted and not run again, unless the tool is
// idempotent, when it is retried up to its attempts.
func TestInterruptedCalls(t *testing.T) {
	srv := newServer(t)
	srv.Enqueue(fake.Calls(fake.Call("once", map[string]any{}), fake.Call("again", map[string]any{})), fake.Text("done"))
	noop := func(ctx context.Context, in struct{}) (string, error) { return "ran", nil }
	set := toolset.MustNew(toolset.MustFunc("once", "not idempotent", noop), toolset.MustFunc("again", "idempotent", noop))
	env := newEnv(t, Agent{Name: "w", Agent: newAgent(t, srv, set),
		Tools: map[string]ToolOptions{"again": {Idempotent: true, MaxAttempts: 3}}})
	var mu sync.Mutex // the calls of a turn run concurrently
	attempts := map[string]int{}
	env.OnActivity(ToolActivityName, mock.Anything, mock.Anything).Return(func(ctx context.Context, in toolInput) (*toolOutput, error) {
		mu.Lock()
		defer mu.Unlock()
		attempts[in.Call.Name]++
		if in.Call.Name == "again" && attempts["again"] == 3 {
			return &toolOutput{Output: "ran at last"}, nil
		}
		return nil, temporal.NewApplicationError("worker lost", "Lost")
	})
	res, err := execute(env, "w", user("Hi"))
	if err != nil {
		t.Fatal(err)
	}
	if attempts["once"] != 1 || attempts["again"] != 3 {
		t.Errorf("attempts = %v, want once 1 and again 3", attempts)
	}
	answers := res.History[2].Parts
	once, again := answers[0].FunctionResponse.Response, answers[1].FunctionResponse.Response
	if msg, _ := once["error"].(string); !containsAll(msg, "once", "interrupted", "not idempotent") {
		t.Errorf("answer to once = %v, want an interrupted error", once)
	}
	if again["result"] != "ran at last" {
		t.Errorf("answer to again = %v, want its third attempt's", again)
	}
}

// TestCancel: a cancelled run stops its tools and returns its partial
// result with an error wrapping context.Canceled.
func TestCancel(t *testing.T) {
	srv := newServer(t)
	srv.Enqueue(fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"})), fake.Text("never"))
	w := &weatherTool{delay: 300 * time.Millisecond} // the test environment does not cancel activities
	env := newEnv(t, Agent{Name: "w", Agent: newAgent(t, srv, toolset.MustNew(w.tool()))})
	env.SetOnActivityStartedListener(func(info *activity.Info, ctx context.Context, args converter.EncodedValues) {
		if info.ActivityType.Name == ToolActivityName {
			env.CancelWorkflow()
		}
	})
	res, err := execute(env, "w", user("Hi"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if len(res.Turns) != 1 || len(srv.Requests()) != 1 {
		t.Errorf("partial result has %d turns after %d requests, want 1 and 1", len(res.Turns), len(srv.Requests()))
	}
}
