package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// collect ranges over a stream and returns its events and final error.
func collect(t *testing.T, seq func(func(*agent.Event, error) bool)) ([]*agent.Event, error) {
	t.Helper()
	var events []*agent.Event
	var last error
	n := 0
	for ev, err := range seq {
		n++
		if ev != nil {
			events = append(events, ev)
		}
		if err != nil {
			last = err
		}
	}
	if n == 0 || events[len(events)-1].Kind != agent.EventDone {
		t.Fatalf("the stream did not end with EventDone")
	}
	return events, last
}

func kindsOf(events []*agent.Event) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.Kind.String())
	}
	return out
}

func TestStreamEvents(t *testing.T) {
	srv := newServer(t)
	w := &weatherTool{}
	a := newAgent(t, srv, toolset.MustNew(w.tool()))
	thinking := fake.Parts(
		&genai.Part{Text: "The user wants two cities.", Thought: true},
		&genai.Part{Text: "Checking both."},
		&genai.Part{FunctionCall: fake.Call("get_weather", map[string]any{"city": "Paris"})},
		&genai.Part{FunctionCall: fake.Call("get_weather", map[string]any{"city": "Tokyo"})},
	).WithTextChunk(8)
	srv.Enqueue(thinking, fake.Text("Sunny in Paris and in Tokyo.").WithTextChunk(5))

	events, err := collect(t, a.Stream(context.Background(), user("Paris and Tokyo?")))
	if err != nil {
		t.Fatal(err)
	}
	var answer, thought strings.Builder
	for _, e := range events {
		switch e.Kind {
		case agent.EventText:
			answer.WriteString(e.Text)
		case agent.EventThought:
			thought.WriteString(e.Text)
		}
	}
	if thought.String() != "The user wants two cities." || answer.String() != "Checking both.Sunny in Paris and in Tokyo." {
		t.Errorf("thought %q, text %q", thought.String(), answer.String())
	}
	// Deltas arrive as pieces, and thought never mixes with the answer.
	var textEvents int
	for _, e := range events {
		if e.Kind == agent.EventText && e.Turn == 1 {
			textEvents++
		}
	}
	if textEvents < 5 {
		t.Errorf("%d text events for the 28-byte answer in 5-byte chunks, want ≥ 5", textEvents)
	}
	// Apart from the text, the order of the steps.
	var steps []string
	for _, k := range kindsOf(events) {
		if k != "Text" && k != "Thought" {
			steps = append(steps, k)
		}
	}
	want := []string{"RunStart", "ModelRequest", "ModelResponse", "ToolCall", "ToolCall", "ToolResult", "ToolResult", "TurnEnd",
		"ModelRequest", "ModelResponse", "TurnEnd", "Done"}
	if diff := cmp.Diff(want, steps); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	for _, e := range events {
		switch e.Kind {
		case agent.EventToolResult:
			if e.ToolResult.Output != "sunny in "+e.Call.Args["city"].(string) || e.Duration <= 0 {
				t.Errorf("tool result event %+v", e.ToolResult)
			}
		case agent.EventTurnEnd:
			if e.Usage.TotalTokens == 0 || e.FinishReason != genai.FinishReasonStop {
				t.Errorf("turn end event: usage %+v, finish %q", e.Usage, e.FinishReason)
			}
		}
	}
	done := events[len(events)-1]
	if done.Result == nil || done.Result.Text != "Sunny in Paris and in Tokyo." || len(done.Result.History) != 4 {
		t.Errorf("Done result = %+v", done.Result)
	}
	// The merged model turn holds the whole thought, text and calls.
	turn := done.Result.History[1]
	if len(turn.Parts) != 4 || turn.Parts[0].Text != "The user wants two cities." || !turn.Parts[0].Thought ||
		turn.Parts[1].Text != "Checking both." || turn.Parts[3].FunctionCall.Args["city"] != "Tokyo" {
		b, _ := json.Marshal(turn)
		t.Errorf("merged turn = %s", b)
	}
}

// A streamed conversation on a gemini-3 model is accepted turn after turn,
// and its history is exactly what Run produces for the same script.
func TestStreamHistoryEqualsRun(t *testing.T) {
	script := func(srv *fake.Server) {
		srv.Enqueue(
			fake.Parts(&genai.Part{Text: "Let me think about the cities.", Thought: true},
				&genai.Part{FunctionCall: fake.Call("get_weather", map[string]any{"city": "Paris"})},
				&genai.Part{FunctionCall: fake.Call("get_weather", map[string]any{"city": "Rome"})}).WithTextChunk(7),
			fake.Calls(fake.Call("get_weather", map[string]any{"city": "Oslo"})),
			fake.Text("Paris, Rome and Oslo are all sunny today.").WithTextChunk(6).WithTrailingSignature(),
		)
	}
	run := func(stream bool) (*agent.Result, *fake.Server) {
		srv := newServer(t)
		w := &weatherTool{}
		a := newAgent(t, srv, toolset.MustNew(w.tool()), func(c *agent.Config) { c.Model = model3 })
		script(srv)
		if !stream {
			res, err := a.Run(context.Background(), user("three cities"))
			if err != nil {
				t.Fatal(err)
			}
			return res, srv
		}
		events, err := collect(t, a.Stream(context.Background(), user("three cities")))
		if err != nil {
			t.Fatal(err)
		}
		return events[len(events)-1].Result, srv
	}
	runRes, _ := run(false)
	streamRes, srv := run(true)
	if diff := cmp.Diff(runRes.History, streamRes.History); diff != "" {
		t.Errorf("stream history differs from Run's (-run +stream):\n%s", diff)
	}
	if runRes.Text != streamRes.Text || runRes.Usage != streamRes.Usage {
		t.Errorf("Text/Usage: run %q %+v, stream %q %+v", runRes.Text, runRes.Usage, streamRes.Text, streamRes.Usage)
	}
	last := streamRes.History[len(streamRes.History)-1]
	if n := len(last.Parts); n != 1 || len(last.Parts[0].ThoughtSignature) == 0 {
		t.Errorf("final turn %+v: the trailing signature was not folded onto the text", last)
	}
	// Replaying the streamed history (one more question) is accepted.
	srv.Enqueue(fake.Text("Yes."))
	more := append(streamRes.History, genai.NewContentFromText("All sunny?", genai.RoleUser))
	a := newAgent(t, srv, nil, func(c *agent.Config) { c.Model = model3 })
	if _, err := collect(t, a.Stream(context.Background(), more)); err != nil {
		t.Errorf("continuing the streamed history: %v", err)
	}
}

func TestStreamRetriesBeforeFirstEvent(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault *fake.Reply
	}{
		{"503", fake.Error(503, "busy")},
		{"cut before first event", fake.Text("lost").WithFault(fake.FaultCutStream, 0)},
		{"dropped", fake.Drop()},
		{"no finish reason", &fake.Reply{Raw: true, Chunks: []*genai.GenerateContentResponse{{Candidates: []*genai.Candidate{{}}}}}},
		{"error event first", fake.Text("x").WithStreamError(0, 503, "overloaded")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t)
			a := newAgent(t, srv, nil)
			srv.Enqueue(tc.fault, fake.Text("made it"))
			events, err := collect(t, a.Stream(context.Background(), user("hi")))
			if err != nil || events[len(events)-1].Result.Text != "made it" {
				t.Fatalf("Stream() error %v", err)
			}
			var retries int
			for _, e := range events {
				if e.Kind == agent.EventRetry {
					retries++
				}
			}
			if retries != 1 || len(srv.Requests()) != 2 {
				t.Errorf("%d retries, %d requests; want 1 and 2", retries, len(srv.Requests()))
			}
		})
	}
}

func TestStreamErrorAfterTextIsNotReplayed(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply *fake.Reply
	}{
		{"error event", fake.Text("Hello there, friend").WithTextChunk(5).WithStreamError(2, 503, "The model is overloaded.")},
		{"cut", fake.Text("Hello there, friend").WithTextChunk(5).WithFault(fake.FaultCutStream, 2)},
		{"cut mid-event", fake.Text("Hello there, friend").WithTextChunk(5).WithFault(fake.FaultCutMidEvent, 2)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t)
			a := newAgent(t, srv, nil)
			srv.Enqueue(tc.reply, fake.Text("must not be asked"))
			events, err := collect(t, a.Stream(context.Background(), user("hi")))
			var me *agent.ModelError
			if !errors.As(err, &me) {
				t.Fatalf("Stream() error = %v, want a *ModelError", err)
			}
			if len(srv.Requests()) != 1 {
				t.Errorf("%d requests: the turn was replayed", len(srv.Requests()))
			}
			done := events[len(events)-1]
			if done.Err != err || done.Result == nil || len(done.Result.History) != 1 {
				t.Errorf("Done = %+v", done)
			}
			var got string
			for _, e := range events {
				if e.Kind == agent.EventText {
					got += e.Text
				}
			}
			if got != "Hello ther" { // two 5-byte events, then the failure
				t.Errorf("text before the failure = %q", got)
			}
		})
	}
}

func TestStreamEarlyBreak(t *testing.T) {
	srv := newServer(t)
	a := newAgent(t, srv, nil)
	srv.Enqueue(fake.Text("one two three four five six").WithTextChunk(4))
	n := 0
	for ev, err := range a.Stream(context.Background(), user("count")) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == agent.EventText {
			n++
			break
		}
	}
	if n != 1 {
		t.Errorf("got %d text events before break", n)
	}
}

func TestStreamBreakDuringToolsCancelsThem(t *testing.T) {
	srv := newServer(t)
	started, cancelled := make(chan struct{}), make(chan struct{})
	waits := tool("waits", func(ctx context.Context, _ map[string]any) (any, error) {
		close(started)
		<-ctx.Done()
		close(cancelled)
		return nil, ctx.Err()
	})
	quick := tool("quick", func(context.Context, map[string]any) (any, error) {
		<-started // so that waits is running when the consumer breaks
		return "done", nil
	})
	a := newAgent(t, srv, toolset.MustNew(waits, quick))
	srv.Enqueue(fake.Calls(fake.Call("waits", nil), fake.Call("quick", nil)))
	for ev, err := range a.Stream(context.Background(), user("go")) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == agent.EventToolResult {
			break // quick is done; waits is still running
		}
	}
	<-cancelled // the tool saw its context end
	if len(srv.Requests()) != 1 {
		t.Errorf("%d requests after the break", len(srv.Requests()))
	}
}

func TestStreamLimitsAndHooksApply(t *testing.T) {
	srv := newServer(t)
	w := &weatherTool{}
	log := &eventLog{}
	a := newAgent(t, srv, toolset.MustNew(w.tool()), func(c *agent.Config) {
		c.MaxTurns, c.MaxCallsPerTurn, c.Observer = 2, 1, log
		c.Intercept = func(_ context.Context, call *genai.FunctionCall) *toolset.Result {
			if call.Args["city"] == "city-0" {
				return agent.Deny("no")
			}
			return nil
		}
	})
	srv.SetReplyFunc(func(*fake.Request) *fake.Reply { return fake.Calls(cities(2)...) })
	events, err := collect(t, a.Stream(context.Background(), user("loop")))
	if !errors.Is(err, agent.ErrMaxTurns) {
		t.Fatalf("Stream() = %v, want ErrMaxTurns", err)
	}
	res := events[len(events)-1].Result
	if len(res.Turns) != 2 || w.calls.Load() != 0 {
		t.Errorf("%d turns, %d tool runs; want 2 and 0 (denied, then capped)", len(res.Turns), w.calls.Load())
	}
	got := lastResponses(t, srv)
	if got[0].Response["error"] != "no" || !strings.HasPrefix(got[1].Response["error"].(string), "not run: 2 function calls") {
		t.Errorf("responses = %v, %v", got[0].Response, got[1].Response)
	}
	if len(log.kinds()) != len(events) {
		t.Errorf("the observer saw %d events, the stream %d", len(log.kinds()), len(events))
	}
}

func TestStreamReasksAndStops(t *testing.T) {
	srv := newServer(t)
	a := newAgent(t, srv, nil)
	srv.Enqueue(fake.Finish(genai.FinishReasonMalformedFunctionCall), fake.Empty(), fake.Text("ok"))
	events, err := collect(t, a.Stream(context.Background(), user("hi")))
	if err != nil || events[len(events)-1].Result.Text != "ok" {
		t.Fatalf("Stream() = %v", err)
	}
	srv.Enqueue(fake.Blocked(genai.BlockedReasonSafety))
	_, err = collect(t, a.Stream(context.Background(), user("bad")))
	if !errors.Is(err, agent.ErrPromptBlocked) {
		t.Errorf("Stream(blocked) = %v", err)
	}
}

// When the consumer breaks out, the observer still sees the run end.
func TestStreamBreakObserverSeesDone(t *testing.T) {
	srv := newServer(t)
	log := &eventLog{}
	a := newAgent(t, srv, nil, func(c *agent.Config) { c.Observer = log })
	srv.Enqueue(fake.Text("one two three").WithTextChunk(4))
	for ev := range a.Stream(context.Background(), user("count")) {
		if ev.Kind == agent.EventText {
			break
		}
	}
	done := log.of(agent.EventDone)
	if len(done) != 1 || !errors.Is(done[0].Err, agent.ErrStopped) || done[0].Result == nil {
		t.Errorf("observer's Done events = %+v, want one with ErrStopped", done)
	}
	if kinds := log.kinds(); kinds[len(kinds)-1] != "Done" {
		t.Errorf("the observer's last event is %s", kinds[len(kinds)-1])
	}
}

// With several candidates, chunks are merged by candidate index: the run
// streams and continues candidate 0, and the merged response keeps the
// others whole. Before, the merger took each chunk's first candidate by
// position and mixed them into "A1 B1 A2B2".
func TestStreamSeveralCandidates(t *testing.T) {
	srv := newServer(t)
	a := newAgent(t, srv, nil, func(c *agent.Config) {
		c.GenerateConfig = &genai.GenerateContentConfig{CandidateCount: 2}
	})
	cand := func(i int32, text string, finish genai.FinishReason) *genai.Candidate {
		c := &genai.Candidate{Index: i, FinishReason: finish}
		if text != "" {
			c.Content = &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: text}}}
		}
		return c
	}
	chunk := func(cs ...*genai.Candidate) *genai.GenerateContentResponse {
		return &genai.GenerateContentResponse{Candidates: cs}
	}
	srv.Enqueue(&fake.Reply{Raw: true, Chunks: []*genai.GenerateContentResponse{
		chunk(cand(0, "A1 ", ""), cand(1, "B1 ", "")),
		chunk(cand(0, "A2", "")),
		chunk(cand(1, "B2", "")),
		chunk(cand(1, "", genai.FinishReasonStop), cand(0, "", genai.FinishReasonStop)),
	}})
	events, err := collect(t, a.Stream(context.Background(), user("two answers")))
	if err != nil {
		t.Fatal(err)
	}
	var streamed strings.Builder
	for _, e := range events {
		if e.Kind == agent.EventText {
			streamed.WriteString(e.Text)
		}
	}
	res := events[len(events)-1].Result
	if streamed.String() != "A1 A2" || res.Text != "A1 A2" || text(res.History[1]) != "A1 A2" {
		t.Errorf("streamed %q, Result.Text %q, history %q; want candidate 0 alone: A1 A2", streamed.String(), res.Text, text(res.History[1]))
	}
	cands := res.Turns[0].Response.Candidates
	if len(cands) != 2 || cands[1].Index != 1 || text(cands[1].Content) != "B1 B2" || cands[1].FinishReason != genai.FinishReasonStop {
		t.Errorf("merged candidates = %d, second %+v; want candidate 1 whole: B1 B2", len(cands), cands[len(cands)-1])
	}
}

// text joins the text of a content's parts.
func text(c *genai.Content) string {
	var b strings.Builder
	for _, p := range c.Parts {
		b.WriteString(p.Text)
	}
	return b.String()
}
