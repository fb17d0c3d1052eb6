package geminilive_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/toolnexus/toolnexus-go/geminilive"
	"github.com/toolnexus/toolnexus-go/geminitest"
	"google.golang.org/genai"
)

// conns returns the number of Live connections srv has seen.
func conns(srv *geminitest.Server) int {
	n := 0
	for _, m := range srv.LiveMessages() {
		n = max(n, m.Conn)
	}
	return n
}

// resumed reports whether m is a setup that resumes a session.
func resumed(m *geminitest.LiveMessage) bool {
	return m.Setup.SessionResumption != nil && m.Setup.SessionResumption.Handle != ""
}

// failResumes scripts srv as a service that fails: the first turn gives
// a handle and closes the connection with 1011; each resumption is
// answered with reply, then closed with 1011.
func failResumes(srv *geminitest.Server, reply func() *geminitest.LiveReply) {
	srv.SetLiveSetupFunc(func(m *geminitest.LiveMessage) *geminitest.LiveReply {
		if !resumed(m) {
			return nil
		}
		return reply().WithClose(geminitest.LiveInternalError, "Internal error encountered.")
	})
	srv.EnqueueLive(geminitest.LiveMessages(geminitest.LiveResumptionUpdate()).
		WithClose(geminitest.LiveInternalError, "Internal error encountered."))
}

// A service that takes the resumption and then closes with 1011 at once,
// forever (or refuses it with 1011 at the setup): the session reconnects
// MaxReconnects times, then ends with ErrTooManyReconnects, which wraps
// the last close.
func TestReconnectBound(t *testing.T) {
	for _, c := range []struct {
		name  string
		reply func() *geminitest.LiveReply
	}{
		{"resumed then closed", func() *geminitest.LiveReply { return geminitest.LiveMessages(geminitest.LiveSetupComplete()) }},
		{"refused at the setup", func() *geminitest.LiveReply { return geminitest.LiveMessages() }},
	} {
		t.Run(c.name, func(t *testing.T) {
			backends(t, func(t *testing.T, srv *geminitest.Server, client *genai.Client) {
				failResumes(srv, c.reply)
				s := connect(t, client, newAgent(t, client, nil), geminilive.Config{MaxReconnects: 3, ReconnectDelay: time.Millisecond})
				if err := s.SendText("hello"); err != nil {
					t.Fatal(err)
				}
				err := s.failure()
				var ce *websocket.CloseError
				if !errors.Is(err, geminilive.ErrTooManyReconnects) || !errors.As(err, &ce) || ce.Code != geminitest.LiveInternalError {
					t.Errorf("error %v, want ErrTooManyReconnects wrapping a 1011 close", err)
				}
				if n := conns(srv); n != 4 {
					t.Errorf("%d connections, want 4: the first and 3 reconnections", n)
				}
			})
		})
	}
}

// A reconnection waits, with jitter, twice as long each time in a row;
// Close during a wait returns at once.
func TestReconnectBackoffEndsWithClose(t *testing.T) {
	srv := geminitest.Start(t)
	client, err := genai.NewClient(t.Context(), srv.LiveClientConfig())
	if err != nil {
		t.Fatal(err)
	}
	failResumes(srv, func() *geminitest.LiveReply { return geminitest.LiveMessages() })
	s, err := geminilive.Connect(t.Context(), client, newAgent(t, client, nil), geminilive.Config{ReconnectDelay: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SendText("hello"); err != nil {
		t.Fatal(err)
	}
	for conns(srv) < 2 { // the first reconnection is at once; the second waits an hour
		time.Sleep(time.Millisecond)
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	if err := wait(t, closed); err != nil {
		t.Error(err)
	}
	for range s.Events() {
	}
	if n := conns(srv); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}

// goAwayAfterTalk is a message of the model's with more audio than the
// session buffers (64 events), and a goAway.
func goAwayAfterTalk() *genai.LiveServerMessage {
	parts := make([]*genai.Part, 100)
	for i := range parts {
		parts[i] = &genai.Part{InlineData: &genai.Blob{MIMEType: geminitest.LiveAudioMIMEType, Data: []byte{0, 0}}}
	}
	return &genai.LiveServerMessage{ServerContent: &genai.LiveServerContent{ModelTurn: &genai.Content{Role: genai.RoleModel, Parts: parts}},
		GoAway: &genai.LiveServerGoAway{TimeLeft: time.Second}}
}

// The common pattern: break out of Events, Close deferred, while the
// event buffer is full and a goAway waits behind it. Close returns, and
// no connection opens after it.
func TestCloseDuringGoAway(t *testing.T) {
	backends(t, func(t *testing.T, srv *geminitest.Server, client *genai.Client) {
		srv.EnqueueLive(geminitest.LiveMessages(geminitest.LiveResumptionUpdate(), goAwayAfterTalk()))
		s, err := geminilive.Connect(t.Context(), client, newAgent(t, client, nil), geminilive.Config{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SendText("talk"); err != nil {
			t.Fatal(err)
		}
		closed := make(chan error, 1)
		go func() {
			defer func() { closed <- s.Close() }()
			for e, err := range s.Events() {
				if err != nil || e.Kind == geminilive.EventAudio {
					break // the rest of the turn and its goAway wait
				}
			}
		}()
		if err := wait(t, closed); err != nil {
			t.Error(err)
		}
		for range s.Events() { // ended
		}
		if n := conns(srv); n != 1 {
			t.Errorf("%d connections, want 1: none after Close", n)
		}
	})
}

// Close while a reconnection after a goAway waits for a setupComplete
// that never comes: Close returns, the connection is closed.
func TestCloseDuringReconnect(t *testing.T) {
	backends(t, func(t *testing.T, srv *geminitest.Server, client *genai.Client) {
		srv.SetLiveSetupFunc(func(m *geminitest.LiveMessage) *geminitest.LiveReply {
			if resumed(m) {
				return geminitest.LiveMessages() // never completed
			}
			return nil
		})
		srv.EnqueueLive(geminitest.LiveMessages(geminitest.LiveResumptionUpdate(), geminitest.LiveGoAway(time.Second)))
		s := connect(t, client, newAgent(t, client, nil), geminilive.Config{})
		if err := s.SendText("go away"); err != nil {
			t.Fatal(err)
		}
		s.until(geminilive.EventGoAway)
		for conns(srv) < 2 {
			time.Sleep(time.Millisecond)
		}
		closed := make(chan error, 1)
		go func() { closed <- s.Close() }()
		if err := wait(t, closed); err != nil {
			t.Error(err)
		}
	})
}

// Connect honours its context: against an endpoint that accepts the
// websocket and never completes the setup, it returns when the context
// ends, with its error; Config.SetupTimeout bounds the setup the same way.
func TestConnectContext(t *testing.T) {
	backends(t, func(t *testing.T, srv *geminitest.Server, client *genai.Client) {
		srv.SetLiveSetupFunc(func(*geminitest.LiveMessage) *geminitest.LiveReply { return geminitest.LiveMessages() })
		a := newAgent(t, client, nil)
		for _, c := range []struct {
			name string
			ctx  func() (context.Context, context.CancelFunc)
			cfg  geminilive.Config
		}{
			{"context", func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(t.Context(), 300*time.Millisecond)
			}, geminilive.Config{}},
			{"SetupTimeout", func() (context.Context, context.CancelFunc) { return context.WithCancel(t.Context()) }, geminilive.Config{SetupTimeout: 50 * time.Millisecond}},
		} {
			ctx, cancel := c.ctx()
			done := make(chan error, 1)
			go func() {
				s, err := geminilive.Connect(ctx, client, a, c.cfg)
				if err == nil {
					s.Close()
				}
				done <- err
			}()
			if err := wait(t, done); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s: Connect returned %v, want context.DeadlineExceeded", c.name, err)
			}
			cancel()
		}
	})
}

// Calls the service sends without ids (Vertex AI's 2.5 native-audio
// models) get ids of the session's own, which Decide takes; their
// responses go without ids, in call order, as the service matches them.
func TestCallsWithoutIDs(t *testing.T) {
	backends(t, func(t *testing.T, srv *geminitest.Server, client *genai.Client) {
		b := newBlocker("transfer")
		close(b.release)
		s := transferTwice(t, srv, client, b, geminitest.LiveCalls(geminitest.Call("transfer", map[string]any{"key": "first"}),
			geminitest.Call("transfer", map[string]any{"key": "second"})).WithoutCallIDs())
		ids := map[string]string{}
		for len(ids) < 2 {
			evs := s.until(geminilive.EventApproval)
			e := evs[len(evs)-1]
			if e.Call.ID == "" || ids[e.Call.ID] != "" {
				t.Fatalf("approval of a call with id %q, after %v", e.Call.ID, ids)
			}
			ids[e.Call.ID] = e.Call.Args["key"].(string)
		}
		var first, second string
		for id, key := range ids {
			if key == "first" {
				first = id
			} else {
				second = id
			}
		}
		// The second is approved and runs first; its response waits for
		// the first's, denied.
		if err := s.Decide(second, true); err != nil {
			t.Fatal(err)
		}
		if err := s.Decide(first, false); err != nil {
			t.Fatal(err)
		}
		if got := text(s.until(geminilive.EventTurnComplete)); got != "One done." {
			t.Errorf("text %q", got)
		}
		frs, _ := responses(srv)
		if len(frs) != 2 {
			t.Fatalf("%d responses, want 2", len(frs))
		}
		if e, _ := frs[0].Response["error"].(string); frs[0].ID != "" || e != "tool transfer was not run: it was denied" {
			t.Errorf("first response %+v, want the denial, without an id", frs[0])
		}
		if frs[1].ID != "" || frs[1].Response["result"] != "done second" {
			t.Errorf("second response %+v, want the second's result, without an id", frs[1])
		}
	})
}

// A handshake the service refuses (credentials, before the upgrade) is
// Connect's error, with the service's status.
func TestConnectRefusedHandshake(t *testing.T) {
	srv := geminitest.NewServer() // not Start: the refusal is expected
	defer srv.Close()
	cc := srv.LiveVertexClientConfig()
	cc.HTTPOptions.Headers = nil // no bearer token
	client, err := genai.NewClient(t.Context(), cc)
	if err != nil {
		t.Fatal(err)
	}
	_, err = geminilive.Connect(t.Context(), client, newAgent(t, client, nil), geminilive.Config{})
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("Connect: %v, want the service's 401", err)
	}
	if rej := srv.LiveRejections(); len(rej) != 1 || rej[0].Rejection.Rule != "live-auth" {
		t.Errorf("rejections %+v", rej)
	}
}
