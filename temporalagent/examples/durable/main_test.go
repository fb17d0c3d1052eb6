package main

import (
	"context"
	"strings"
	"testing"
)

const question = "What is the weather in Paris and Tokyo?\n"

// checkAnswer checks the example's output for the question: two weather
// calls and an answer naming both cities.
func checkAnswer(t *testing.T, out string) {
	t.Helper()
	for _, want := range []string{`→ get_weather {"city":"Paris"}`, `→ get_weather {"city":"Tokyo"}`, "← get_weather", "Paris: ", "Tokyo: "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestExampleEmbedded runs the example as its command line without flags
// does: an embedded Temporal server, a worker, the offline model, and a run
// per line of standard input.
func TestExampleEmbedded(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	var out, info strings.Builder
	if err := run(context.Background(), options{queue: "example"}, strings.NewReader(question+"And in Rome?\n"), &out, &info); err != nil {
		t.Fatal(err)
	}
	checkAnswer(t, out.String())
	if !strings.Contains(out.String(), `→ get_weather {"city":"Rome"}`) || !strings.Contains(info.String(), "Started a Temporal server") {
		t.Errorf("output:\n%s\ninfo:\n%s", out.String(), info.String())
	}
}

// TestExampleWorkerAndClient runs the example's -worker and -client modes
// against a server given with -temporal.
func TestExampleWorkerAndClient(t *testing.T) {
	ts := shared(t)
	o := options{temporal: ts.GetFrontendHostPort(), namespace: ts.GetDefaultNamespace(), queue: "example-split"}
	ctx, stop := context.WithCancel(context.Background())
	workerDone := make(chan error, 1)
	go func() {
		w := o
		w.worker = true
		var info strings.Builder
		workerDone <- run(ctx, w, strings.NewReader(""), &strings.Builder{}, &info)
	}()
	c := o
	c.client = true
	var out strings.Builder
	ctxRun, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	if err := run(ctxRun, c, strings.NewReader(question), &out, &strings.Builder{}); err != nil {
		t.Fatal(err)
	}
	checkAnswer(t, out.String())
	stop()
	if err := <-workerDone; err != nil {
		t.Errorf("worker: %v", err)
	}
}
