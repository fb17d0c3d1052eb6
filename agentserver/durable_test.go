package agentserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/session"
	"google.golang.org/genai"
)

// Close in the middle of an answer saves the text its reader was shown:
// with a journaling store (session.Memory) and with a store that only
// appends.
func TestCloseSavesShownText(t *testing.T) {
	for _, tc := range []struct {
		name  string
		store func() session.Store
	}{
		{"journal", func() session.Store { return session.NewMemory() }},
		{"append", func() session.Store { return &countingStore{Store: session.NewMemory(), appends: map[string]int{}} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{config: func(c *agentserver.Config) { c.Store = tc.store() }})
			reply := fake.Text("Hello there, the answer goes on and on.").WithTextChunk(6)
			reply.EventDelay = time.Hour // the rest never comes: Close cuts it
			h.model.Enqueue(reply)
			got := make(chan *response)
			go func() { got <- h.post(bg, "alice", testRequest{Thread: "t1", Text: "Say hello"}) }()
			h.await("alice", "t1", func(info agentserver.RunInfo) bool { return info.Len >= 3 }) // start, step, the first piece
			ctx, cancel := context.WithCancel(bg)
			cancel()
			if err := h.srv.Close(ctx); err != context.Canceled {
				t.Errorf("Close = %v, want context.Canceled", err)
			}
			resp := <-got
			shown := resp.text()
			if shown == "" {
				t.Fatalf("the stream showed no text: %v", resp.kinds())
			}
			stored := h.stored("alice", "t1")
			if len(stored) != 2 || stored[1].Role != genai.RoleModel || stored[1].Parts[0].Text != shown {
				t.Errorf("stored %s; want the question and the text shown, %q", dump(stored), shown)
			}
		})
	}
}

// dump returns contents as the model request's texts, for messages.
func dump(contents []*genai.Content) []string {
	return requestText(&fake.Request{Contents: contents})
}

// A journal that is not agentserver's does not keep the server from
// starting: it is logged and left, and its thread stays busy.
func TestRecoverSkipsForeignJournal(t *testing.T) {
	store := session.NewMemory()
	if err := store.BeginRun(bg, "agentserver/alice/t1", "run_x", session.Claim{}, [][]byte{[]byte("not json")}); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, harnessOpts{config: func(c *agentserver.Config) { c.Store = store }})
	if _, err := h.srv.Current(bg, "alice", "t1"); !isErr(err, agentserver.ErrNotFound) {
		t.Errorf("Current = %v; want ErrNotFound", err)
	}
	if resp := h.post(bg, "alice", testRequest{Thread: "t1", Text: "hi"}); resp.status != 409 || resp.errorCode() != "busy" {
		t.Errorf("a run on the thread: %d %s; want 409 busy", resp.status, resp.body)
	}
	if j, err := store.LoadRun(bg, "agentserver/alice/t1"); err != nil || j.Run != "run_x" {
		t.Errorf("the journal: %+v, %v; want it left as it was", j, err)
	}
}

// failingEnd is a journaling store whose EndRun fails.
type failingEnd struct{ *session.Memory }

var errStoreDown = errors.New("the store is down")

func (failingEnd) EndRun(context.Context, string, string, session.Claim, []*genai.Content) error {
	return errStoreDown
}

// The answer of a run is stored with EndRun, not as a step of its own
// first; when EndRun fails, the journal left for the next Server holds
// it, and that Server saves it without asking the model again.
func TestAnswerJournaledWhenEndRunFails(t *testing.T) {
	mem := session.NewMemory()
	h := newHarness(t, harnessOpts{config: func(c *agentserver.Config) { c.Store = failingEnd{mem} }})
	h.model.Enqueue(fake.Calls(call("Paris")), fake.Text("Sunny in Paris."))
	resp := h.post(bg, "alice", testRequest{Thread: "t1", Text: "Weather in Paris?"})
	if last := resp.last(); last.Kind != agentserver.KindDone || last.Done.State == agentserver.StateDone {
		t.Fatalf("the run ended with %+v; want it failed, its save refused", last)
	}
	j, err := mem.LoadRun(bg, "agentserver/alice/t1")
	if err != nil {
		t.Fatalf("the journal: %v", err)
	}
	if n := len(j.Entries); n != 4 { // the run, the call's turn, its result, the answer
		t.Errorf("the journal holds %d entries; want 4: the run, two turns, a result", n)
	}

	h2 := newHarness(t, harnessOpts{config: func(c *agentserver.Config) { c.Store = mem }})
	if got, want := dump(h2.stored("alice", "t1")), []string{"user: Weather in Paris?", `model: call get_weather{"city":"Paris"}`,
		`user: response get_weather{"result":"sunny in Paris"}`, "model: Sunny in Paris."}; !slices.Equal(got, want) {
		t.Errorf("the next server saved\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := len(h2.model.Requests()); n != 0 {
		t.Errorf("the next server asked the model %d times; want 0", n)
	}
}

// A run of one call and an answer writes to its journal four times: the
// run (claimed by the BeginRun that creates it), the call's turn, its
// result, and EndRun with the answer; and claims it no more.
func TestServedRunWrites(t *testing.T) {
	store := &countingJournal{Journaler: session.NewMemory()}
	h := newHarness(t, harnessOpts{config: func(c *agentserver.Config) { c.Store = store }})
	h.model.Enqueue(fake.Calls(call("Paris")), fake.Text("Sunny in Paris."))
	if resp := h.post(bg, "alice", testRequest{Thread: "t1", Text: "Weather in Paris?"}); resp.last().Kind != agentserver.KindDone {
		t.Fatalf("the run: %v %s", resp.kinds(), resp.body)
	}
	if n := store.writes.Load(); n != 4 {
		t.Errorf("the run wrote %d times; want 4", n)
	}
	if n := store.claims.Load(); n != 0 {
		t.Errorf("the run was claimed %d times besides its BeginRun; want 0", n)
	}
}

// Close leaves a run that waits for an approval in its journal, as it
// is, on a journaling store: not saved, its pause the journal's last
// entry. A store that only appends gets the run cancelled and saved, its
// call not run (as before).
func TestCloseLeavesWaitingRun(t *testing.T) {
	for _, tc := range []struct {
		name    string
		journal bool
	}{{"journal", true}, {"append", false}} {
		t.Run(tc.name, func(t *testing.T) {
			mem := session.NewMemory()
			var store session.Store = mem
			if !tc.journal {
				store = appendOnly{mem}
			}
			h := newHarness(t, harnessOpts{
				config: func(c *agentserver.Config) { c.Store = store },
				agent:  func(c *agent.Config) { c.NeedsApproval = func(*genai.FunctionCall) bool { return true } },
			})
			h.model.Enqueue(fake.Calls(call("Paris")), fake.Text("Sunny."))
			resp := h.post(bg, "alice", testRequest{Thread: "t1", Text: "Weather in Paris?"})
			if p := resp.last(); p.Kind != agentserver.KindPause {
				t.Fatalf("the run did not pause: %v", resp.kinds())
			}
			if err := h.srv.Close(bg); err != nil {
				t.Fatalf("Close: %v", err)
			}
			stored, _ := mem.Load(bg, "agentserver/alice/t1")
			j, jerr := mem.LoadRun(bg, "agentserver/alice/t1")
			if !tc.journal {
				if len(stored) != 3 || jerr == nil {
					t.Errorf("stored %s, journal %v; want the run saved, its call not run", dump(stored), jerr)
				}
				return
			}
			if len(stored) != 0 {
				t.Errorf("stored %s; want nothing: the run is left to the next server", dump(stored))
			}
			if jerr != nil {
				t.Fatalf("the journal: %v", jerr)
			}
			var kinds []string
			for _, e := range j.Entries {
				var k struct{ Kind string }
				json.Unmarshal(e, &k)
				kinds = append(kinds, k.Kind)
			}
			if want := []string{"begin", "turn", "pause"}; !slices.Equal(kinds, want) {
				t.Errorf("the journal holds %v; want %v", kinds, want)
			}
		})
	}
}
