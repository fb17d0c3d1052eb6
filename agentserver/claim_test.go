package agentserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/internal/pgtest"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/session/pgstore"
	"github.com/toolnexus/toolnexus-go/session/sqlitestore"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// claimStores returns the stores the claim tests run on: a Memory, a
// SQLite file opened twice, and two pgstore.Stores on one PostgreSQL
// database (skipped without a server), as two processes would open them.
func claimStores(t *testing.T, name string) (a, b session.Journaler) {
	t.Helper()
	var open func() (session.Journaler, error)
	switch name {
	case "memory":
		m := session.NewMemory()
		return m, m
	case "sqlite":
		path := filepath.Join(t.TempDir(), "threads.db")
		open = func() (session.Journaler, error) { return sqlitestore.Open(bg, path) }
	default:
		u := pgtest.Database(t)
		open = func() (session.Journaler, error) { return pgstore.Open(bg, u) }
	}
	stores := make([]session.Journaler, 2)
	for i := range stores {
		s, err := open()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.(interface{ Close() error }).Close() })
		stores[i] = s
	}
	return stores[0], stores[1]
}

const threadT1 = "agentserver/alice/t1"

// A run that runs on one Server is left to it by another on the store,
// which answers about it truthfully: it is in progress (409 busy for a
// new message), and held elsewhere (503, Retry-After) for what only the
// Server that runs it can do (read it, stop it).
func TestRunHeldElsewhere(t *testing.T) {
	for _, name := range []string{"memory", "postgres"} {
		t.Run(name, func(t *testing.T) {
			storeA, storeB := claimStores(t, name)
			a := newHarness(t, harnessOpts{config: func(c *agentserver.Config) { c.Store = storeA }})
			b := newHarness(t, harnessOpts{
				agent:  func(c *agent.Config) { c.Models = a.model.Client().Models },
				config: func(c *agentserver.Config) { c.Store, c.RunLease = storeB, 300*time.Millisecond }})
			a.model.Enqueue(fake.Calls(call("Gate")), fake.Text("Done."))
			got := make(chan *response)
			go func() { got <- a.post(bg, "alice", testRequest{Thread: "t1", Text: "gate?"}) }()
			<-a.started
			info, err := b.srv.Current(bg, "alice", "t1")
			if err != nil || info.State != agentserver.StateRunning {
				t.Fatalf("Current on the other Server = %+v, %v; want the run, running", info, err)
			}
			if r := b.post(bg, "alice", testRequest{Thread: "t1", Text: "Hello?"}); r.status != 409 || r.errorCode() != "busy" {
				t.Errorf("a new message on the other Server: %d %s; want 409 busy", r.status, r.body)
			}
			if r := b.do(bg, "alice", "GET", "/replay?thread=t1", "", nil); r.status != 503 || r.errorCode() != "elsewhere" {
				t.Errorf("reading the run on the other Server: %d %s; want 503 elsewhere", r.status, r.body)
			}
			if _, err := b.srv.CancelThread(bg, "alice", "t1"); !errors.Is(err, agentserver.ErrElsewhere) {
				t.Errorf("CancelThread on the other Server = %v; want ErrElsewhere", err)
			}
			// Two scans of the other Server later, the run is still the
			// first one's.
			time.Sleep(250 * time.Millisecond)
			if j, err := storeB.LoadRun(bg, threadT1); err != nil || !j.Held {
				t.Errorf("the journal: %+v, %v; want it held by the first Server", j, err)
			}
			close(a.gate)
			if resp := <-got; resp.last().Kind != agentserver.KindDone || resp.last().Done.State != agentserver.StateDone {
				t.Fatalf("the run: %v %s", resp.kinds(), resp.body)
			}
			if _, err := b.srv.Current(bg, "alice", "t1"); !errors.Is(err, agentserver.ErrNotFound) {
				t.Errorf("Current on the other Server once the run ended = %v; want ErrNotFound", err)
			}
		})
	}
}

// A run that waits for a decision is parked in the store, held by no
// Server: each shows it waiting, and a decision taken on another Server
// than the one that ran it continues it there: its tool runs once, there,
// and the run is saved once.
func TestDecisionOnAnotherServer(t *testing.T) {
	for _, name := range []string{"memory", "sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			storeA, storeB := claimStores(t, name)
			approve := func(c *agent.Config) { c.NeedsApproval = func(*genai.FunctionCall) bool { return true } }
			a := newHarness(t, harnessOpts{agent: approve, config: func(c *agentserver.Config) { c.Store = storeA }})
			b := newHarness(t, harnessOpts{
				agent:  func(c *agent.Config) { approve(c); c.Models = a.model.Client().Models },
				config: func(c *agentserver.Config) { c.Store = storeB }})
			a.model.Enqueue(fake.Calls(call("Paris")), fake.Text("Sunny in Paris."))
			resp := a.post(bg, "alice", testRequest{Thread: "t1", Text: "Weather in Paris?"})
			p := resp.last()
			if p.Kind != agentserver.KindPause {
				t.Fatalf("the run did not pause: %v", resp.kinds())
			}
			if j, err := storeA.LoadRun(bg, threadT1); err != nil || j.Owner != "" {
				t.Errorf("the journal of the run that waits: %+v, %v; want it claimed by nobody", j, err)
			}
			for _, h := range []*harness{a, b} {
				info := h.await("alice", "t1", waiting)
				if info.ID != resp.run() || len(info.Pending) != 1 || info.Pending[0].Call.ID != p.Pending[0].Call.ID ||
					!info.Pending[0].Deadline.Equal(p.Pending[0].Deadline) {
					t.Errorf("Current = %+v; want run %s waiting for %s until %v", info, resp.run(), p.Pending[0].Call.ID, p.Pending[0].Deadline)
				}
			}
			replay := b.do(bg, "alice", "GET", "/replay?thread=t1", "", nil)
			if got, want := replay.kinds(), resp.kinds(); !slices.Equal(got, want) {
				t.Errorf("the run's log on the other Server: %v; want it as the first showed it: %v", got, want)
			}
			got := b.post(bg, "alice", testRequest{Thread: "t1", Decisions: []agentserver.Decision{{CallID: p.Pending[0].Call.ID, Approved: true}}})
			if last := got.last(); last.Kind != agentserver.KindDone || last.Done.State != agentserver.StateDone {
				t.Fatalf("the decision on the other Server: %d %v %s", got.status, got.kinds(), got.body)
			}
			if len(a.started) != 0 || len(b.started) != 1 {
				t.Errorf("the tool ran %d times on the first Server and %d on the other; want 0 and 1", len(a.started), len(b.started))
			}
			stored, err := storeB.Load(bg, threadT1)
			if err != nil || len(stored) != 4 {
				t.Errorf("the thread holds %s, %v; want the run once: the question, the call, its result, the answer", dump(stored), err)
			}
			if r := a.post(bg, "alice", testRequest{Thread: "t1", Decisions: []agentserver.Decision{{CallID: p.Pending[0].Call.ID, Approved: true}}}); r.status != 409 {
				t.Errorf("the decision again, on the first Server: %d %s; want 409", r.status, r.body)
			}
		})
	}
}

// Servers that start at once on a store where a run's server died while
// the run's tool ran: exactly one of them picks the run up.
func TestServersStartingAtOnceRecoverOnce(t *testing.T) {
	for _, name := range []string{"memory", "sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			storeA, storeB := claimStores(t, name)
			m := fake.NewServer()
			defer m.Close()
			weather := toolset.MustFunc("get_weather", "Weather", func(_ context.Context, in cityIn) (string, error) { return "sunny", nil })
			ag, err := agent.New(agent.Config{Models: m.Client().Models, Model: model, Tools: toolset.MustNew(weather)})
			if err != nil {
				t.Fatal(err)
			}
			// The journal of a run whose call was running when its server
			// died: claimed by an owner whose life is over.
			seedJournal(t, storeA, threadT1, session.Claim{Owner: "dead"}, ag, m, "Weather?", fake.Calls(call("Paris")))
			m.Enqueue(fake.Text("It may be sunny."))

			cfg := agentserver.Config{Agent: ag, Store: storeA, Logger: slog.New(slog.DiscardHandler)}
			const servers = 6
			srvs := make([]*agentserver.Server, servers)
			errs := make([]error, servers)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range servers {
				c := cfg
				if i%2 == 1 {
					c.Store = storeB
				}
				wg.Go(func() {
					<-start
					srvs[i], errs[i] = agentserver.New(c)
				})
			}
			close(start)
			wg.Wait()
			for i, s := range srvs {
				if errs[i] != nil {
					t.Fatalf("New %d: %v", i, errs[i])
				}
				defer s.Close(bg)
			}
			until(t, "the run to be saved", func() bool {
				_, err := storeA.LoadRun(bg, threadT1)
				return errors.Is(err, session.ErrNoRun)
			})
			if n := len(m.Requests()); n != 2 {
				t.Errorf("the model was asked %d times; want 2: the first server's turn, and one Server's", n)
			}
			stored, _ := storeA.Load(bg, threadT1)
			if got := dump(stored); len(got) != 4 || !strings.Contains(got[2], "interrupted") {
				t.Errorf("the thread holds\n%s\nwant the run once, its call interrupted", strings.Join(got, "\n"))
			}
		})
	}
}

// seedJournal writes, on store, the journal a server would leave of a
// run on thread whose model turn (reply, to message) made calls, as it
// stands once the turn is journaled: the run, then the turn; claimed as
// claim says.
func seedJournal(t *testing.T, store session.Journaler, thread string, claim session.Claim, a *agent.Agent, m *fake.Server, message string, reply *fake.Reply) {
	t.Helper()
	seed := session.NewMemory()
	srv, err := agentserver.New(agentserver.Config{Agent: a.With(agent.Overrides{NeedsApproval: func(*genai.FunctionCall) bool { return true }}),
		Store: seed, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(bg)
	m.Enqueue(reply)
	att, err := srv.Submit(bg, "alice", agentserver.Request{Thread: strings.TrimPrefix(thread, "agentserver/alice/"),
		Message: genai.NewContentFromText(message, genai.RoleUser)})
	if err != nil {
		t.Fatal(err)
	}
	for rec := (agentserver.Record{}); rec.Kind != agentserver.KindPause; {
		if rec, _, err = att.Cursor.Next(bg, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	att.Cursor.Close()
	j, err := seed.LoadRun(bg, thread)
	if err != nil {
		t.Fatal(err)
	}
	var entries [][]byte
	for _, e := range j.Entries {
		var k struct{ Kind string }
		json.Unmarshal(e, &k)
		if k.Kind == "begin" || k.Kind == "turn" {
			entries = append(entries, e)
		}
	}
	if err := store.BeginRun(bg, thread, j.Run, claim, entries); err != nil {
		t.Fatal(err)
	}
}

// partitioned is a store that one Server loses while down is set: every
// call fails (the Server cannot renew its claims, nor write), and its
// life on the store, if it has one, is lost then (the store lets others
// take its claims at once). A Server given leaseOnly(partitioned) claims
// with leases.
type partitioned struct {
	session.LiveJournaler
	down atomic.Bool
	mu   sync.Mutex
	life *lostLife
}

var errPartitioned = errors.New("the store cannot be reached")

func (p *partitioned) err() error {
	if p.down.Load() {
		return errPartitioned
	}
	return nil
}

// cut partitions the store from its Server.
func (p *partitioned) cut() {
	p.down.Store(true)
	p.mu.Lock()
	l := p.life
	p.mu.Unlock()
	if l != nil {
		l.lose()
	}
}

func (p *partitioned) Load(ctx context.Context, id string) ([]*genai.Content, error) {
	if err := p.err(); err != nil {
		return nil, err
	}
	return p.LiveJournaler.Load(ctx, id)
}

func (p *partitioned) Append(ctx context.Context, id string, contents []*genai.Content) error {
	if err := p.err(); err != nil {
		return err
	}
	return p.LiveJournaler.Append(ctx, id, contents)
}

func (p *partitioned) BeginRun(ctx context.Context, id, run string, claim session.Claim, entries [][]byte) error {
	if err := p.err(); err != nil {
		return err
	}
	return p.LiveJournaler.BeginRun(ctx, id, run, claim, entries)
}

func (p *partitioned) AppendRun(ctx context.Context, id, run string, claim session.Claim, entries [][]byte) error {
	if err := p.err(); err != nil {
		return err
	}
	return p.LiveJournaler.AppendRun(ctx, id, run, claim, entries)
}

func (p *partitioned) EndRun(ctx context.Context, id, run string, claim session.Claim, contents []*genai.Content) error {
	if err := p.err(); err != nil {
		return err
	}
	return p.LiveJournaler.EndRun(ctx, id, run, claim, contents)
}

func (p *partitioned) LoadRun(ctx context.Context, id string) (session.Journal, error) {
	if err := p.err(); err != nil {
		return session.Journal{}, err
	}
	return p.LiveJournaler.LoadRun(ctx, id)
}

func (p *partitioned) ListRuns(ctx context.Context, opts session.ListOptions) (session.JournalPage, error) {
	if err := p.err(); err != nil {
		return session.JournalPage{}, err
	}
	return p.LiveJournaler.ListRuns(ctx, opts)
}

func (p *partitioned) ClaimRun(ctx context.Context, id, run string, claim session.Claim) error {
	if err := p.err(); err != nil {
		return err
	}
	return p.LiveJournaler.ClaimRun(ctx, id, run, claim)
}

func (p *partitioned) ReleaseRun(ctx context.Context, id, run, owner string) error {
	if err := p.err(); err != nil {
		return err
	}
	return p.LiveJournaler.ReleaseRun(ctx, id, run, owner)
}

func (p *partitioned) Live(ctx context.Context, owner string) (session.Life, error) {
	if err := p.err(); err != nil {
		return nil, err
	}
	life, err := p.LiveJournaler.Live(ctx, owner)
	if err != nil {
		return nil, err
	}
	l := &lostLife{Life: life, done: make(chan struct{})}
	p.mu.Lock()
	p.life = l
	p.mu.Unlock()
	return l, nil
}

// lostLife is a life that the partition loses: the store ends it (its
// claims are anyone's), and its Server learns it from Done.
type lostLife struct {
	session.Life
	once sync.Once
	done chan struct{}
	lost atomic.Bool
}

func (l *lostLife) lose() {
	l.once.Do(func() {
		l.lost.Store(true)
		l.Life.Close()
		close(l.done)
	})
}

func (l *lostLife) Check(ctx context.Context) error {
	if l.lost.Load() {
		return l.Err()
	}
	return l.Life.Check(ctx)
}

func (l *lostLife) Done() <-chan struct{} { return l.done }

func (l *lostLife) Err() error {
	if l.lost.Load() {
		return errors.Join(errPartitioned, session.ErrLifeLost)
	}
	return nil
}

func (l *lostLife) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Life.Close()
}

// leaseOnly hides a store's lives: a Server on it claims with leases.
type leaseOnly struct{ session.Journaler }

// A Server loses its store while a tool that is not safe to repeat runs
// (its claims and writes fail; with lives, the store ends its life);
// another Server takes the run over once the claim has run out (at once,
// with lives), answers that call "interrupted", and runs the next call
// the model asks for, which is not safe to repeat either. The first
// Server gets the store back, and its tool returns: the store refuses its
// write (the fence), and the first Server stops the run, telling its
// client another server goes on with it. Each tool runs once; the thread
// holds the run once, as the second Server ran it. On SQLite, Memory and
// PostgreSQL, with leases and with lives.
func TestPartitionedStore(t *testing.T) {
	for _, name := range []string{"memory", "sqlite", "postgres"} {
		for _, mode := range []string{"leases", "lives"} {
			t.Run(name+"/"+mode, func(t *testing.T) { testPartitionedStore(t, name, mode) })
		}
	}
}

func testPartitionedStore(t *testing.T, name, mode string) {
	storeA, storeB := claimStores(t, name)
	partA := &partitioned{LiveJournaler: storeA.(session.LiveJournaler)}
	var forA session.Journaler = partA
	if mode == "leases" {
		forA = leaseOnly{partA}
	}
	var mu sync.Mutex
	ran := map[string]int{}
	count := func(name string) {
		mu.Lock()
		ran[name]++
		mu.Unlock()
	}
	actStarted, actGate := make(chan struct{}, 1), make(chan struct{})
	act := toolset.MustFunc("act", "Does something once", func(ctx context.Context, in whatIn) (string, error) {
		count("act")
		actStarted <- struct{}{}
		<-actGate // the tool returns once the first Server has the store back
		return "done", nil
	})
	charge := toolset.MustFunc("charge", "Charges a card", func(ctx context.Context, in whatIn) (string, error) {
		count("charge")
		return "charged", nil
	})
	m := fake.NewServer()
	defer m.Close()
	m.SetReplyFunc(func(req *fake.Request) *fake.Reply {
		switch text := strings.Join(requestText(req), "\n"); {
		case strings.Contains(text, "response charge"):
			return fake.Text("Acted, then charged.")
		case strings.Contains(text, "response act"):
			return fake.Calls(fake.Call("charge", what))
		}
		return fake.Calls(fake.Call("act", what))
	})
	ag, err := agent.New(agent.Config{Models: m.Client().Models, Model: model, Tools: toolset.MustNew(act, charge)})
	if err != nil {
		t.Fatal(err)
	}
	const lease = 600 * time.Millisecond
	a, err := agentserver.New(agentserver.Config{Agent: ag, Store: forA, RunLease: lease, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(bg)
	att, err := a.Submit(bg, "alice", agentserver.Request{Thread: "t1", Message: genai.NewContentFromText("Act, then charge.", genai.RoleUser)})
	if err != nil {
		t.Fatal(err)
	}
	defer att.Cursor.Close()
	<-actStarted
	partA.cut()
	if mode == "leases" {
		until(t, "the first Server's claim to run out", func() bool {
			j, err := storeB.LoadRun(bg, threadT1)
			if err != nil {
				t.Fatal(err)
			}
			return !j.Held
		})
	}
	b, err := agentserver.New(agentserver.Config{Agent: ag, Store: storeB, RunLease: lease, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(bg)
	until(t, "the second Server to end the run", func() bool {
		_, err := storeB.LoadRun(bg, threadT1)
		return errors.Is(err, session.ErrNoRun)
	})
	partA.down.Store(false)
	close(actGate)
	var last agentserver.Record
	for {
		rec, _, err := att.Cursor.Next(bg, time.Minute)
		if err != nil {
			t.Fatalf("the first Server's run: %v", err)
		}
		if rec.Kind == agentserver.KindDone {
			last = rec
			break
		}
	}
	if last.Done.State != agentserver.StateCancelled || last.Done.Error == nil || last.Done.Error.Code != "taken_over" {
		t.Errorf("the first Server's client read the end %+v %+v; want it cancelled, taken_over", last.Done, last.Done.Error)
	}
	mu.Lock()
	if ran["act"] != 1 || ran["charge"] != 1 {
		t.Errorf("the tools ran %v times; want act once and charge once", ran)
	}
	mu.Unlock()
	stored, err := storeB.Load(bg, threadT1)
	want := []string{"user: Act, then charge.", `model: call act{"what":"it"}`,
		`user: response act{"error":"tool act was interrupted: the process running it stopped before it returned, so it may or may not have run; check whether it took effect before calling it again, or ask the user"}`,
		`model: call charge{"what":"it"}`, `user: response charge{"result":"charged"}`, "model: Acted, then charged."}
	if got := dump(stored); err != nil || !slices.Equal(got, want) {
		t.Errorf("the thread holds\n%s\n(%v) want\n%s", strings.Join(got, "\n"), err, strings.Join(want, "\n"))
	}
	// Later, the first Server writes nothing more of it.
	a.Close(bg)
	if again, _ := storeB.Load(bg, threadT1); len(again) != len(stored) {
		t.Errorf("after the first Server closed, the thread holds %d contents; want %d", len(again), len(stored))
	}
}
