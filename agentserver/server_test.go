package agentserver_test

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

var bg = context.Background()

// A run streams its records in order, and the thread keeps the exchange:
// the next run sends it to the model.
func TestRunStreamsAndSaves(t *testing.T) {
	counting := &countingStore{}
	h := newHarness(t, harnessOpts{config: func(c *agentserver.Config) { counting.Store = c.Store; c.Store = counting }})
	h.model.Enqueue(fake.Calls(call("Paris"), call("Tokyo")), fake.Text("Sunny in Paris and Tokyo.").WithTextChunk(6))

	resp := h.post(bg, "alice", testRequest{Thread: "t1", Text: "Weather in Paris and Tokyo?"})
	if resp.status != 200 {
		t.Fatalf("status %d: %s", resp.status, resp.body)
	}
	want := []string{"open", "start", "step", "tool-call", "tool-call", "tool-result", "tool-result", "step-end",
		"step", "text", "text", "text", "text", "text", "step-end", "done"}
	if diff := cmp.Diff(want, resp.kinds()); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	for i, e := range resp.events[1:] {
		if e.Offset != int64(i) {
			t.Errorf("record %d has offset %d", i, e.Offset)
		}
	}
	calls := resp.of(agentserver.KindToolCall)
	results := resp.of(agentserver.KindToolResult)
	ids := map[string]bool{}
	for _, c := range calls {
		ids[c.Call.ID] = true
	}
	for _, r := range results {
		if !ids[r.Call.ID] || r.Result.Error != "" {
			t.Errorf("result %+v: unknown call, or an error", r.Call)
		}
	}
	if len(ids) != 2 || string(calls[0].Call.Args) != `{"city":"Paris"}` {
		t.Errorf("calls %+v %+v", calls[0].Call, calls[1].Call)
	}
	if got := resp.text(); got != "Sunny in Paris and Tokyo." {
		t.Errorf("text %q", got)
	}
	done := resp.last().Done
	if done.State != agentserver.StateDone || done.Text != "Sunny in Paris and Tokyo." || done.Usage.TotalTokens == 0 || done.Error != nil {
		t.Errorf("done %+v", done)
	}
	if n := len(h.stored("alice", "t1")); n != 4 {
		t.Errorf("%d contents stored, want 4 (question, calls, responses, answer)", n)
	}

	// The next message continues the thread, and the thread is saved once
	// per run.
	h.model.Enqueue(fake.Text("You're welcome."))
	resp = h.post(bg, "alice", testRequest{Thread: "t1", Text: "Thanks!"})
	if resp.last().Done.Text != "You're welcome." {
		t.Fatalf("second run: %v", resp.kinds())
	}
	reqs := h.model.Requests()
	if got := requestText(reqs[len(reqs)-1]); len(got) != 5 || got[4] != "user: Thanks!" {
		t.Errorf("the second run sent %q", got)
	}
	counting.mu.Lock()
	defer counting.mu.Unlock()
	for id, n := range counting.appends {
		if n != 2 {
			t.Errorf("%s appended %d times, want 2 (one per run)", id, n)
		}
	}
}

// A client that goes away mid-run loses nothing: the run finishes and is
// saved, and the next request sees it.
func TestDisconnectMidRun(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.model.Enqueue(fake.Calls(call("Gate")), fake.Text("Sunny at the gate."))
	ctx, cancel := context.WithCancel(bg)
	got := make(chan *response)
	go func() { got <- h.post(ctx, "alice", testRequest{Thread: "t1", Text: "Weather at the gate?"}) }()
	if city := <-h.started; city != "Gate" {
		t.Fatalf("tool started for %q", city)
	}
	info := h.await("alice", "t1", func(agentserver.RunInfo) bool { return true })
	cancel() // the client goes away while the tool runs
	<-got
	close(h.gate)
	info = h.awaitRun("alice", info.ID, over)
	if info.State != agentserver.StateDone || info.Done.Text != "Sunny at the gate." {
		t.Fatalf("the run ended %+v", info.Done)
	}
	if n := len(h.stored("alice", "t1")); n != 4 {
		t.Errorf("%d contents stored, want 4", n)
	}
}

// A second request on a busy thread is refused and changes nothing; the
// same thread of another user is another thread.
func TestBusyThread(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.model.Enqueue(fake.Calls(call("Gate")), fake.Text("Bob's answer."), fake.Text("Done."))
	done := make(chan *response)
	go func() { done <- h.post(bg, "alice", testRequest{Thread: "t1", Text: "Weather at the gate?"}) }()
	<-h.started
	resp := h.post(bg, "alice", testRequest{Thread: "t1", Text: "Another question"})
	if resp.status != 409 || resp.errorCode() != "busy" {
		t.Errorf("second request: %d %s, want 409 busy", resp.status, resp.body)
	}
	resp = h.post(bg, "bob", testRequest{Thread: "t1", Text: "Hi"})
	if resp.status != 200 || resp.last().Done.Text != "Bob's answer." {
		t.Errorf("bob's request on his own t1: %d %v %s", resp.status, resp.kinds(), resp.body)
	}
	close(h.gate)
	if r := <-done; r.last().Done.Text != "Done." {
		t.Errorf("alice's run: %v", r.kinds())
	}
	for _, req := range h.model.Requests() {
		for _, c := range requestText(req) {
			if strings.Contains(c, "Another question") {
				t.Errorf("the refused message reached the model: %q", c)
			}
		}
	}
	if got := requestText(h.model.Requests()[1]); len(got) != 1 || got[0] != "user: Hi" {
		t.Errorf("bob's run sent %q: it must not see alice's thread", got)
	}
}

// Another user's thread and run answer exactly as unknown ones: not
// listed, not found, not cancellable.
func TestAnotherUsersThread(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.model.Enqueue(fake.Text("Alice's secret answer."))
	resp := h.post(bg, "alice", testRequest{Thread: "secret", Text: "Hi"})
	info, err := h.srv.Threads(bg, "alice", agentserver.ThreadsOptions{})
	if err != nil || len(info.Threads) != 1 || info.Threads[0].ID != "secret" {
		t.Fatalf("alice's threads %+v %v", info, err)
	}
	if list, err := h.srv.Threads(bg, "bob", agentserver.ThreadsOptions{}); err != nil || len(list.Threads) != 0 {
		t.Errorf("bob's threads %+v %v, want none", list, err)
	}
	_, errUnknown := h.srv.History(bg, "bob", "no-such-thread")
	_, errForeign := h.srv.History(bg, "bob", "secret")
	if !errorsIsNotFound(errUnknown) || !errorsIsNotFound(errForeign) || errUnknown.Error() == "" ||
		strings.Replace(errForeign.Error(), "secret", "no-such-thread", 1) != errUnknown.Error() {
		t.Errorf("bob reading alice's thread: %v; an unknown thread: %v; want the same not found", errForeign, errUnknown)
	}
	// Users whose names would collide unescaped stay apart.
	for _, u := range []string{"alice/secret", "alice%2Fsecret", "alice/"} {
		if _, err := h.srv.History(bg, u, "secret"); !errorsIsNotFound(err) {
			t.Errorf("user %q reads alice's thread: %v", u, err)
		}
	}
	lastRun := resp.run()
	if _, err := h.srv.Run(bg, "bob", lastRun); !errorsIsNotFound(err) {
		t.Errorf("bob looking alice's run up: %v", err)
	}
	if _, err := h.srv.Attach(bg, "bob", lastRun, 0); !errorsIsNotFound(err) {
		t.Errorf("bob attaching to alice's run: %v", err)
	}
	if err := h.srv.Cancel(bg, "bob", lastRun); !errorsIsNotFound(err) {
		t.Errorf("bob cancelling alice's run: %v", err)
	}
	if _, err := h.srv.Run(bg, "alice", lastRun); err != nil {
		t.Errorf("alice looking her run up: %v", err)
	}
}

func errorsIsNotFound(err error) bool { return err != nil && isErr(err, agentserver.ErrNotFound) }

// The log of a run that is over, once its end was read and nobody reads
// it any more, is cut to its last record: a reader that attaches later
// reads the end. A run whose end nobody read keeps its whole log.
func TestFinishedLogIsCut(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.model.Enqueue(fake.Text("Hello."))
	resp := h.post(bg, "alice", testRequest{Thread: "t1", Text: "Hi"})
	info, err := h.srv.Run(bg, "alice", resp.run())
	if err != nil || info.Len != 5 {
		t.Fatalf("run %+v %v", info, err)
	}
	cur, err := h.srv.Attach(bg, "alice", resp.run(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	if n := cur.Buffered(); n != 1 {
		t.Errorf("Buffered = %d, want 1: the end", n)
	}
	h.model.Enqueue(fake.Text("Unread."))
	att, err := h.srv.Submit(bg, "alice", agentserver.Request{Thread: "t2", Message: genai.NewContentFromText("Hi", genai.RoleUser)})
	if err != nil {
		t.Fatal(err)
	}
	att.Cursor.Close() // unread
	h.awaitRun("alice", att.Run.ID, over)
	whole, err := h.srv.Attach(bg, "alice", att.Run.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n := whole.Buffered(); n != 5 {
		t.Errorf("a run whose end nobody read keeps %d records, want its whole log of 5", n)
	}
	whole.Close()
	rec, ok, err := cur.Next(bg, 0)
	if err != nil || !ok || rec.Kind != agentserver.KindDone || rec.Offset != 4 || rec.Done.Text != "Hello." {
		t.Errorf("the first record read: %+v %v %v", rec, ok, err)
	}
	if _, _, err := cur.Next(bg, 0); err != io.EOF {
		t.Errorf("after the end: %v, want io.EOF", err)
	}
}

// A run started with KeepLog keeps its whole log once it is over and
// read, rather than its last record: every call, result and turn at its
// offset, the pieces of each turn's text and thoughts joined into one
// record at the first piece's offset. A cursor attached among the joined
// pieces reads from the next record.
func TestKeptLog(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.model.Enqueue(fake.Calls(call("Paris")),
		fake.Parts(&genai.Part{Text: "Looking at the sky.", Thought: true}, genai.NewPartFromText("Sunny in Paris, all day long.")).WithTextChunk(4))
	att, err := h.srv.Submit(bg, "alice", agentserver.Request{Thread: "t1", Message: genai.NewContentFromText("Weather?", genai.RoleUser), KeepLog: true})
	if err != nil {
		t.Fatal(err)
	}
	var streamed []agentserver.Record
	for {
		rec, ok, err := att.Cursor.Next(bg, time.Minute)
		if err == io.EOF {
			break
		}
		if err != nil || !ok {
			t.Fatalf("reading the run: %v %v", ok, err)
		}
		streamed = append(streamed, rec)
	}
	att.Cursor.Close()
	info, err := h.srv.Run(bg, "alice", att.Run.ID)
	if err != nil || info.Len != int64(len(streamed)) {
		t.Fatalf("run %+v %v: want Len %d", info, err, len(streamed))
	}

	cur, err := h.srv.Attach(bg, "alice", att.Run.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var kept []agentserver.Record
	for {
		rec, ok, err := cur.Next(bg, 0)
		if err == io.EOF {
			break
		}
		if err != nil || !ok {
			t.Fatalf("reading the kept log: %v %v", ok, err)
		}
		kept = append(kept, rec)
	}
	cur.Close()

	// What the stream read, its pieces joined: the log to expect.
	var want []agentserver.Record
	for _, rec := range streamed {
		if n := len(want); n > 0 && (rec.Kind == agentserver.KindText || rec.Kind == agentserver.KindThought) &&
			want[n-1].Kind == rec.Kind && want[n-1].Turn == rec.Turn {
			want[n-1].Text += rec.Text
			continue
		}
		want = append(want, rec)
	}
	if len(want) >= len(streamed) {
		t.Fatalf("the stream read %d records, none of them pieces to join: %+v", len(streamed), streamed)
	}
	var got, wanted []string
	for _, rec := range kept {
		got = append(got, fmt.Sprintf("%d %s %q", rec.Offset, rec.Kind, rec.Text))
	}
	for _, rec := range want {
		wanted = append(wanted, fmt.Sprintf("%d %s %q", rec.Offset, rec.Kind, rec.Text))
	}
	if strings.Join(got, "\n") != strings.Join(wanted, "\n") {
		t.Errorf("the kept log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wanted, "\n"))
	}
	var text, thought *agentserver.Record
	for i := range kept {
		switch kept[i].Kind {
		case agentserver.KindText:
			text = &kept[i]
		case agentserver.KindThought:
			thought = &kept[i]
		case agentserver.KindToolResult:
			if string(kept[i].Result.Output) != `"sunny in Paris"` {
				t.Errorf("the call's result %s", kept[i].Result.Output)
			}
		}
	}
	if text == nil || text.Text != "Sunny in Paris, all day long." || thought == nil || thought.Text != "Looking at the sky." {
		t.Fatalf("text %+v, thought %+v", text, thought)
	}

	// Among the joined pieces, a cursor reads from the next record.
	mid, err := h.srv.Attach(bg, "alice", att.Run.ID, text.Offset+1)
	if err != nil {
		t.Fatal(err)
	}
	defer mid.Close()
	if n := mid.Buffered(); n != len(kept)-slices.IndexFunc(kept, func(r agentserver.Record) bool { return r.Offset == text.Offset })-1 {
		t.Errorf("Buffered from among the pieces = %d", n)
	}
	rec, ok, err := mid.Next(bg, 0)
	if err != nil || !ok || rec.Offset <= text.Offset || rec.Kind == agentserver.KindText {
		t.Errorf("the record after the joined text: %+v %v %v", rec, ok, err)
	}
	if _, err := h.srv.Attach(bg, "alice", att.Run.ID, info.Len+1); err == nil {
		t.Error("Attach past the log's end succeeded")
	}
}
