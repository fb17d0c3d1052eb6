package eval_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/eval"
	"google.golang.org/genai"
)

// blockingModels is an in-process model for the tests that run in a
// synctest bubble, where loopback sockets would keep the bubble from
// going idle: each call counts itself in flight and waits for release (or
// for its context), then answers "ok".
type blockingModels struct {
	release chan struct{}

	mu            sync.Mutex
	inFlight, max int
	calls         int
}

func (m *blockingModels) GenerateContent(ctx context.Context, model string, contents []*genai.Content, cfg *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	m.mu.Lock()
	m.inFlight++
	m.calls++
	m.max = max(m.max, m.inFlight)
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.inFlight--
		m.mu.Unlock()
	}()
	select {
	case <-m.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &genai.GenerateContentResponse{Candidates: []*genai.Candidate{{
		Content: genai.NewContentFromText("ok", genai.RoleModel), FinishReason: genai.FinishReasonStop}}}, nil
}

func (m *blockingModels) GenerateContentStream(ctx context.Context, model string, contents []*genai.Content, cfg *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error] {
	return func(yield func(*genai.GenerateContentResponse, error) bool) {
		resp, err := m.GenerateContent(ctx, model, contents, cfg)
		yield(resp, err)
	}
}

func (m *blockingModels) state() (inFlight, maxInFlight, calls int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.inFlight, m.max, m.calls
}

// okSet has n one-turn cases whose answer is "ok".
func okSet(n int) *eval.Set {
	set := &eval.Set{ID: "ok"}
	for i := range n {
		set.Cases = append(set.Cases, eval.Case{ID: fmt.Sprint("c", i), Turns: []eval.Turn{eval.UserTurn("hi").WithResponse("ok")}})
	}
	return set
}

func blockingAgent(t *testing.T, m *blockingModels) *agent.Agent {
	t.Helper()
	a, err := agent.New(agent.Config{Models: m, Model: "gemini-2.5-flash"})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Parallel bounds the runs going at once, over every case and run.
func TestParallelLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &blockingModels{release: make(chan struct{})}
		done := make(chan *eval.Report)
		go func() {
			rep, err := eval.Evaluate(context.Background(), okSet(6), eval.Options{Agent: blockingAgent(t, m), Runs: 2, Parallel: 3,
				Metrics: []eval.Metric{eval.ResponseMatch{Threshold: 1}}})
			if err != nil {
				t.Error(err)
			}
			done <- rep
		}()
		synctest.Wait() // every run is in a model call or waiting for a slot
		if inFlight, _, _ := m.state(); inFlight != 3 {
			t.Errorf("%d runs in flight; want Parallel, 3", inFlight)
		}
		close(m.release)
		rep := <-done
		if _, maxInFlight, calls := m.state(); maxInFlight != 3 || calls != 12 {
			t.Errorf("at most %d runs at once over %d calls; want 3 over 12", maxInFlight, calls)
		}
		if rep.Passed != 6 {
			t.Errorf("%d cases passed; want 6:\n%s", rep.Passed, rep.Table())
		}
	})
}

// CaseTimeout bounds a run: the agent's call ends with the deadline, and
// the run fails saying so.
func TestCaseTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &blockingModels{release: make(chan struct{})} // never released
		rep, err := eval.Evaluate(context.Background(), okSet(2), eval.Options{Agent: blockingAgent(t, m), CaseTimeout: time.Minute,
			Metrics: []eval.Metric{eval.ResponseMatch{Threshold: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range rep.Cases {
			run := c.Runs[0]
			if !errors.Is(run.Err, context.DeadlineExceeded) || !strings.Contains(run.Err.Error(), "turn 1: the agent failed") {
				t.Errorf("case %s: run error %v; want the deadline", c.Case.ID, run.Err)
			}
			if run.Latency[0] != time.Minute || c.Status != eval.Failed {
				t.Errorf("case %s: turn latency %v, status %v; want 1m (the bubble's clock), FAILED", c.Case.ID, run.Latency[0], c.Status)
			}
		}
	})
}

// Cancelling the context stops the runs in flight and those not started;
// Evaluate returns with every run saying so.
func TestCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &blockingModels{release: make(chan struct{})}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan *eval.Report)
		go func() {
			rep, err := eval.Evaluate(ctx, okSet(4), eval.Options{Agent: blockingAgent(t, m), Parallel: 2,
				Metrics: []eval.Metric{eval.ResponseMatch{Threshold: 1}}})
			if err != nil {
				t.Error(err)
			}
			done <- rep
		}()
		synctest.Wait()
		cancel()
		rep := <-done
		started, waiting := 0, 0
		for _, c := range rep.Cases {
			run := c.Runs[0]
			if !errors.Is(run.Err, context.Canceled) {
				t.Errorf("case %s: %v; want context.Canceled", c.Case.ID, run.Err)
			}
			if strings.Contains(fmt.Sprint(run.Err), "not started") {
				waiting++
			} else {
				started++
			}
		}
		if started != 2 || waiting != 2 || rep.Failed != 4 {
			t.Errorf("%d started, %d never started, %d failed; want 2, 2, 4", started, waiting, rep.Failed)
		}
	})
}
