package main

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/internal/fake"
)

// TestLongAnswerSurvivesWorkerKill kills a worker process (SIGKILL) while it
// makes the second hop of an answer the API cuts in three, a model
// activity of its own that sends the first hop's continuation token; a
// second worker process makes that hop again, with the same token, and the
// last one, and the run ends with the whole answer. The first hop, whose
// response and token are in the workflow's history, is never asked for
// again: the answer is resumed, not paid for twice.
func TestLongAnswerSurvivesWorkerKill(t *testing.T) {
	e := newEnv(t)
	first := e.startWorker()
	id := "L" + fmt.Sprint(time.Now().UnixNano())
	hop1 := longAnswerHop1(id)
	run := e.start("long", id, "longanswer "+id)
	select {
	case <-hop1:
	case <-time.After(60 * time.Second):
		t.Fatal("the second hop was not asked for within 60s")
	}
	first.kill()
	e.startWorker()

	res, err := result(t, run, 90*time.Second)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	want := id + " hop 0. " + id + " hop 1. " + id + " hop 2."
	if res.Text != want || len(res.Turns) != 1 || res.Turns[0].Continuations != 2 {
		t.Errorf("answer %q in %d turns, %d continuations; want %q, 1, 2", res.Text, len(res.Turns), res.Turns[0].Continuations, want)
	}
	if got := longAnswerRequests(id); got != [3]int{1, 2, 1} {
		t.Errorf("requests per hop %v, want [1 2 1]: the first hop once, the second again on the other worker, the last once", got)
	}
	recs := e.records()
	if n := count(recs, "event_Hop"); n != 3 {
		t.Errorf("the Observers saw %d Hop events, want one per hop made", n)
	}
}

// The "longanswer ID" scenario: an answer in three hops, with tokens of
// its own ("ID-1", "ID-2"), whose second hop keeps its first request
// waiting, until the test's server closes, and tells the test it came.
var longHops struct {
	sync.Mutex
	requests map[string]*[3]int
	waiting  map[string]chan struct{}
}

// longAnswerHop1 returns a channel closed when the second hop of run id is
// first asked for.
func longAnswerHop1(id string) <-chan struct{} {
	longHops.Lock()
	defer longHops.Unlock()
	if longHops.waiting == nil {
		longHops.waiting, longHops.requests = map[string]chan struct{}{}, map[string]*[3]int{}
	}
	c := make(chan struct{})
	longHops.waiting[id], longHops.requests[id] = c, &[3]int{}
	return c
}

// longAnswerRequests returns how many times each hop of run id was asked
// for.
func longAnswerRequests(id string) [3]int {
	longHops.Lock()
	defer longHops.Unlock()
	return *longHops.requests[id]
}

func longAnswer(req *fake.Request, id string) *fake.Reply {
	hop := 0
	switch string(req.ContinuationToken) {
	case id + "-1":
		hop = 1
	case id + "-2":
		hop = 2
	}
	longHops.Lock()
	n := longHops.requests[id]
	n[hop]++
	again := n[hop] > 1
	waiting := longHops.waiting[id]
	longHops.Unlock()
	text := fake.Text(fmt.Sprintf("%s hop %d. ", id, hop))
	switch {
	case hop == 0:
		return text.WithContinuationToken([]byte(id + "-1"))
	case hop == 1 && !again:
		close(waiting)
		return text.WithContinuationToken([]byte(id + "-2")).WithDelay(10 * time.Minute) // its worker dies first
	case hop == 1:
		return text.WithContinuationToken([]byte(id + "-2"))
	}
	return fake.Text(fmt.Sprintf("%s hop 2.", id))
}
