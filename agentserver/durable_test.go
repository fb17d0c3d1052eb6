package agentserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/toolset"
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

// AppendThread (a voice session's transcript) is refused as busy while a
// run of the thread is in progress on another Server that shares the
// store, running or waiting for a decision, and is taken once it ends.
func TestAppendThreadBusyOnAnotherServer(t *testing.T) {
	for _, name := range []string{"memory", "postgres"} {
		t.Run(name, func(t *testing.T) {
			storeA, storeB := claimStores(t, name)
			approve := func(c *agent.Config) {
				c.NeedsApproval = func(call *genai.FunctionCall) bool { return call.Args["city"] == "Paris" }
			}
			a := newHarness(t, harnessOpts{agent: approve, config: func(c *agentserver.Config) { c.Store = storeA }})
			b := newHarness(t, harnessOpts{config: func(c *agentserver.Config) { c.Store = storeB }})
			transcript := []*genai.Content{genai.NewContentFromText("(a voice note)", genai.RoleUser)}
			a.model.Enqueue(fake.Calls(call("Gate")), fake.Calls(call("Paris")), fake.Text("Sunny."))
			got := make(chan *response)
			go func() { got <- a.post(bg, "alice", testRequest{Thread: "t1", Text: "gate, then Paris?"}) }()
			<-a.started
			if err := b.srv.AppendThread(bg, "alice", "t1", transcript); !errors.Is(err, agentserver.ErrBusy) {
				t.Errorf("AppendThread on the other Server while the run's tool runs = %v; want ErrBusy", err)
			}
			close(a.gate)
			resp := <-got
			p := resp.last()
			if p.Kind != agentserver.KindPause {
				t.Fatalf("the run did not pause: %v", resp.kinds())
			}
			if err := b.srv.AppendThread(bg, "alice", "t1", transcript); !errors.Is(err, agentserver.ErrBusy) {
				t.Errorf("AppendThread on the other Server while the run waits = %v; want ErrBusy", err)
			}
			if r := a.post(bg, "alice", testRequest{Thread: "t1", Decisions: []agentserver.Decision{{CallID: p.Pending[0].Call.ID, Approved: true}}}); r.last().Kind != agentserver.KindDone {
				t.Fatalf("the decision: %v %s", r.kinds(), r.body)
			}
			if err := b.srv.AppendThread(bg, "alice", "t1", transcript); err != nil {
				t.Errorf("AppendThread once the run ended = %v", err)
			}
			if stored, _ := storeB.Load(bg, threadT1); len(stored) != 7 || stored[6].Parts[0].Text != "(a voice note)" {
				t.Errorf("the thread holds %s; want the run, then the transcript", dump(stored))
			}
		})
	}
}

// flakyLoad is a Memory whose Load fails while fails is above zero,
// counting down: a store that blips.
type flakyLoad struct {
	*session.Memory
	fails atomic.Int32
}

func (f *flakyLoad) Load(ctx context.Context, id string) ([]*genai.Content, error) {
	if f.fails.Add(-1) >= 0 {
		return nil, errStoreDown
	}
	return f.Memory.Load(ctx, id)
}

// A run left by a server that died is picked up by the next, whose first
// Load of the run's thread fails (the store blipped): the journal is not
// dropped, the Load is tried again, and the run goes on and is saved.
func TestLoadFailingOnceAtRecovery(t *testing.T) {
	mem := session.NewMemory()
	if err := mem.Append(bg, threadT1, []*genai.Content{genai.NewContentFromText("Hi", genai.RoleUser), genai.NewContentFromText("Hello.", genai.RoleModel)}); err != nil {
		t.Fatal(err)
	}
	m := fake.NewServer()
	defer m.Close()
	weather := toolset.MustFunc("get_weather", "Weather", func(_ context.Context, in cityIn) (string, error) { return "sunny", nil })
	ag, err := agent.New(agent.Config{Models: m.Client().Models, Model: model, Tools: toolset.MustNew(weather)})
	if err != nil {
		t.Fatal(err)
	}
	seedJournal(t, mem, threadT1, session.Claim{}, ag, m, "Weather in Paris?", fake.Calls(call("Paris")))
	m.Enqueue(fake.Text("It may be sunny."))
	store := &flakyLoad{Memory: mem}
	store.fails.Store(1)
	srv, err := agentserver.New(agentserver.Config{Agent: ag, Store: store, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(bg)
	until(t, "the run to be saved", func() bool {
		_, err := mem.LoadRun(bg, threadT1)
		return errors.Is(err, session.ErrNoRun)
	})
	want := []string{"user: Hi", "model: Hello.", "user: Weather in Paris?", `model: call get_weather{"city":"Paris"}`,
		`user: response get_weather{"error":"tool get_weather was interrupted: the process running it stopped before it returned, so it may or may not have run; check whether it took effect before calling it again, or ask the user"}`,
		"model: It may be sunny."}
	stored, _ := mem.Load(bg, threadT1)
	if got := dump(stored); !slices.Equal(got, want) {
		t.Errorf("the thread holds\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := store.fails.Load(); n >= 0 {
		t.Errorf("the store's Load was not called after it failed (fails %d)", n)
	}
}

// A run that waits for a decision holds no goroutine: once 40 runs wait,
// no goroutine of the process is in a run (the workers that ran them
// idle, as workers do, whatever they ran).
func TestWaitingRunsHoldNoGoroutine(t *testing.T) {
	h := newHarness(t, harnessOpts{
		agent:  func(c *agent.Config) { c.NeedsApproval = func(*genai.FunctionCall) bool { return true } },
		config: func(c *agentserver.Config) { c.MaxRuns, c.MaxRunsPerUser = -1, -1 },
	})
	h.model.SetReplyFunc(func(*fake.Request) *fake.Reply { return fake.Calls(call("Paris")) })
	const runs = 40
	for i := range runs {
		att, err := h.srv.Submit(bg, "alice", agentserver.Request{Thread: fmt.Sprint("t", i), Message: genai.NewContentFromText("Weather?", genai.RoleUser)})
		if err != nil {
			t.Fatal(err)
		}
		for rec := (agentserver.Record{}); rec.Kind != agentserver.KindPause; {
			if rec, _, err = att.Cursor.Next(bg, time.Minute); err != nil {
				t.Fatal(err)
			}
		}
		att.Cursor.Close()
	}
	for i := range runs {
		h.await("alice", fmt.Sprint("t", i), waiting)
	}
	var inRuns int
	until(t, "no goroutine to be in a run", func() bool { // a hang guard: the last runs end as they park
		buf := make([]byte, 1<<22)
		stacks := string(buf[:runtime.Stack(buf, true)])
		inRuns = 0
		for _, g := range strings.Split(stacks, "\n\n") {
			if strings.Contains(g, "agent.(*run)") || strings.Contains(g, "agentserver.(*run)") {
				inRuns++
			}
		}
		return inRuns == 0
	})
}

// refusing is a Memory that refuses to append the journal entries of
// the kinds refuse holds (a full disk, say), and counts the refusals.
type refusing struct {
	*session.Memory
	mu      sync.Mutex
	refuse  map[string]bool
	refused int
}

func (r *refusing) set(kinds ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refuse = map[string]bool{}
	for _, k := range kinds {
		r.refuse[k] = true
	}
}

func (r *refusing) AppendRun(ctx context.Context, id, run string, claim session.Claim, entries [][]byte) error {
	for _, e := range entries {
		var k struct{ Kind string }
		json.Unmarshal(e, &k)
		r.mu.Lock()
		no := r.refuse[k.Kind]
		if no {
			r.refused++
		}
		r.mu.Unlock()
		if no {
			return errStoreDown
		}
	}
	return r.Memory.AppendRun(ctx, id, run, claim, entries)
}

// A turn whose entry the store refuses (each time it is written again)
// makes the run stop before its call runs: the call never starts, the
// client reads a store_error, and the run is saved as far as it went.
// The next turn's entry, once the store takes it again, lets its call
// run.
func TestTurnNotStoredStopsBeforeItsCalls(t *testing.T) {
	store := &refusing{Memory: session.NewMemory()}
	store.set("turn")
	h := newHarness(t, harnessOpts{config: func(c *agentserver.Config) { c.Store = store }})
	h.model.Enqueue(fake.Calls(call("Paris")))
	resp := h.post(bg, "alice", testRequest{Thread: "t1", Text: "Weather in Paris?"})
	last := resp.last()
	if last.Kind != agentserver.KindDone || last.Done.State != agentserver.StateFailed || last.Done.Error == nil || last.Done.Error.Code != "store_error" {
		t.Fatalf("the run ended with %+v; want it failed, store_error", last.Done)
	}
	if n := len(h.started); n != 0 {
		t.Errorf("the call ran %d times though its turn was not stored; want 0", n)
	}
	if store.refused < 2 {
		t.Errorf("the turn's entry was written %d times; want it written again", store.refused)
	}
	if got := dump(h.stored("alice", "t1")); len(got) != 3 || !strings.Contains(got[2], "was not run") {
		t.Errorf("the thread holds\n%s\nwant the question, the call, and its answer saying it did not run", strings.Join(got, "\n"))
	}
	store.set()
	h.model.Enqueue(fake.Calls(call("Tokyo")), fake.Text("Sunny."))
	if r := h.post(bg, "alice", testRequest{Thread: "t1", Text: "And Tokyo?"}); r.last().Done == nil || r.last().Done.State != agentserver.StateDone {
		t.Fatalf("the next run: %v %s", r.kinds(), r.body)
	}
	if n := len(h.started); n != 1 {
		t.Errorf("the next run's call ran %d times; want 1", n)
	}
}

// A decision whose entry the store refuses is not taken: the request gets
// 503 (Retry-After), the call does not run, and the run still waits for
// it; once the store takes it, the same decision continues the run.
func TestDecisionNotStoredIsNotTaken(t *testing.T) {
	store := &refusing{Memory: session.NewMemory()}
	h := newHarness(t, harnessOpts{
		agent:  func(c *agent.Config) { c.NeedsApproval = func(*genai.FunctionCall) bool { return true } },
		config: func(c *agentserver.Config) { c.Store = store },
	})
	h.model.Enqueue(fake.Calls(call("Paris")), fake.Text("Sunny in Paris."))
	p := h.post(bg, "alice", testRequest{Thread: "t1", Text: "Weather in Paris?"}).last()
	if p.Kind != agentserver.KindPause {
		t.Fatalf("the run did not pause: %+v", p)
	}
	store.set("decision")
	decide := testRequest{Thread: "t1", Decisions: []agentserver.Decision{{CallID: p.Pending[0].Call.ID, Approved: true}}}
	if r := h.post(bg, "alice", decide); r.status != 503 || r.errorCode() != "store" {
		t.Errorf("the decision the store refuses: %d %s; want 503 store", r.status, r.body)
	}
	if n := len(h.started); n != 0 {
		t.Errorf("the call ran %d times though its decision was not stored; want 0", n)
	}
	if info := h.await("alice", "t1", waiting); len(info.Pending) != 1 || info.Pending[0].Call.ID != p.Pending[0].Call.ID {
		t.Errorf("the run after the refused decision: %+v; want it waiting for the call", info)
	}
	store.set()
	if r := h.post(bg, "alice", decide); r.last().Done == nil || r.last().Done.State != agentserver.StateDone {
		t.Fatalf("the decision again: %d %v %s", r.status, r.kinds(), r.body)
	}
	if n := len(h.started); n != 1 {
		t.Errorf("the call ran %d times; want 1", n)
	}
}
