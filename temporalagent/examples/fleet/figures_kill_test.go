package main

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestFiguresKilled measures the fail-over figure of BENCHMARKS.md
// ("Served runs on Temporal (issue 34)") after a SIGKILL, with real
// instance processes: FLEET_FIGURES=1 runs it, without -race, on the store
// of TOOLNEXUS_PG_URL. It measures the command's -sticky-timeout and the
// SDK's default (5 s) side by side, or the timeouts FLEET_STICKY lists
// (comma-separated durations).
func TestFiguresKilled(t *testing.T) {
	if os.Getenv("FLEET_FIGURES") != "1" {
		t.Skip("FLEET_FIGURES=1 measures the figures of BENCHMARKS.md")
	}
	stickies := []time.Duration{DefaultStickyTimeout, 5 * time.Second}
	if list := os.Getenv("FLEET_STICKY"); list != "" {
		stickies = nil
		for s := range strings.SplitSeq(list, ",") {
			d, err := time.ParseDuration(strings.TrimSpace(s))
			if err != nil {
				t.Fatalf("FLEET_STICKY: %v", err)
			}
			stickies = append(stickies, d)
		}
	}
	t.Logf("load average before: %s", loadavg())
	for _, sticky := range stickies {
		failOverSIGKILL(t, sticky)
	}
	t.Logf("load average after: %s", loadavg())
}

// failOverSIGKILL times, over 20 runs, how long a client waits for the
// first record of a run on B once the instance A that holds it is killed
// (SIGKILL): the run waits for an approval on a fresh instance process
// A, alone on the task queue, whose worker ran it (so that it sits in
// A's cache and on A's sticky queue; a worker polling already would take
// the run's first workflow task: pollers are served in turn); B, a fresh
// process too, starts and polls; A is killed; the client resumes the
// stream on B. The run is then approved on B and ends, and B is killed.
func failOverSIGKILL(t *testing.T, sticky time.Duration) {
	f := newProcFleet(t)
	f.sticky = sticky
	const n = 20
	var total []time.Duration
	tries := 0
	for ; len(total) < n && tries < 2*n; tries++ {
		a := f.instances("A")[0]
		chat := id(fmt.Sprintf("sigkill-%v-%d", sticky, tries))
		msgs := []any{userMessage("u1", "What is the weather in Paris?")}
		r1 := doAt(t, http.DefaultClient, a.url, "POST", "/api/chat", map[string]any{"id": chat, "messages": msgs})
		ids := approvalIDs(r1)
		if len(ids) != 1 {
			t.Fatalf("on A: %d %v %s", r1.status, r1.types(), r1.body)
		}
		held := a.holds(f.holder(chat))
		b := f.instances("B")[0]
		start := time.Now()
		a.kill()
		resp, err := http.Get(b.url + "/api/chat/" + chat + "/stream")
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(resp.Body)
		first := time.Duration(0)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "data: ") && first == 0 {
				first = time.Since(start)
			}
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || first == 0 {
			t.Fatalf("resumed on B: %d", resp.StatusCode)
		}
		if held {
			total = append(total, first)
		}
		part := approvalPart(ids[0], true)
		part["type"] = "tool-get_weather"
		msgs = append(msgs, map[string]any{"id": r1.events[0]["messageId"], "role": "assistant", "parts": []any{part}})
		if r2 := doAt(t, http.DefaultClient, b.url, "POST", "/api/chat", map[string]any{"id": chat, "messages": msgs}); !slices.Contains(r2.types(), "tool-output-available") {
			t.Fatalf("approved on B: %d %v %s", r2.status, r2.types(), r2.body)
		}
		b.kill()
	}
	if len(total) < n {
		t.Fatalf("A held %d runs of %d", len(total), tries)
	}
	t.Logf("fail-over, A killed (SIGKILL), -sticky-timeout %v, %d runs held by A (of %d): A's kill to the first record on B: p50 %v p99 %v; all: %v",
		sticky, n, tries, quantile(total, .5), quantile(total, .99), total)
}
