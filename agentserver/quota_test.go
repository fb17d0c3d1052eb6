package agentserver_test

import (
	"context"
	"errors"
	"fmt"
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

// A Server whose Config sets no limit applies the defaults: the zero
// values were unbounded once.
func TestDefaultLimits(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	cfg := h.srv.Config()
	for _, c := range []struct {
		name      string
		got, want int64
	}{
		{"MaxRuns", int64(cfg.MaxRuns), agentserver.DefaultMaxRuns},
		{"MaxRunsPerUser", int64(cfg.MaxRunsPerUser), agentserver.DefaultMaxRunsPerUser},
		{"RunTimeout", int64(cfg.RunTimeout), int64(agentserver.DefaultRunTimeout)},
		{"MaxThreadsPerUser", int64(cfg.MaxThreadsPerUser), agentserver.DefaultMaxThreadsPerUser},
		{"MaxBytesPerUser", cfg.MaxBytesPerUser, agentserver.DefaultMaxBytesPerUser},
	} {
		if c.got != c.want || c.got <= 0 {
			t.Errorf("Config().%s = %d; want the default %d", c.name, c.got, c.want)
		}
	}
	noBounds, err := agentserver.New(agentserver.Config{Agent: h.srv.Agent(), MaxRuns: -1, MaxRunsPerUser: -1, RunTimeout: -1,
		MaxThreadsPerUser: -1, MaxBytesPerUser: -1})
	if err != nil {
		t.Fatalf("New with every bound off (-1) = %v", err)
	}
	noBounds.Close(bg)
}

// Without MaxRunsPerUser, one user's runs in flight are bounded by
// DefaultMaxRunsPerUser: one more is refused with 429, through HTTP.
func TestDefaultMaxRunsPerUser(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	n := agentserver.DefaultMaxRunsPerUser
	for range n {
		h.model.Enqueue(fake.Calls(call("Gate")))
	}
	h.model.Enqueue(fake.Text("Bob's."))
	for range n {
		h.model.Enqueue(fake.Text("Done."))
	}
	got := make(chan *response, n)
	for i := range n {
		go func() { got <- h.post(bg, "alice", testRequest{Thread: fmt.Sprint("t", i), Text: "gate?"}) }()
		select {
		case <-h.started:
		case resp := <-got:
			t.Fatalf("alice's run %d ended before its tool: %d %s", i+1, resp.status, resp.body)
		}
	}
	if resp := h.post(bg, "alice", testRequest{Thread: "one-more", Text: "hi"}); resp.status != 429 || resp.errorCode() != "too_many_runs" {
		t.Errorf("alice's run %d: %d %s; want 429 too_many_runs", n+1, resp.status, resp.body)
	}
	if resp := h.post(bg, "bob", testRequest{Thread: "t1", Text: "hi"}); resp.last().Done == nil || resp.last().Done.Text != "Bob's." {
		t.Errorf("bob's run, while alice's go on: %d %v %s", resp.status, resp.kinds(), resp.body)
	}
	close(h.gate)
	for range n {
		<-got
	}
}

// Without MaxRuns, the runs in flight are bounded by DefaultMaxRuns: one
// more is refused with 503.
func TestDefaultMaxRuns(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	n := agentserver.DefaultMaxRuns
	h.model.SetReplyFunc(func(req *fake.Request) *fake.Reply {
		if len(req.Contents) == 1 {
			return fake.Calls(call("Gate"))
		}
		return fake.Text("Done.")
	})
	var cursors []agentserver.Cursor
	for i := range n {
		att, err := h.srv.Submit(bg, fmt.Sprint("user", i), agentserver.Request{Thread: "t", Message: genai.NewContentFromText("gate?", genai.RoleUser)})
		if err != nil {
			t.Fatalf("run %d of %d: %v", i+1, n, err)
		}
		cursors = append(cursors, att.Cursor)
		select { // (the harness's channel holds 100)
		case <-h.started:
		case <-time.After(time.Minute): // a hang guard
			t.Fatalf("run %d never reached its tool", i+1)
		}
	}
	_, err := h.srv.Submit(bg, "another", agentserver.Request{Thread: "t", Message: genai.NewContentFromText("hi", genai.RoleUser)})
	var se *agentserver.Error
	if !errors.Is(err, agentserver.ErrTooManyRuns) || !errors.As(err, &se) || se.Status != 503 {
		t.Errorf("run %d = %v; want 503 too_many_runs", n+1, err)
	}
	close(h.gate)
	for _, c := range cursors {
		c.Close()
	}
}

// storeKey is the store id of user's thread, as agentserver names it.
func storeKey(user, thread string) string { return "agentserver/" + user + "/" + thread }

// MaxThreadsPerUser refuses a user's new thread with 429 thread_quota
// once they have that many, through HTTP; their existing threads go on,
// and other users are not affected.
func TestThreadQuota(t *testing.T) {
	h := newHarness(t, harnessOpts{config: func(c *agentserver.Config) { c.MaxThreadsPerUser = 2 }})
	h.model.Enqueue(fake.Text("1"), fake.Text("2"), fake.Text("again"), fake.Text("Bob's."))
	for _, thread := range []string{"t1", "t2"} {
		if resp := h.post(bg, "alice", testRequest{Thread: thread, Text: "hi"}); resp.status != 200 || resp.last().Done == nil {
			t.Fatalf("alice's %s: %d %s", thread, resp.status, resp.body)
		}
	}
	for _, thread := range []string{"t3", "t"} { // t starts the ids of t1 and t2, and is new
		resp := h.post(bg, "alice", testRequest{Thread: thread, Text: "hi"})
		if resp.status != 429 || resp.errorCode() != "thread_quota" {
			t.Errorf("alice's new thread %s: %d %s; want 429 thread_quota", thread, resp.status, resp.body)
		}
	}
	if got := h.stored("alice", "t3"); got != nil {
		t.Errorf("the refused thread was stored: %d contents", len(got))
	}
	if resp := h.post(bg, "alice", testRequest{Thread: "t1", Text: "more"}); resp.last().Done == nil || resp.last().Done.Text != "again" {
		t.Errorf("alice's existing thread, at the quota: %d %s", resp.status, resp.body)
	}
	if resp := h.post(bg, "bob", testRequest{Thread: "t3", Text: "hi"}); resp.last().Done == nil || resp.last().Done.Text != "Bob's." {
		t.Errorf("bob's thread: %d %s", resp.status, resp.body)
	}
}

// Without MaxThreadsPerUser, a user has DefaultMaxThreadsPerUser threads
// at most.
func TestDefaultThreadQuota(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	for i := range agentserver.DefaultMaxThreadsPerUser {
		if err := h.store.Append(bg, storeKey("alice", fmt.Sprint("old", i)), genai.Text("hi")); err != nil {
			t.Fatal(err)
		}
	}
	if resp := h.post(bg, "alice", testRequest{Thread: "new", Text: "hi"}); resp.status != 429 || resp.errorCode() != "thread_quota" {
		t.Errorf("a thread over the default quota: %d %s; want 429 thread_quota", resp.status, resp.body)
	}
}

// MaxBytesPerUser refuses every new run of a user whose threads hold
// that much, with 429 storage_quota, through HTTP; other users are not
// affected.
func TestStorageQuota(t *testing.T) {
	h := newHarness(t, harnessOpts{config: func(c *agentserver.Config) { c.MaxBytesPerUser = 10_000 }})
	h.model.Enqueue(fake.Text(strings.Repeat("x", 10_000)), fake.Text("Bob's."))
	if resp := h.post(bg, "alice", testRequest{Thread: "t1", Text: "a long answer, please"}); resp.last().Done == nil {
		t.Fatalf("alice's first run: %d %s", resp.status, resp.body)
	}
	for _, thread := range []string{"t1", "t2"} {
		resp := h.post(bg, "alice", testRequest{Thread: thread, Text: "more"})
		if resp.status != 429 || resp.errorCode() != "storage_quota" {
			t.Errorf("alice's run on %s over the storage quota: %d %s; want 429 storage_quota", thread, resp.status, resp.body)
		}
	}
	if resp := h.post(bg, "bob", testRequest{Thread: "t1", Text: "hi"}); resp.last().Done == nil || resp.last().Done.Text != "Bob's." {
		t.Errorf("bob's run: %d %s", resp.status, resp.body)
	}
	_, err := h.srv.Submit(bg, "alice", agentserver.Request{Thread: "t3", Message: genai.NewContentFromText("hi", genai.RoleUser)})
	if !errors.Is(err, agentserver.ErrQuota) {
		t.Errorf("Submit over the quota = %v; want ErrQuota", err)
	}
}

// Without MaxBytesPerUser, a user's threads hold DefaultMaxBytesPerUser at
// most.
func TestDefaultStorageQuota(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	big := genai.Text(strings.Repeat("x", agentserver.DefaultMaxBytesPerUser))
	if err := h.store.Append(bg, storeKey("alice", "big"), big); err != nil {
		t.Fatal(err)
	}
	if resp := h.post(bg, "alice", testRequest{Thread: "big", Text: "hi"}); resp.status != 429 || resp.errorCode() != "storage_quota" {
		t.Errorf("a run over the default storage quota: %d %s; want 429 storage_quota", resp.status, resp.body)
	}
}

// Threads lists a user's threads a page at a time, the most recently
// updated first, with their sizes; a cursor it did not give is refused.
func TestThreadsPages(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	var want []string
	for i := range 5 {
		thread := fmt.Sprint("t", i)
		if err := h.store.Append(bg, storeKey("alice", thread), genai.Text(thread)); err != nil {
			t.Fatal(err)
		}
		want = slices.Insert(want, 0, thread)
	}
	if err := h.store.Append(bg, storeKey("alicia", "other"), genai.Text("another user's")); err != nil {
		t.Fatal(err)
	}
	var got []string
	opts := agentserver.ThreadsOptions{Limit: 2}
	for pages := 1; ; pages++ {
		p, err := h.srv.Threads(bg, "alice", opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, th := range p.Threads {
			got = append(got, th.ID)
			if th.Len != 1 || th.Bytes == 0 {
				t.Errorf("thread %s: Len %d, Bytes %d; want 1 content, its size", th.ID, th.Len, th.Bytes)
			}
		}
		if p.Next == "" {
			if pages != 3 {
				t.Errorf("%d pages of 2 for 5 threads; want 3", pages)
			}
			break
		}
		opts.Cursor = p.Next
	}
	if !slices.Equal(got, want) {
		t.Errorf("alice's threads = %q; want %q", got, want)
	}
	_, err := h.srv.Threads(bg, "alice", agentserver.ThreadsOptions{Cursor: "forged"})
	var se *agentserver.Error
	if !errors.As(err, &se) || se.Status != 400 || se.Code != "bad_cursor" {
		t.Errorf("Threads with a forged cursor = %v; want 400 bad_cursor", err)
	}
}

// quotaStore is a session.Store that is not a Lister: Threads and the
// quotas work through its List.
type quotaStore struct{ session.Store }

func TestQuotaOnAStoreThatIsNotALister(t *testing.T) {
	store := quotaStore{session.NewMemory()}
	h := newHarness(t, harnessOpts{config: func(c *agentserver.Config) { c.Store, c.MaxThreadsPerUser = store, 1 }})
	h.model.Enqueue(fake.Text("1"))
	if resp := h.post(bg, "alice", testRequest{Thread: "t1", Text: "hi"}); resp.last().Done == nil {
		t.Fatalf("alice's first thread: %d %s", resp.status, resp.body)
	}
	if resp := h.post(bg, "alice", testRequest{Thread: "t2", Text: "hi"}); resp.status != 429 || resp.errorCode() != "thread_quota" {
		t.Errorf("alice's second thread: %d %s; want 429 thread_quota", resp.status, resp.body)
	}
	if p, err := h.srv.Threads(context.Background(), "alice", agentserver.ThreadsOptions{}); err != nil || len(p.Threads) != 1 {
		t.Errorf("Threads = %+v, %v; want t1", p, err)
	}
}

// The journals of a user's runs in progress count toward
// MaxBytesPerUser, as their threads do: a run that waits with a large
// turn in its journal, and nothing saved yet, takes the user over it;
// once it ends, its thread counts instead.
func TestStorageQuotaCountsJournals(t *testing.T) {
	h := newHarness(t, harnessOpts{
		config: func(c *agentserver.Config) { c.MaxBytesPerUser = 10_000 },
		agent:  func(c *agent.Config) { c.NeedsApproval = func(*genai.FunctionCall) bool { return true } },
	})
	long := fake.Calls(call("Paris"))
	c := long.Response.Candidates[0].Content
	c.Parts = append([]*genai.Part{{Text: strings.Repeat("x", 10_000)}}, c.Parts...)
	h.model.Enqueue(long, fake.Text("Bob's."), fake.Text("Sunny."))
	resp := h.post(bg, "alice", testRequest{Thread: "t1", Text: "Weather in Paris?"})
	p := resp.last()
	if p.Kind != agentserver.KindPause {
		t.Fatalf("the run did not pause: %v %s", resp.kinds(), resp.body)
	}
	if stored := h.stored("alice", "t1"); len(stored) != 0 {
		t.Fatalf("the thread holds %s before the run ends; want nothing", dump(stored))
	}
	if r := h.post(bg, "alice", testRequest{Thread: "t2", Text: "more"}); r.status != 429 || r.errorCode() != "storage_quota" {
		t.Errorf("a run over the quota, counting the journal of the run that waits: %d %s; want 429 storage_quota", r.status, r.body)
	}
	if r := h.post(bg, "bob", testRequest{Thread: "t1", Text: "hi"}); r.last().Done == nil || r.last().Done.Text != "Bob's." {
		t.Errorf("bob's run: %d %s", r.status, r.body)
	}
	// A decision is never refused by a quota; the run ends, saved.
	if r := h.post(bg, "alice", testRequest{Thread: "t1", Decisions: []agentserver.Decision{{CallID: p.Pending[0].Call.ID, Approved: true}}}); r.last().Kind != agentserver.KindDone {
		t.Fatalf("the decision: %d %v %s", r.status, r.kinds(), r.body)
	}
	if r := h.post(bg, "alice", testRequest{Thread: "t2", Text: "more"}); r.status != 429 || r.errorCode() != "storage_quota" {
		t.Errorf("a run over the quota, counting the saved thread: %d %s; want 429 storage_quota", r.status, r.body)
	}
}
