package geminilive_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/geminilive"
	"github.com/toolnexus/toolnexus-go/geminitest"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// Two calls of one toolCall run at once (each waits until both started)
// and are answered by id; the model's audio and transcript follow.
func TestParallelCalls(t *testing.T) {
	backends(t, func(t *testing.T, srv *geminitest.Server, client *genai.Client) {
		b := newBlocker("lookup")
		srv.EnqueueLive(
			geminitest.LiveCalls(geminitest.Call("lookup", map[string]any{"key": "a"}), geminitest.Call("lookup", map[string]any{"key": "b"})),
			geminitest.LiveAudio("Both found.", make([]byte, 4800)),
		)
		s := connect(t, client, newAgent(t, client, []*toolset.Tool{b.tool}), geminilive.Config{})
		if err := s.SendText("look up a and b"); err != nil {
			t.Fatal(err)
		}
		got := []string{wait(t, b.started), wait(t, b.started)} // both run at once
		slices.Sort(got)
		if !slices.Equal(got, []string{"a", "b"}) {
			t.Fatalf("started %v", got)
		}
		close(b.release)
		evs := s.until(geminilive.EventTurnComplete)
		var audio int
		var said string
		ids := map[string]string{}
		for _, e := range evs {
			switch e.Kind {
			case geminilive.EventToolCall:
				ids[e.Call.ID] = e.Call.Args["key"].(string)
			case geminilive.EventAudio:
				audio += len(e.Audio)
			case geminilive.EventOutputTranscript:
				said += e.Text
			}
		}
		if audio != 4800 || said != "Both found." {
			t.Errorf("audio %d bytes, said %q", audio, said)
		}
		frs, _ := responses(srv)
		if len(frs) != 2 {
			t.Fatalf("%d responses, want 2", len(frs))
		}
		for _, fr := range frs {
			if want := "done " + ids[fr.ID]; fr.Response["result"] != want {
				t.Errorf("response %s = %v, want result %q", fr.ID, fr.Response, want)
			}
		}
	})
}

// A toolCallCancellation cancels the call's context with ErrCancelled, and
// nothing is sent for it.
func TestCancellation(t *testing.T) {
	backends(t, func(t *testing.T, srv *geminitest.Server, client *genai.Client) {
		b := newBlocker("slow")
		srv.EnqueueLive(
			geminitest.LiveCalls(geminitest.Call("slow", map[string]any{"key": "x"})),
			geminitest.LiveMessages(geminitest.LiveCancellation(), geminitest.LiveInterrupted(), geminitest.LiveTurnComplete()),
		)
		s := connect(t, client, newAgent(t, client, []*toolset.Tool{b.tool}), geminilive.Config{})
		if err := s.SendText("do it slowly"); err != nil {
			t.Fatal(err)
		}
		wait(t, b.started)
		if err := s.SendText("no, stop"); err != nil { // the user speaks over the model
			t.Fatal(err)
		}
		if cause := wait(t, b.causes); !errors.Is(cause, geminilive.ErrCancelled) {
			t.Errorf("the tool's context ended with %v, want ErrCancelled", cause)
		}
		evs := s.until(geminilive.EventTurnComplete)
		if !slices.ContainsFunc(evs, func(e *geminilive.Event) bool { return e.Kind == geminilive.EventToolCancelled }) {
			t.Error("no EventToolCancelled")
		}
		// A message after the cancellation gets to the server after any
		// response for the cancelled call would have.
		srv.EnqueueLive(geminitest.LiveText("ok"))
		if err := s.SendText("thanks"); err != nil {
			t.Fatal(err)
		}
		s.until(geminilive.EventTurnComplete)
		if frs, _ := responses(srv); len(frs) != 0 {
			t.Errorf("sent %d responses for a cancelled call", len(frs))
		}
	})
}

// A NON_BLOCKING call runs while the model talks; its response carries the
// scheduling asked for.
func TestNonBlocking(t *testing.T) {
	backends(t, func(t *testing.T, srv *geminitest.Server, client *genai.Client) {
		b := newBlocker("remind")
		srv.EnqueueLive(
			geminitest.LiveMessages(geminitest.LiveToolCall(geminitest.Call("remind", map[string]any{"key": "milk"})),
				geminitest.LiveModelAudio(make([]byte, 960)), geminitest.LiveOutputTranscription("Setting it.", true),
				geminitest.LiveGenerationComplete(), geminitest.LiveTurnComplete()),
			geminitest.LiveText("Reminder set."),
		)
		s := connect(t, client, newAgent(t, client, []*toolset.Tool{b.tool}), geminilive.Config{
			NonBlocking: []string{"remind"}, Scheduling: genai.FunctionResponseSchedulingInterrupt})
		if err := s.SendText("remind me of milk"); err != nil {
			t.Fatal(err)
		}
		wait(t, b.started)
		s.until(geminilive.EventTurnComplete) // the model talked while the tool ran
		close(b.release)
		evs := s.until(geminilive.EventTurnComplete)
		if got := text(evs); got != "Reminder set." {
			t.Errorf("text %q", got)
		}
		frs, _ := responses(srv)
		if len(frs) != 1 || frs[0].Scheduling != genai.FunctionResponseSchedulingInterrupt {
			t.Fatalf("responses %+v", frs)
		}
		for _, m := range srv.LiveMessages() {
			if m.Setup != nil {
				if got := m.Setup.Tools[0].FunctionDeclarations[0].Behavior; got != genai.BehaviorNonBlocking {
					t.Errorf("declared %q", got)
				}
			}
		}
	})
}

// Calls NeedsApproval picks wait for Decide: the approved one runs, the
// denied one is answered as not run.
func TestApprovals(t *testing.T) {
	backends(t, func(t *testing.T, srv *geminitest.Server, client *genai.Client) {
		b := newBlocker("transfer")
		close(b.release)
		s := transferTwice(t, srv, client, b, geminitest.LiveCalls(geminitest.Call("transfer", map[string]any{"key": "yes"}),
			geminitest.Call("transfer", map[string]any{"key": "no"})))
		for range 2 {
			e := s.until(geminilive.EventApproval)
			ev := e[len(e)-1]
			if err := s.Decide(ev.Call.ID, ev.Call.Args["key"] == "yes"); err != nil {
				t.Fatal(err)
			}
			if err := s.Decide(ev.Call.ID, true); !errors.Is(err, geminilive.ErrNoApproval) {
				t.Errorf("a second decision: %v", err)
			}
		}
		s.until(geminilive.EventTurnComplete)
		if len(b.runs) != 1 {
			t.Errorf("%d runs, want 1", len(b.runs))
		}
		frs, _ := responses(srv)
		if len(frs) != 2 {
			t.Fatalf("%d responses", len(frs))
		}
		var outputs, errs int
		for _, fr := range frs {
			if fr.Response["result"] == "done yes" {
				outputs++
			} else if e, _ := fr.Response["error"].(string); e == "tool transfer was not run: it was denied" {
				errs++
			}
		}
		if outputs != 1 || errs != 1 {
			t.Errorf("responses %+v", frs)
		}
	})
}

// A goAway, then a dropped socket: the session resumes each time with its
// latest handle; the call running across the goAway is answered on the
// new connection, once; the call answered before the drop is not run
// again.
func TestResumption(t *testing.T) {
	backends(t, func(t *testing.T, srv *geminitest.Server, client *genai.Client) {
		b := newBlocker("slow")
		srv.EnqueueLive(
			geminitest.LiveMessages(geminitest.LiveResumptionUpdate(), geminitest.LiveToolCall(geminitest.Call("slow", map[string]any{"key": "1"})),
				geminitest.LiveGoAway(0)),
			geminitest.LiveMessages(geminitest.LiveResumptionUpdate(), geminitest.LiveModelText("Done."),
				geminitest.LiveGenerationComplete(), geminitest.LiveTurnComplete()).WithClose(geminitest.LiveInternalError, "Internal error encountered."),
			geminitest.LiveText("Still here."),
		)
		s := connect(t, client, newAgent(t, client, []*toolset.Tool{b.tool}), geminilive.Config{})
		if err := s.SendText("go"); err != nil {
			t.Fatal(err)
		}
		wait(t, b.started)
		s.until(geminilive.EventReconnected)
		close(b.release) // the call ends after the goAway: answered on connection 2
		s.until(geminilive.EventReconnected)
		if err := s.SendText("still there?"); err != nil {
			t.Fatal(err)
		}
		evs := s.until(geminilive.EventTurnComplete)
		if got := text(evs); got != "Still here." {
			t.Errorf("text %q", got)
		}
		frs, conns := responses(srv)
		if len(frs) != 1 || conns[0] != 2 {
			t.Errorf("responses %+v on connections %v, want one on 2", frs, conns)
		}
		if len(b.runs) != 1 {
			t.Errorf("%d runs, want 1", len(b.runs))
		}
		if s.Handle() == "" {
			t.Error("no handle")
		}
		msgs := srv.LiveMessages()
		if last := msgs[len(msgs)-1]; last.Conn != 3 || last.Session != msgs[0].Session {
			t.Errorf("the last message came on connection %d of session %s, want 3 of %s", last.Conn, last.Session, msgs[0].Session)
		}
	})
}

// The model's socket closing mid-turn, with no handle to resume with, ends
// the events with an error that says so, and the calls are cancelled.
func TestSocketClosed(t *testing.T) {
	backends(t, func(t *testing.T, srv *geminitest.Server, client *genai.Client) {
		srv.EnqueueLive(geminitest.LiveMessages(geminitest.LiveModelAudio(make([]byte, 960))).
			WithClose(geminitest.LiveInternalError, "Internal error encountered."))
		s := connect(t, client, newAgent(t, client, nil), geminilive.Config{})
		if err := s.SendText("hello"); err != nil {
			t.Fatal(err)
		}
		err := s.failure()
		var ce *websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != geminitest.LiveInternalError {
			t.Fatalf("error %v, want a 1011 close", err)
		}
		if err := s.SendText("again"); !errors.Is(err, geminilive.ErrClosed) {
			t.Errorf("sending after the failure: %v", err)
		}
	})
}

// A tool's progress reports come as EventToolProgress, before its result.
func TestProgress(t *testing.T) {
	backends(t, func(t *testing.T, srv *geminitest.Server, client *genai.Client) {
		tool := toolset.MustFunc("count", "Counts", func(ctx context.Context, in struct{}) (string, error) {
			toolset.ReportProgress(ctx, 1, 2, "half")
			return "counted", nil
		})
		srv.EnqueueLive(geminitest.LiveCalls(geminitest.Call("count", nil)), geminitest.LiveText("Counted."))
		s := connect(t, client, newAgent(t, client, []*toolset.Tool{tool}), geminilive.Config{})
		if err := s.SendText("count"); err != nil {
			t.Fatal(err)
		}
		evs := s.until(geminilive.EventToolResult)
		p := evs[len(evs)-2]
		if p.Kind != geminilive.EventToolProgress || p.Progress.Message != "half" || p.Progress.Done != 1 {
			t.Errorf("before the result: %+v", p)
		}
		s.until(geminilive.EventTurnComplete)
	})
}

// Arguments that fail the schema and a panicking tool are answered with
// error results, as the loop answers them, and the session goes on.
func TestToolErrors(t *testing.T) {
	backends(t, func(t *testing.T, srv *geminitest.Server, client *genai.Client) {
		add := toolset.MustFunc("add", "Adds", func(ctx context.Context, in struct {
			N int `json:"n"`
		}) (int, error) {
			return in.N + 1, nil
		})
		boom := toolset.MustFunc("boom", "Panics", func(ctx context.Context, in struct{}) (string, error) {
			panic("kaboom")
		})
		srv.EnqueueLive(geminitest.LiveCalls(geminitest.Call("add", map[string]any{"n": "one"}), geminitest.Call("boom", nil)),
			geminitest.LiveText("Sorry."))
		s := connect(t, client, newAgent(t, client, []*toolset.Tool{add, boom}), geminilive.Config{})
		if err := s.SendText("add and boom"); err != nil {
			t.Fatal(err)
		}
		if got := text(s.until(geminilive.EventTurnComplete)); got != "Sorry." {
			t.Errorf("text %q", got)
		}
		frs, _ := responses(srv)
		if len(frs) != 2 {
			t.Fatalf("%d responses", len(frs))
		}
		for _, fr := range frs {
			if e, _ := fr.Response["error"].(string); e == "" {
				t.Errorf("%s answered %v, want an error", fr.Name, fr.Response)
			}
		}
	})
}

// A refusal at the setup is Connect's error, a *websocket.CloseError; a
// NonBlocking name that is no tool is refused before dialing.
func TestConnectErrors(t *testing.T) {
	srv := geminitest.NewServer() // not Start: the refusal is expected
	defer srv.Close()
	for _, cc := range []*genai.ClientConfig{srv.LiveClientConfig(), srv.LiveVertexClientConfig()} {
		client, err := genai.NewClient(t.Context(), cc)
		if err != nil {
			t.Fatal(err)
		}
		a, err := agent.New(agent.Config{Models: client.Models, Model: "gemini-2.5-flash"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = geminilive.Connect(t.Context(), client, a, geminilive.Config{})
		var ce *websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != geminitest.LivePolicyViolation {
			t.Errorf("%v: a model Live does not serve: %v", cc.Backend, err)
		}
		_, err = geminilive.Connect(t.Context(), client, newAgent(t, client, nil), geminilive.Config{NonBlocking: []string{"nope"}})
		if err == nil {
			t.Errorf("%v: NonBlocking naming no tool: no error", cc.Backend)
		}
	}
}

// The end of Connect's context closes the session: Events ends, the
// calls running are cancelled.
func TestContextEnds(t *testing.T) {
	backends(t, func(t *testing.T, srv *geminitest.Server, client *genai.Client) {
		b := newBlocker("slow")
		srv.EnqueueLive(geminitest.LiveCalls(geminitest.Call("slow", map[string]any{"key": "x"})))
		ctx, cancel := context.WithCancel(t.Context())
		s, err := geminilive.Connect(ctx, client, newAgent(t, client, []*toolset.Tool{b.tool}), geminilive.Config{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SendText("go"); err != nil {
			t.Fatal(err)
		}
		wait(t, b.started)
		cancel()
		if cause := wait(t, b.causes); !errors.Is(cause, geminilive.ErrClosed) {
			t.Errorf("the tool's context ended with %v", cause)
		}
		done := make(chan struct{})
		go func() {
			for range s.Events() {
			}
			close(done)
		}()
		wait(t, done)
		if err := s.SendText("again"); !errors.Is(err, geminilive.ErrClosed) {
			t.Errorf("sending after the end: %v", err)
		}
	})
}

// The setup carries the agent's model, system instruction, generation
// config, tools and built-in tools, with the session's modalities,
// transcription, compression and resumption.
func TestSetup(t *testing.T) {
	backends(t, func(t *testing.T, srv *geminitest.Server, client *genai.Client) {
		b := newBlocker("lookup")
		temp := float32(0.5)
		a := newAgent(t, client, []*toolset.Tool{b.tool}, func(c *agent.Config) {
			c.GenerateConfig = &genai.GenerateContentConfig{Temperature: &temp,
				SystemInstruction: genai.NewContentFromText("Be brief.", genai.RoleUser)}
			c.BuiltinTools = []*genai.Tool{{GoogleSearch: &genai.GoogleSearch{}}}
		})
		trigger := int64(1000)
		connect(t, client, a, geminilive.Config{Compression: &genai.ContextWindowCompressionConfig{TriggerTokens: &trigger}})
		setup := srv.LiveMessages()[0].Setup
		var search, lookup bool
		for _, tool := range setup.Tools {
			search = search || tool.GoogleSearch != nil
			for _, d := range tool.FunctionDeclarations {
				lookup = lookup || d.Name == "lookup" && d.Behavior == ""
			}
		}
		switch {
		case !strings.HasSuffix(setup.Model, model):
			t.Errorf("model %q", setup.Model)
		case setup.SystemInstruction == nil || setup.SystemInstruction.Parts[0].Text != "Be brief.":
			t.Errorf("system instruction %+v", setup.SystemInstruction)
		case setup.GenerationConfig == nil || setup.GenerationConfig.Temperature == nil || *setup.GenerationConfig.Temperature != temp ||
			!slices.Equal(setup.GenerationConfig.ResponseModalities, []genai.Modality{genai.ModalityAudio}):
			t.Errorf("generation config %+v", setup.GenerationConfig)
		case !search || !lookup:
			t.Errorf("tools: search %v, lookup %v", search, lookup)
		case setup.InputAudioTranscription == nil || setup.OutputAudioTranscription == nil:
			t.Error("no transcription")
		case setup.SessionResumption == nil:
			t.Error("no resumption")
		case setup.ContextWindowCompression == nil || *setup.ContextWindowCompression.TriggerTokens != trigger:
			t.Errorf("compression %+v", setup.ContextWindowCompression)
		}
	})
}

// The agent's MaxParallel bounds the calls that run at once.
func TestMaxParallel(t *testing.T) {
	backends(t, func(t *testing.T, srv *geminitest.Server, client *genai.Client) {
		var mu sync.Mutex
		active, most := 0, 0
		release := make(chan struct{})
		started := make(chan struct{}, 3)
		tool := toolset.MustFunc("one", "One at a time", func(ctx context.Context, in struct{}) (string, error) {
			mu.Lock()
			active++
			most = max(most, active)
			mu.Unlock()
			started <- struct{}{}
			<-release
			mu.Lock()
			active--
			mu.Unlock()
			return "ok", nil
		})
		srv.EnqueueLive(geminitest.LiveCalls(geminitest.Call("one", nil), geminitest.Call("one", nil), geminitest.Call("one", nil)),
			geminitest.LiveText("Done."))
		s := connect(t, client, newAgent(t, client, []*toolset.Tool{tool}, func(c *agent.Config) { c.MaxParallel = 1 }), geminilive.Config{})
		if err := s.SendText("three"); err != nil {
			t.Fatal(err)
		}
		wait(t, started)
		close(release)
		s.until(geminilive.EventTurnComplete)
		if most != 1 {
			t.Errorf("%d calls ran at once, want 1", most)
		}
	})
}
