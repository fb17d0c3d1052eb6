package geminiinteractions_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"weak"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/geminiinteractions"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

// converse runs a conversation of turns user messages on a, each made of
// text(i) and answered by the server in one request, and returns its
// history. each, when not nil, runs after each turn.
func converse(t *testing.T, a *agent.Agent, turns int, text func(i int) string, each func(i int)) []*genai.Content {
	t.Helper()
	var history []*genai.Content
	for i := range turns {
		res, err := a.Run(context.Background(), append(history, user(text(i))...))
		if err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
		history = res.History
		if each != nil {
			each(i)
		}
	}
	return history
}

// alive returns how many of the contents tracked are still reachable,
// after a collection: those the Models keeps, once the test dropped them.
func alive(tracked []weak.Pointer[genai.Content]) int {
	runtime.GC()
	runtime.GC()
	n := 0
	for _, w := range tracked {
		if w.Value() != nil {
			n++
		}
	}
	return n
}

// track returns weak pointers to contents.
func track(contents []*genai.Content) []weak.Pointer[genai.Content] {
	out := make([]weak.Pointer[genai.Content], len(contents))
	for i, c := range contents {
		out[i] = weak.Make(c)
	}
	return out
}

// A long conversation, each of whose interactions is remembered in turn,
// keeps alive only what the remembered interactions added: each its user
// message and its answer. Before, a remembered interaction kept its
// ancestors, and with them the whole conversation: the 8 interactions
// remembered out of 100 kept all 200 contents alive.
func TestRememberedContentsBounded(t *testing.T) {
	const keep, turns = 8, 100
	srv := newServer(t)
	srv.SetReplyFunc(func(*fake.Request) *fake.Reply { return fake.Text("Noted.") })
	m := geminiinteractions.New(srv.Client(), geminiinteractions.Config{MaxInteractions: keep})
	a := newAgent(t, m)
	tracked := track(converse(t, a, turns, func(i int) string { return fmt.Sprintf("Message %d.", i) }, nil))
	if n := alive(tracked); n > 2*keep {
		t.Errorf("%d of the conversation's %d contents kept alive by %d remembered interactions; want at most %d", n, len(tracked), keep, 2*keep)
	}
	if s := m.Stats(); s.Chained != turns-1 || s.Remembered != keep {
		t.Errorf("Stats() = %+v; want every turn after the first chained, %d remembered", s, keep)
	}
	runtime.KeepAlive(m)
}

// Config.MaxRememberedBytes bounds what the remembered interactions hold,
// at every turn, and the newest interaction of a conversation still
// continues it when the older ones, and the contents they kept, are
// forgotten: its running fingerprint stands for its whole history.
func TestMaxRememberedBytes(t *testing.T) {
	const bound, turns = 64 << 10, 60
	srv := newServer(t)
	srv.SetReplyFunc(func(*fake.Request) *fake.Reply { return fake.Text("Noted.") })
	m := geminiinteractions.New(srv.Client(), geminiinteractions.Config{MaxRememberedBytes: bound})
	a := newAgent(t, m)
	long := strings.Repeat("A long message. ", 256) // 4 KiB
	history := converse(t, a, turns, func(i int) string { return fmt.Sprint(i, long) }, func(i int) {
		if s := m.Stats(); s.RememberedBytes > bound || s.Remembered == 0 {
			t.Errorf("turn %d: %d interactions remembered, holding %d bytes; want at most %d", i, s.Remembered, s.RememberedBytes, bound)
		}
	})
	s := m.Stats()
	if s.Chained != turns-1 || s.Remembered >= turns || s.Remembered*len(long) > bound {
		t.Errorf("Stats() = %+v; want every turn after the first chained, and the interactions that fit in %d bytes remembered", s, bound)
	}
	tracked := track(history)
	history = nil
	if n := alive(tracked); n > 2*s.Remembered {
		t.Errorf("%d contents kept alive by %d remembered interactions; want at most %d", n, s.Remembered, 2*s.Remembered)
	}
	runtime.KeepAlive(m)
	_ = history

	// An interaction that alone holds more is not remembered: the next
	// turn sends the whole history.
	m2 := geminiinteractions.New(srv.Client(), geminiinteractions.Config{MaxRememberedBytes: 1 << 10})
	a2 := newAgent(t, m2)
	converse(t, a2, 2, func(i int) string { return long }, nil)
	if s := m2.Stats(); s.Remembered != 0 || s.Chained != 0 || s.Whole != 2 {
		t.Errorf("Stats() = %+v; want nothing remembered, each turn sent whole", s)
	}
}

// A call checks its contents against the one interaction it may continue,
// with one comparison, however long the conversation: it does not walk
// the chain. Before, it walked the whole chain back to its first
// interaction, comparing every content of the history (2 per turn, 198
// steps at turn 100).
func TestCallDoesNotWalkTheChain(t *testing.T) {
	const turns = 100
	srv := newServer(t)
	srv.SetReplyFunc(func(*fake.Request) *fake.Reply { return fake.Text("Noted.") })
	m := geminiinteractions.New(srv.Client(), geminiinteractions.Config{})
	a := newAgent(t, m)
	var before int64
	converse(t, a, turns, func(i int) string { return fmt.Sprintf("Message %d.", i) }, func(i int) {
		if steps := geminiinteractions.Checked(m) - before; i > 0 && steps > 1 {
			t.Errorf("turn %d took %d steps to find the interaction it continues; want 1", i, steps)
		}
		before = geminiinteractions.Checked(m)
	})
	if s := m.Stats(); s.Chained != turns-1 {
		t.Errorf("Stats() = %+v; want every turn after the first chained", s)
	}
}
