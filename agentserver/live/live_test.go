package live_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/gorilla/websocket"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/agentserver/live"
	"github.com/toolnexus/toolnexus-go/geminitest"
	"google.golang.org/genai"
)

// weatherTurn scripts a spoken question about Paris: the model hears it,
// calls get_weather, and answers in two chunks of audio.
func weatherTurn(e *env, city string, chunks ...[]byte) {
	e.model.EnqueueLive(
		geminitest.LiveMessages(geminitest.LiveInputTranscription("What's the weather in "+city+"?", true),
			geminitest.LiveToolCall(&genai.FunctionCall{Name: "get_weather", Args: map[string]any{"city": city}})),
		geminitest.LiveAudio("It is sunny in "+city+".", chunks...))
}

func TestVoiceTurn(t *testing.T) {
	noLeaks(t)
	e := newEnv(t, setup{})
	out1, out2 := bytes.Repeat([]byte{1, 2}, 2400), bytes.Repeat([]byte{3, 4}, 1200)
	weatherTurn(e, "Paris", out1, out2)
	b := e.open(t, "ann", "t1")
	mic := pcm(1600)
	b.sendAudio(mic[:1600])
	b.sendAudio(mic[1600:])
	b.sendJSON(map[string]any{"type": "audio_end"})

	if m := b.until("input_transcript"); m.Text != "What's the weather in Paris?" || !m.Finished {
		t.Errorf("input transcript = %+v", m)
	}
	call := b.until("tool_call")
	if call.Name != "get_weather" || call.Args["city"] != "Paris" || call.ID == "" {
		t.Errorf("tool call = %+v", call)
	}
	res := b.until("tool_result")
	if res.ID != call.ID || string(res.Output) != `"sunny in Paris"` || res.IsError {
		t.Errorf("tool result = %+v (output %s)", res, res.Output)
	}
	if u := <-e.users; u != "ann" {
		t.Errorf("RunUser in the tool = %q, want ann", u)
	}
	tr, audio := b.untilAudio("output_transcript")
	if tr.Text != "It is sunny in Paris." {
		t.Errorf("output transcript = %+v", tr)
	}
	if diff := cmp.Diff([][]byte{out1, out2}, audio); diff != "" {
		t.Errorf("audio to the browser (-want +got):\n%s", diff)
	}
	b.until("turn_complete")

	// The model got the microphone's audio as sent.
	var heard []byte
	for _, m := range e.model.LiveMessages() {
		if ri := m.RealtimeInput; ri != nil && ri.Audio != nil {
			if ri.Audio.MIMEType != "audio/pcm;rate=16000" {
				t.Errorf("audio sent as %q", ri.Audio.MIMEType)
			}
			heard = append(heard, ri.Audio.Data...)
		}
	}
	if !bytes.Equal(heard, mic) {
		t.Errorf("the model heard %d bytes, want the %d sent", len(heard), len(mic))
	}

	// The transcript is in the thread, once the turn is complete.
	h, err := e.srv.History(t.Context(), "ann", "t1")
	if err != nil {
		t.Fatal(err)
	}
	want := []*genai.Content{genai.NewContentFromText("What's the weather in Paris?", genai.RoleUser),
		genai.NewContentFromText("It is sunny in Paris.", genai.RoleModel)}
	if diff := cmp.Diff(want, h); diff != "" {
		t.Errorf("thread (-want +got):\n%s", diff)
	}
	// Another user's thread of the same id is another thread.
	if _, err := e.srv.History(t.Context(), "bob", "t1"); !errors.Is(err, agentserver.ErrNotFound) {
		t.Errorf("bob's t1 = %v, want ErrNotFound", err)
	}
	b.ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
	if ce := b.closed(); ce.Code != websocket.CloseNormalClosure {
		t.Errorf("closed with %v", ce)
	}
}

func TestTextTurnSaved(t *testing.T) {
	e := newEnv(t, setup{})
	e.model.EnqueueLive(geminitest.LiveAudio("Hello!", []byte{0, 0}))
	b := e.open(t, "ann", "t2")
	b.sendJSON(map[string]any{"type": "text", "text": "Hi there"})
	b.until("turn_complete")
	h, err := e.srv.History(t.Context(), "ann", "t2")
	if err != nil {
		t.Fatal(err)
	}
	want := []*genai.Content{genai.NewContentFromText("Hi there", genai.RoleUser), genai.NewContentFromText("Hello!", genai.RoleModel)}
	if diff := cmp.Diff(want, h); diff != "" {
		t.Errorf("thread (-want +got):\n%s", diff)
	}
}

// askApproval opens a session whose every call needs approval, asks about
// Oslo, and returns the approval the browser gets.
func askApproval(t *testing.T, server func(*agentserver.Config)) (*env, *browser, live.Message) {
	t.Helper()
	e := newEnv(t, setup{server: server, agent: func(c *agent.Config) {
		c.NeedsApproval = func(*genai.FunctionCall) bool { return true }
	}})
	weatherTurn(e, "Oslo", []byte{0, 0})
	b := e.open(t, "ann", "t1")
	b.sendJSON(map[string]any{"type": "text", "text": "Weather in Oslo?"})
	ap := b.until("approval")
	if ap.Name != "get_weather" || ap.Args["city"] != "Oslo" || ap.ID == "" {
		t.Fatalf("approval = %+v", ap)
	}
	return e, b, ap
}

func TestApproval(t *testing.T) {
	noLeaks(t)
	_, b, ap := askApproval(t, nil)
	// A decision for a call that waits for none is an error, not the end.
	b.sendJSON(map[string]any{"type": "decide", "id": "nope", "approved": true})
	if m := b.until("error"); m.Code != "unknown_call" {
		t.Errorf("error = %+v", m)
	}
	b.sendJSON(map[string]any{"type": "decide", "id": ap.ID, "approved": true})
	if res := b.until("tool_result"); res.ID != ap.ID || string(res.Output) != `"sunny in Oslo"` {
		t.Errorf("result = %+v", res)
	}
	b.until("turn_complete")
}

func TestApprovalDenied(t *testing.T) {
	e, b, ap := askApproval(t, nil)
	b.sendJSON(map[string]any{"type": "decide", "id": ap.ID, "approved": false})
	if res := b.until("tool_result"); !res.IsError || !strings.Contains(string(res.Output), "denied") {
		t.Errorf("result = %+v (%s)", res, res.Output)
	}
	select {
	case u := <-e.users:
		t.Errorf("the denied tool ran (for %q)", u)
	default:
	}
}

func TestApprovalTimeout(t *testing.T) {
	_, b, ap := askApproval(t, func(c *agentserver.Config) { c.ApprovalTimeout = time.Millisecond })
	if res := b.until("tool_result"); res.ID != ap.ID || !res.IsError {
		t.Errorf("result = %+v (%s)", res, res.Output)
	}
}

func TestRefusedBeforeUpgrade(t *testing.T) {
	e := newEnv(t, setup{server: func(c *agentserver.Config) { c.AllowedOrigins = []string{"https://app.example"} }})
	status := func(user, thread string, h http.Header) (int, string) {
		t.Helper()
		_, resp, err := e.dial(t, user, thread, h)
		if err == nil {
			t.Fatalf("user %q thread %q: dialed", user, thread)
		}
		if resp == nil {
			t.Fatalf("no response: %v", err)
		}
		var body struct {
			Error struct{ Code string } `json:"error"`
		}
		json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		return resp.StatusCode, body.Error.Code
	}
	for _, c := range []struct {
		name, user, thread string
		header             http.Header
		status             int
		code               string
	}{
		{"no user", "", "t1", nil, 401, "unauthenticated"},
		{"no thread", "ann", "", nil, 400, "bad_thread"},
		{"long thread", "ann", strings.Repeat("x", 201), nil, 400, "bad_thread"},
		{"other origin", "ann", "t1", http.Header{"Origin": {"https://evil.example"}}, 403, "bad_origin"},
	} {
		if s, code := status(c.user, c.thread, c.header); s != c.status || code != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, s, code, c.status, c.code)
		}
	}
	// The origins allowed: the server's own, and those listed.
	for _, o := range []string{strings.Replace(e.http.URL, "127.0.0.1", "127.0.0.1", 1), "https://app.example"} {
		e.model.EnqueueLive()
		b, _, err := e.dial(t, "ann", "o"+o[len(o)-3:], http.Header{"Origin": {o}})
		if err != nil {
			t.Fatalf("origin %s: %v", o, err)
		}
		b.until("ready")
	}
	// A plain GET is not a websocket.
	resp, err := http.Get(e.http.URL + "/live?thread=t1&user=zed")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("plain GET: %d", resp.StatusCode)
	}
}

func TestSessionLimits(t *testing.T) {
	e := newEnv(t, setup{live: func(c *live.Config) { c.MaxSessionsPerUser = 1; c.MaxSessions = 2 }})
	e.open(t, "ann", "t1")
	dialStatus := func(user, thread string) int {
		t.Helper()
		_, resp, err := e.dial(t, user, thread, nil)
		if err == nil {
			t.Fatalf("%s %s: dialed", user, thread)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := dialStatus("ann", "t2"); s != http.StatusTooManyRequests {
		t.Errorf("ann's second session: %d, want 429", s)
	}
	e.open(t, "bob", "t1") // ann's t1 is not bob's
	if s := dialStatus("cid", "t1"); s != http.StatusServiceUnavailable {
		t.Errorf("a third session: %d, want 503", s)
	}
}

func TestOneSessionPerThread(t *testing.T) {
	e := newEnv(t, setup{})
	e.open(t, "ann", "t1")
	_, resp, err := e.dial(t, "ann", "t1", nil)
	if err == nil {
		t.Fatal("dialed")
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict {
		t.Errorf("a second session on t1: %d, want 409", resp.StatusCode)
	}
}

func TestHostileFrames(t *testing.T) {
	noLeaks(t)
	e := newEnv(t, setup{live: func(c *live.Config) { c.MaxMessageBytes = 1024 }})
	for _, c := range []struct {
		name   string
		kind   int
		data   []byte
		code   int
		reason string
	}{
		{"garbage", websocket.TextMessage, []byte("\x00\xffnot json"), live.CloseBadInput, "bad_message"},
		{"unknown type", websocket.TextMessage, []byte(`{"type":"shell","text":"rm -rf"}`), live.CloseBadInput, "bad_message: unknown type"},
		{"unknown field", websocket.TextMessage, []byte(`{"type":"text","text":"hi","role":"system"}`), live.CloseBadInput, "bad_message"},
		{"empty text", websocket.TextMessage, []byte(`{"type":"text","text":"  "}`), live.CloseBadInput, "bad_message"},
		{"odd audio", websocket.BinaryMessage, []byte{1, 2, 3}, live.CloseBadInput, "bad_audio: an odd number"},
		{"empty audio", websocket.BinaryMessage, []byte{}, live.CloseBadInput, "bad_audio"},
		{"wav", websocket.BinaryMessage, append([]byte("RIFF\x24\x00\x00\x00WAVE"), 0, 0), live.CloseBadInput, "bad_audio: a WAV file"},
		{"webm", websocket.BinaryMessage, []byte{0x1a, 0x45, 0xdf, 0xa3, 0, 0}, live.CloseBadInput, "bad_audio: WebM"},
		{"too big", websocket.BinaryMessage, make([]byte, 2048), live.CloseTooBig, ""}, // gorilla's own close frame
	} {
		b := e.open(t, c.name, "h")
		if err := b.ws.WriteMessage(c.kind, c.data); err != nil {
			t.Fatal(err)
		}
		ce := b.closed()
		if ce.Code != c.code || !strings.HasPrefix(ce.Text, c.reason) {
			t.Errorf("%s: closed %d %q, want %d %q…", c.name, ce.Code, ce.Text, c.code, c.reason)
		}
	}
	if n := len(e.model.LiveMessages()); n != 9 { // the setups alone
		t.Errorf("the model got %d messages, want the 9 setups", n)
	}
}

// waitReleased waits until user's thread takes a session again: the
// previous one has ended, its transcript saved. The new session is left
// open.
func waitReleased(t *testing.T, e *env, user, thread string) {
	t.Helper()
	deadline := time.Now().Add(hang)
	for {
		_, resp, err := e.dial(t, user, thread, nil)
		if err == nil {
			return
		}
		if resp == nil || resp.StatusCode != http.StatusConflict || time.Now().After(deadline) {
			t.Fatalf("thread %s: %v", thread, err)
		}
		resp.Body.Close()
		time.Sleep(5 * time.Millisecond)
	}
}

func TestIdleAndDuration(t *testing.T) {
	noLeaks(t)
	e := newEnv(t, setup{live: func(c *live.Config) { c.IdleTimeout = 50 * time.Millisecond }})
	b := e.open(t, "ann", "t1") // and sends nothing
	if ce := b.closed(); ce.Code != live.CloseLimit || !strings.HasPrefix(ce.Text, "idle") {
		t.Errorf("closed %v", ce)
	}
	e2 := newEnv(t, setup{live: func(c *live.Config) { c.MaxDuration = 50 * time.Millisecond }})
	b2 := e2.open(t, "ann", "t1")
	for { // a session that keeps talking ends all the same
		b2.ws.WriteMessage(websocket.TextMessage, []byte(`{"type":"ping"}`)) // fails once closed
		select {
		case f := <-b2.in:
			var ce *websocket.CloseError
			if errors.As(f.err, &ce) {
				if ce.Code != live.CloseLimit || !strings.HasPrefix(ce.Text, "duration_limit") {
					t.Errorf("closed %v", ce)
				}
				return
			}
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func TestModelClosesMidTurn(t *testing.T) {
	noLeaks(t)
	e := newEnv(t, setup{})
	e.model.EnqueueLive(geminitest.LiveMessages(geminitest.LiveModelAudio([]byte{0, 0}), geminitest.LiveOutputTranscription("It is", false)).
		WithClose(geminitest.LiveInternalError, "Internal error encountered."))
	b := e.open(t, "ann", "t1")
	b.sendJSON(map[string]any{"type": "text", "text": "Weather?"})
	if ce := b.closed(); ce.Code != live.CloseModelError || !strings.HasPrefix(ce.Text, "model_error") {
		t.Errorf("closed %v", ce)
	}
	waitReleased(t, e, "ann", "t1")
	// What was said is saved all the same.
	h, err := e.srv.History(t.Context(), "ann", "t1")
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 2 || h[1].Parts[0].Text != "It is" {
		t.Errorf("thread = %v", h)
	}
}

func TestToolOutlivesTheBrowser(t *testing.T) {
	noLeaks(t)
	e := newEnv(t, setup{})
	e.model.EnqueueLive(geminitest.LiveCalls(&genai.FunctionCall{Name: "get_weather", Args: map[string]any{"city": "Gate"}}))
	b := e.open(t, "ann", "t1")
	b.sendJSON(map[string]any{"type": "text", "text": "Weather at the gate?"})
	b.until("tool_call")
	<-e.users                     // the tool runs, and ignores its context
	b.ws.UnderlyingConn().Close() // the browser vanishes
	// The session ends without waiting for the tool (its context is
	// cancelled: toolset leaves it to finish on its own goroutine).
	if err := e.handler.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-e.users:
		t.Error("the tool ran again")
	default:
	}
	close(e.gate) // the tool returns: noLeaks finds nothing left
}

func TestHandlerClose(t *testing.T) {
	noLeaks(t)
	e := newEnv(t, setup{})
	b := e.open(t, "ann", "t1")
	if err := e.handler.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if ce := b.closed(); ce.Code != websocket.CloseGoingAway {
		t.Errorf("closed %v", ce)
	}
	_, resp, err := e.dial(t, "ann", "t2", nil)
	if err == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("after Close: %v", err)
	}
}

func TestBusyThread(t *testing.T) {
	e := newEnv(t, setup{server: func(c *agentserver.Config) { c.MaxThreadsPerUser = 1 }})
	if err := e.srv.AppendThread(t.Context(), "ann", "old", []*genai.Content{genai.NewContentFromText("hi", genai.RoleUser)}); err != nil {
		t.Fatal(err)
	}
	_, resp, err := e.dial(t, "ann", "new", nil)
	if err == nil {
		t.Fatal("dialed")
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a new thread past the quota: %d, want 429", resp.StatusCode)
	}
	e.open(t, "ann", "old")
}

func TestOriginStar(t *testing.T) {
	e := newEnv(t, setup{server: func(c *agentserver.Config) { c.AllowedOrigins = []string{"*"} }})
	evil := http.Header{"Origin": {"https://other.example"}}
	b, _, err := e.dial(t, "ann", "t1", evil)
	if err != nil {
		t.Fatalf("an origin \"*\" allows, without cookies: %v", err)
	}
	b.until("ready")
	evil.Set("Cookie", "session=ann")
	_, resp, err := e.dial(t, "bob", "t1", evil)
	if err == nil {
		t.Fatal("a cross-origin websocket with the server's cookies was taken under \"*\"")
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("status %d, want 403", resp.StatusCode)
	}
}

func TestBrowserReadsNothing(t *testing.T) {
	noLeaks(t)
	e := newEnv(t, setup{server: func(c *agentserver.Config) { c.WriteTimeout = 50 * time.Millisecond }})
	msgs := make([]*genai.LiveServerMessage, 400)
	for i := range msgs {
		msgs[i] = geminitest.LiveModelAudio(make([]byte, 48000)) // 1 s each: 19 MB in all
	}
	e.model.EnqueueLive(geminitest.LiveTurn(msgs...))
	u := "ws" + strings.TrimPrefix(e.http.URL, "http") + "/live?thread=t1&user=ann"
	ws, _, err := websocket.DefaultDialer.Dial(u, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	ws.WriteMessage(websocket.TextMessage, []byte(`{"type":"text","text":"Talk a lot"}`))
	// The browser reads nothing: its session ends at a write deadline,
	// and the thread takes another session.
	waitReleased(t, e, "ann", "t1")
}

func TestGoAwayThroughTheRoute(t *testing.T) {
	noLeaks(t)
	e := newEnv(t, setup{})
	e.model.EnqueueLive(
		geminitest.LiveTurn(geminitest.LiveResumptionUpdate(), geminitest.LiveOutputTranscription("One.", true)),
		geminitest.LiveMessages(geminitest.LiveGoAway(time.Second)),
		geminitest.LiveTurn(geminitest.LiveOutputTranscription("Two.", true)),
	)
	b := e.open(t, "ann", "t1")
	b.sendJSON(map[string]any{"type": "text", "text": "one"})
	b.until("turn_complete")
	b.sendJSON(map[string]any{"type": "text", "text": "go away"})
	// The session resumes on a new connection; the browser's stays.
	deadline := time.Now().Add(hang)
	for conns(e) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("no second connection")
		}
		time.Sleep(5 * time.Millisecond)
	}
	b.sendJSON(map[string]any{"type": "text", "text": "two"})
	if m := b.until("output_transcript"); m.Text != "Two." {
		t.Errorf("after the goAway: %+v", m)
	}
	b.until("turn_complete")
}

// conns returns the number of Live connections the fake has seen.
func conns(e *env) int {
	n := 0
	for _, m := range e.model.LiveMessages() {
		n = max(n, m.Conn)
	}
	return n
}
