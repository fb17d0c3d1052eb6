package live_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/agentserver/live"
	"github.com/toolnexus/toolnexus-go/geminitest"
	"google.golang.org/genai"
)

// waitConns waits until the fake has seen n Live connections.
func waitConns(t *testing.T, e *env, n int) {
	t.Helper()
	deadline := time.Now().Add(hang)
	for conns(e) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections, waiting for %d", conns(e), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// closeHandler closes e's handler, which must end every session.
func closeHandler(t *testing.T, e *env) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), hang)
	defer cancel()
	if err := e.handler.Close(ctx); err != nil {
		t.Fatalf("Handler.Close: %v", err)
	}
}

// resumedSetup reports whether m is a setup that resumes a session.
func resumedSetup(m *geminitest.LiveMessage) bool {
	return m.Setup.SessionResumption != nil && m.Setup.SessionResumption.Handle != ""
}

// The browser leaves while the model's session reconnects after a goAway
// (a resumption that never completes): the session ends, the thread and
// the user's one slot take a new session, and Handler.Close returns.
func TestBrowserLeavesDuringGoAway(t *testing.T) {
	noLeaks(t)
	e := newEnv(t, setup{live: func(c *live.Config) { c.MaxSessionsPerUser = 1 }})
	e.model.SetLiveSetupFunc(func(m *geminitest.LiveMessage) *geminitest.LiveReply {
		if resumedSetup(m) {
			return geminitest.LiveMessages() // never completed
		}
		return nil
	})
	e.model.EnqueueLive(
		geminitest.LiveTurn(geminitest.LiveResumptionUpdate(), geminitest.LiveOutputTranscription("One.", true)),
		geminitest.LiveMessages(geminitest.LiveGoAway(time.Second)),
	)
	b := e.open(t, "ann", "t1")
	b.sendJSON(map[string]any{"type": "text", "text": "one"})
	b.until("turn_complete")
	b.sendJSON(map[string]any{"type": "text", "text": "go away"})
	waitConns(t, e, 2)            // the reconnection waits for its setupComplete
	b.ws.UnderlyingConn().Close() // the browser vanishes
	waitReleased(t, e, "ann", "t1")
	closeHandler(t, e)
}

// The model's setup never completes: a browser that leaves meanwhile
// frees its thread, and Handler.Close ends a session still waiting.
func TestSetupNeverCompletes(t *testing.T) {
	noLeaks(t)
	e := newEnv(t, setup{})
	e.model.SetLiveSetupFunc(func(*geminitest.LiveMessage) *geminitest.LiveReply { return geminitest.LiveMessages() })
	b, _, err := e.dial(t, "ann", "t1", nil) // upgraded; "ready" never comes
	if err != nil {
		t.Fatal(err)
	}
	b.sendAudio(pcm(160)) // as the dev UI does: the microphone streams at once
	waitConns(t, e, 1)
	b.ws.UnderlyingConn().Close() // the browser leaves
	waitReleased(t, e, "ann", "t1")
	waitConns(t, e, 2) // the new session's setup waits too
	closeHandler(t, e)
}

// The route's setup deadline (Config.Session.SetupTimeout): a session
// whose model never completes the setup ends with 1011.
func TestSetupTimeout(t *testing.T) {
	noLeaks(t)
	e := newEnv(t, setup{live: func(c *live.Config) { c.Session.SetupTimeout = 50 * time.Millisecond }})
	e.model.SetLiveSetupFunc(func(*geminitest.LiveMessage) *geminitest.LiveReply { return geminitest.LiveMessages() })
	b, _, err := e.dial(t, "ann", "t1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if ce := b.closed(); ce.Code != live.CloseModelError || !strings.HasPrefix(ce.Text, "model_error") {
		t.Errorf("closed %v", ce)
	}
}

// Calls without ids (Vertex AI's 2.5 native-audio models): each approval
// names a call of its own, the approval timer denies both, and the model,
// answered twice without ids, in call order, goes on.
func TestApprovalTimeoutWithoutIDs(t *testing.T) {
	noLeaks(t)
	e := newEnv(t, setup{
		server: func(c *agentserver.Config) { c.ApprovalTimeout = time.Millisecond },
		agent:  func(c *agent.Config) { c.NeedsApproval = func(*genai.FunctionCall) bool { return true } },
	})
	e.model.EnqueueLive(
		geminitest.LiveCalls(&genai.FunctionCall{Name: "get_weather", Args: map[string]any{"city": "Oslo"}},
			&genai.FunctionCall{Name: "get_weather", Args: map[string]any{"city": "Paris"}}).WithoutCallIDs(),
		geminitest.LiveAudio("Neither was allowed.", []byte{0, 0}),
	)
	b := e.open(t, "ann", "t1")
	b.sendJSON(map[string]any{"type": "text", "text": "Weather in Oslo and Paris?"})
	approvals := map[string]string{}
	for len(approvals) < 2 {
		ap := b.until("approval")
		if ap.ID == "" || approvals[ap.ID] != "" {
			t.Fatalf("approval %+v after %v: want an id of its own", ap, approvals)
		}
		approvals[ap.ID] = ap.Args["city"].(string)
	}
	for range 2 {
		res := b.until("tool_result")
		if approvals[res.ID] == "" || !res.IsError || !strings.Contains(string(res.Output), "denied") {
			t.Errorf("result %+v (%s)", res, res.Output)
		}
		delete(approvals, res.ID)
	}
	b.until("turn_complete")
	var ids []string
	for _, m := range e.model.LiveMessages() {
		if tr := m.ToolResponse; tr != nil {
			for _, fr := range tr.FunctionResponses {
				ids = append(ids, fr.ID)
			}
		}
	}
	if len(ids) != 2 || ids[0] != "" || ids[1] != "" {
		t.Errorf("the model got responses with ids %q, want two without", ids)
	}
}

// What the browser sends while the model's session is being set up
// reaches the model once it is, in order.
func TestInputDuringSetup(t *testing.T) {
	noLeaks(t)
	e := newEnv(t, setup{})
	release := make(chan struct{})
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	e.model.SetLiveSetupFunc(func(*geminitest.LiveMessage) *geminitest.LiveReply {
		<-release
		return nil // completed as usual
	})
	e.model.EnqueueLive(geminitest.LiveAudio("Hello!", []byte{0, 0}))
	b, _, err := e.dial(t, "ann", "t1", nil)
	if err != nil {
		t.Fatal(err)
	}
	mic := pcm(320)
	b.sendAudio(mic)
	b.sendJSON(map[string]any{"type": "text", "text": "Hi there"})
	waitConns(t, e, 1)
	close(release)
	b.until("ready")
	b.until("turn_complete")
	var got []string
	for _, m := range e.model.LiveMessages() {
		switch {
		case m.Setup != nil:
			got = append(got, "setup")
		case m.RealtimeInput != nil && m.RealtimeInput.Audio != nil:
			got = append(got, fmt.Sprintf("audio %d", len(m.RealtimeInput.Audio.Data)))
		case m.RealtimeInput != nil:
			got = append(got, "text "+m.RealtimeInput.Text)
		}
	}
	if want := []string{"setup", fmt.Sprintf("audio %d", len(mic)), "text Hi there"}; !slices.Equal(got, want) {
		t.Errorf("the model got %q, want %q", got, want)
	}
}
