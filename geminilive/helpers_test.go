package geminilive_test

import (
	"context"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/geminilive"
	"github.com/toolnexus/toolnexus-go/geminitest"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

const model = "gemini-2.5-flash-native-audio-preview-12-2025"

// hang bounds every wait of a test: reached, the test has hung.
const hang = 30 * time.Second

// backends runs f on the fake's Gemini API and Vertex AI Live endpoints.
func backends(t *testing.T, f func(t *testing.T, srv *geminitest.Server, client *genai.Client)) {
	for _, b := range []string{"gemini", "vertex"} {
		t.Run(b, func(t *testing.T) {
			srv := geminitest.Start(t)
			t.Cleanup(func() {
				for _, m := range srv.LiveRejections() {
					t.Errorf("the fake refused live message #%d (rule %s): %d %s", m.Seq, m.Rejection.Rule, m.Rejection.Code, m.Rejection.Reason)
				}
			})
			cc := srv.LiveClientConfig()
			if b == "vertex" {
				cc = srv.LiveVertexClientConfig()
			}
			client, err := genai.NewClient(t.Context(), cc)
			if err != nil {
				t.Fatal(err)
			}
			f(t, srv, client)
		})
	}
}

// newAgent returns an agent with tools on client's model.
func newAgent(t *testing.T, client *genai.Client, tools []*toolset.Tool, edit ...func(*agent.Config)) *agent.Agent {
	t.Helper()
	cfg := agent.Config{Models: client.Models, Model: model, Tools: toolset.MustNew(tools...)}
	for _, e := range edit {
		e(&cfg)
	}
	a, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// session is a live session under test, its events read into a channel.
type session struct {
	*geminilive.Session
	t      *testing.T
	events chan event
}

type event struct {
	e   *geminilive.Event
	err error
}

// connect opens a session closed when the test ends.
func connect(t *testing.T, client *genai.Client, a *agent.Agent, cfg geminilive.Config) *session {
	t.Helper()
	s, err := geminilive.Connect(t.Context(), client, a, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ss := &session{Session: s, t: t, events: make(chan event, 1024)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for e, err := range s.Events() {
			ss.events <- event{e, err}
		}
		close(ss.events)
	}()
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
		<-done
	})
	return ss
}

// until returns the events up to the first of kind, failing the test on
// an error or a hang.
func (s *session) until(kind geminilive.EventKind) []*geminilive.Event {
	s.t.Helper()
	var seen []*geminilive.Event
	deadline := time.After(hang)
	for {
		select {
		case e, ok := <-s.events:
			if !ok {
				s.t.Fatalf("events ended waiting for %v", kind)
			}
			if e.err != nil {
				s.t.Fatalf("waiting for %v: %v", kind, e.err)
			}
			seen = append(seen, e.e)
			if e.e.Kind == kind {
				return seen
			}
		case <-deadline:
			s.t.Fatalf("hung waiting for %v", kind)
		}
	}
}

// failure returns the error the events end with, failing the test on a
// hang.
func (s *session) failure() error {
	s.t.Helper()
	deadline := time.After(hang)
	for {
		select {
		case e, ok := <-s.events:
			if !ok {
				s.t.Fatal("events ended with no error")
			}
			if e.err != nil {
				return e.err
			}
		case <-deadline:
			s.t.Fatal("hung waiting for an error")
		}
	}
}

// responses returns the function responses the server received, with the
// connection each came on.
func responses(srv *geminitest.Server) (frs []*genai.FunctionResponse, conns []int) {
	for _, m := range srv.LiveMessages() {
		if m.ToolResponse != nil {
			for _, fr := range m.ToolResponse.FunctionResponses {
				frs = append(frs, fr)
				conns = append(conns, m.Conn)
			}
		}
	}
	return frs, conns
}

// blocker is a tool that counts its runs, says it started, and returns
// when release is closed or its context is done, recording the cause.
type blocker struct {
	tool    *toolset.Tool
	started chan string
	release chan struct{}
	runs    chan struct{}
	causes  chan error
}

func newBlocker(name string) *blocker {
	b := &blocker{started: make(chan string, 16), release: make(chan struct{}), runs: make(chan struct{}, 16), causes: make(chan error, 16)}
	b.tool = toolset.MustFunc(name, "A tool that waits", func(ctx context.Context, in struct {
		Key string `json:"key"`
	}) (string, error) {
		b.runs <- struct{}{}
		b.started <- in.Key
		select {
		case <-b.release:
			return "done " + in.Key, nil
		case <-ctx.Done():
			b.causes <- context.Cause(ctx)
			return "", context.Cause(ctx)
		}
	})
	return b
}

// wait receives from c, failing the test on a hang.
func wait[T any](t *testing.T, c <-chan T) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(hang):
		t.Fatal("hung")
		panic("unreachable")
	}
}

// text returns the text of the EventText events of evs.
func text(evs []*geminilive.Event) string {
	var s string
	for _, e := range evs {
		if e.Kind == geminilive.EventText {
			s += e.Text
		}
	}
	return s
}

// transferTwice opens a session whose agent has b's tool ("transfer")
// and asks for every call's approval, and asks for two transfers: calls,
// then "One done." once they are answered.
func transferTwice(t *testing.T, srv *geminitest.Server, client *genai.Client, b *blocker, calls *geminitest.LiveReply) *session {
	t.Helper()
	srv.EnqueueLive(calls, geminitest.LiveText("One done."))
	a := newAgent(t, client, []*toolset.Tool{b.tool}, func(c *agent.Config) {
		c.NeedsApproval = func(*genai.FunctionCall) bool { return true }
	})
	s := connect(t, client, a, geminilive.Config{})
	if err := s.SendText("transfer twice"); err != nil {
		t.Fatal(err)
	}
	return s
}
