package agentserver_test

import (
	"context"
	"errors"
	"log/slog"
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
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// claimStores returns the stores the claim tests run on: a Memory, and
// two pgstore.Stores on one PostgreSQL database, as two processes would
// open it (skipped without a server).
func claimStores(t *testing.T, name string) (a, b session.Journaler) {
	t.Helper()
	if name == "memory" {
		m := session.NewMemory()
		return m, m
	}
	u := pgtest.Database(t)
	open := func() session.Journaler {
		s, err := pgstore.Open(bg, u)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	return open(), open()
}

const threadT1 = "agentserver/alice/t1"

// A Server on a store where another Server runs a run leaves the run to
// it, while the other renews its claim; when the other one stops (Close,
// a deploy), it takes the run over at once, and a decision continues it
// there: the run is run by one Server at a time, saved once.
func TestSecondServerLeavesHeldRun(t *testing.T) {
	for _, name := range []string{"memory", "postgres"} {
		t.Run(name, func(t *testing.T) {
			storeA, storeB := claimStores(t, name)
			approve := func(c *agent.Config) { c.NeedsApproval = func(*genai.FunctionCall) bool { return true } }
			const lease = 1500 * time.Millisecond
			a := newHarness(t, harnessOpts{agent: approve,
				config: func(c *agentserver.Config) { c.Store, c.RunLease = storeA, lease }})
			a.model.Enqueue(fake.Calls(call("Paris")), fake.Text("Sunny in Paris."))
			resp := a.post(bg, "alice", testRequest{Thread: "t1", Text: "Weather in Paris?"})
			p := resp.last()
			if p.Kind != agentserver.KindPause {
				t.Fatalf("the run did not pause: %v", resp.kinds())
			}
			held, err := storeA.LoadRun(bg, threadT1)
			if err != nil || held.Owner == "" {
				t.Fatalf("the run's journal: %+v, %v; want it claimed", held, err)
			}

			b := newHarness(t, harnessOpts{
				agent:  func(c *agent.Config) { approve(c); c.Models = a.model.Client().Models },
				config: func(c *agentserver.Config) { c.Store, c.RunLease = storeB, lease }})
			if _, err := b.srv.Current(bg, "alice", "t1"); !errors.Is(err, agentserver.ErrNotFound) {
				t.Fatalf("the second Server took over a run the first one holds: Current = %v", err)
			}
			// Two renewals of the first Server's claim: the second one has
			// looked for runs to take over meanwhile, and took none.
			for renewed, last := 0, held.Lease; renewed < 2; {
				until(t, "the claim to be renewed", func() bool {
					j, err := storeA.LoadRun(bg, threadT1)
					if err != nil {
						t.Fatalf("the journal: %v", err)
					}
					if j.Owner != held.Owner {
						t.Fatalf("the journal's claim went from %q to %q while its Server ran", held.Owner, j.Owner)
					}
					if j.Lease.After(last) {
						last = j.Lease
						return true
					}
					return false
				})
				renewed++
			}
			if _, err := b.srv.Current(bg, "alice", "t1"); !errors.Is(err, agentserver.ErrNotFound) {
				t.Fatalf("the second Server took over a run the first one holds: Current = %v", err)
			}
			if r := b.post(bg, "alice", testRequest{Thread: "t1", Text: "Hello?"}); r.status != 409 || r.errorCode() != "busy" {
				t.Errorf("a run on the thread on the second Server: %d %s; want 409 busy", r.status, r.body)
			}

			if err := a.srv.Close(bg); err != nil {
				t.Fatal(err)
			}
			// Released by Close: taken within a third of the lease.
			b.await("alice", "t1", waiting)
			got := b.post(bg, "alice", testRequest{Thread: "t1", Decisions: []agentserver.Decision{{CallID: p.Pending[0].Call.ID, Approved: true}}})
			if last := got.last(); last.Kind != agentserver.KindDone || last.Done.State != agentserver.StateDone {
				t.Fatalf("the decision on the second Server: %d %v %s", got.status, got.kinds(), got.body)
			}
			if n := len(a.started); n != 0 {
				t.Errorf("the first Server ran the tool %d times; want 0", n)
			}
			if n := len(b.started); n != 1 {
				t.Errorf("the second Server ran the tool %d times; want 1", n)
			}
			stored, err := storeB.Load(bg, threadT1)
			if err != nil || len(stored) != 4 {
				t.Errorf("the thread holds %s, %v; want the run once: the question, the call, its result, the answer", dump(stored), err)
			}
		})
	}
}

// Servers that start at once on a store where a run waits: exactly one
// of them recovers it.
func TestServersStartingAtOnceRecoverOnce(t *testing.T) {
	for _, name := range []string{"memory", "postgres"} {
		t.Run(name, func(t *testing.T) {
			storeA, storeB := claimStores(t, name)
			m := fake.NewServer()
			defer m.Close()
			weather := toolset.MustFunc("get_weather", "Weather", func(_ context.Context, in cityIn) (string, error) { return "sunny", nil })
			ag, err := agent.New(agent.Config{Models: m.Client().Models, Model: model, Tools: toolset.MustNew(weather),
				NeedsApproval: func(*genai.FunctionCall) bool { return true }})
			if err != nil {
				t.Fatal(err)
			}
			cfg := agentserver.Config{Agent: ag, Store: storeA, Logger: slog.New(slog.DiscardHandler), RunLease: time.Hour}
			first, err := agentserver.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			m.Enqueue(fake.Calls(call("Paris")))
			att, err := first.Submit(bg, "alice", agentserver.Request{Thread: "t1", Message: genai.NewContentFromText("Weather?", genai.RoleUser)})
			if err != nil {
				t.Fatal(err)
			}
			for rec := (agentserver.Record{}); rec.Kind != agentserver.KindPause; {
				if rec, _, err = att.Cursor.Next(bg, time.Minute); err != nil {
					t.Fatal(err)
				}
			}
			att.Cursor.Close()
			if err := first.Close(bg); err != nil { // the run stays in its journal, released
				t.Fatal(err)
			}

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
			recovered := 0
			for i, s := range srvs {
				if errs[i] != nil {
					t.Fatalf("New %d: %v", i, errs[i])
				}
				defer s.Close(bg)
				if _, err := s.Current(bg, "alice", "t1"); err == nil {
					recovered++
				} else if !errors.Is(err, agentserver.ErrNotFound) {
					t.Errorf("Current on Server %d: %v", i, err)
				}
			}
			if recovered != 1 {
				t.Errorf("%d of %d Servers starting at once recovered the run; want 1", recovered, servers)
			}
		})
	}
}

// claimsDown is a Memory whose ClaimRun fails while down is set: a
// Server on it cannot renew its claims.
type claimsDown struct {
	*session.Memory
	down atomic.Bool
}

func (c *claimsDown) ClaimRun(ctx context.Context, id, run string, claim session.Claim) error {
	if c.down.Load() {
		return errStoreDown
	}
	return c.Memory.ClaimRun(ctx, id, run, claim)
}

// A Server that could not renew its claim of a run for longer than the
// lease, and finds another owner holds it, stops the run and writes
// nothing more of it: the other owner's is the run.
func TestRunTakenOverIsStopped(t *testing.T) {
	mem := session.NewMemory()
	store := &claimsDown{Memory: mem}
	h := newHarness(t, harnessOpts{
		agent:  func(c *agent.Config) { c.NeedsApproval = func(*genai.FunctionCall) bool { return true } },
		config: func(c *agentserver.Config) { c.Store, c.RunLease = store, 600*time.Millisecond },
	})
	h.model.Enqueue(fake.Calls(call("Paris")))
	resp := h.post(bg, "alice", testRequest{Thread: "t1", Text: "Weather in Paris?"})
	if p := resp.last(); p.Kind != agentserver.KindPause {
		t.Fatalf("the run did not pause: %v", resp.kinds())
	}
	store.down.Store(true)
	var held session.Journal
	until(t, "the claim to run out", func() bool {
		var err error
		if held, err = mem.LoadRun(bg, threadT1); err != nil {
			t.Fatal(err)
		}
		return time.Now().After(held.Lease)
	})
	if err := mem.ClaimRun(bg, threadT1, held.Run, session.Claim{Owner: "another-server", Lease: time.Hour}); err != nil {
		t.Fatalf("another owner's claim of a claim that ran out: %v", err)
	}
	store.down.Store(false)
	info := h.awaitRun("alice", resp.run(), over)
	if info.State == agentserver.StateDone {
		t.Errorf("the run taken over ended %s; want it stopped", info.State)
	}
	j, err := mem.LoadRun(bg, threadT1)
	if err != nil || j.Owner != "another-server" || j.Len != held.Len {
		t.Errorf("the journal: %+v, %v; want it as it was, %d entries, the other owner's", j, err, held.Len)
	}
	if stored := h.stored("alice", "t1"); len(stored) != 0 {
		t.Errorf("the Server saved %s of a run taken over; want nothing", dump(stored))
	}
	if n := len(h.started); n != 0 {
		t.Errorf("the tool ran %d times; want 0", n)
	}
}
