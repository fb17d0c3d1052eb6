package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/internal/pgtest"
)

// mainArgsEnv, set, runs the test binary as the command with these
// arguments, separated by \x1f (see TestMain).
const mainArgsEnv = "SERVER_TEST_MAIN_ARGS"

// proc is the command running in a process of its own.
type proc struct {
	cmd *exec.Cmd
	url string
}

// startServer starts the command with args on a loopback port, and
// returns once it serves; the process is killed when the test ends.
func startServer(t testing.TB, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), mainArgsEnv+"="+strings.Join(append([]string{"-addr", "127.0.0.1:0"}, args...), "\x1f"),
		"GEMINI_API_KEY=", "GOOGLE_API_KEY=")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd}
	t.Cleanup(p.kill)
	lines := bufio.NewScanner(stderr)
	for lines.Scan() {
		line := lines.Text()
		if _, u, ok := strings.Cut(line, "url=http://"); ok && strings.Contains(line, "serving") {
			p.url = "http://" + strings.Fields(u)[0]
			break
		}
	}
	if p.url == "" {
		t.Fatalf("the server did not start: %v", lines.Err())
	}
	go io.Copy(io.Discard, stderr)
	return p
}

// kill kills the process with SIGKILL, and waits for it.
func (p *proc) kill() {
	if p.cmd.ProcessState == nil {
		p.cmd.Process.Kill()
		p.cmd.Wait()
	}
}

// killStores are the stores the kill tests run on: a SQLite file, and a
// PostgreSQL database (skipped without a server).
func killStores(t testing.TB, name string) string {
	if name == "sqlite" {
		return filepath.Join(t.TempDir(), "threads.db")
	}
	return pgtest.Database(t)
}

// approvalShown returns how long a new process on db takes, from its
// start, to show the approval that a killed one left pending on chat:
// the AI SDK's resume route replays the run to its approval request. It
// returns the replay, and the time the process took to serve.
func approvalShown(t testing.TB, db, chat string) (replay string, shown, served time.Duration) {
	t.Helper()
	start := time.Now()
	p := startServer(t, "-approve", "-db", db)
	served = time.Since(start)
	deadline := start.Add(2 * time.Minute) // a hang guard only
	for {
		resp, err := http.Get(p.url + "/api/chat/" + chat + "/stream")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 && strings.Contains(string(b), `"tool-approval-request"`) {
			shown = time.Since(start)
			p.kill()
			return string(b), shown, served
		}
		if time.Now().After(deadline) {
			t.Fatalf("the approval is not shown %v after the new process started: %d %s", time.Since(start), resp.StatusCode, b)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A server process killed (SIGKILL) while a run waits for an approval:
// the next process on the same store shows the approval at once, as it
// was (its id, the call and its input), and the approval finishes the run
// there. On SQLite and PostgreSQL. How long the approval takes to be
// shown is BenchmarkRecoveryAfterKill's.
func TestKilledServerShowsApproval(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			db := killStores(t, name)
			first := startServer(t, "-approve", "-db", db)
			_, events := post(t, first.url+"/api/chat", `{"id":"chat-1","messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"What is the weather in Paris?"}]}]}`)
			approval, call := field(events, "approvalId"), field(events, "toolCallId")
			if approval == "" {
				t.Fatalf("no approval request:\n%s", strings.Join(events, "\n"))
			}
			first.kill()

			replay, shown, _ := approvalShown(t, db, "chat-1")
			t.Logf("the approval was shown %v after the new process started", shown)
			for _, want := range []string{`"approvalId":"` + approval + `"`, `"toolCallId":"` + call + `"`, `"toolName":"get_weather"`, `"input":{"city":"Paris"}`} {
				if !strings.Contains(replay, want) {
					t.Errorf("the replay does not show %s:\n%s", want, replay)
				}
			}
			next := startServer(t, "-approve", "-db", db)
			_, events = post(t, next.url+"/api/chat", `{"id":"chat-1","messages":[{"id":"a1","role":"assistant","parts":[{"type":"tool-get_weather","toolCallId":"`+call+
				`","state":"approval-responded","input":{"city":"Paris"},"approval":{"id":"`+approval+`","approved":true}}]}]}`)
			all := strings.Join(events, "\n")
			if !strings.Contains(all, `"tool-output-available"`) || !strings.Contains(all, "Paris: ") || !slices.Contains(events, "[DONE]") {
				t.Errorf("after the approval:\n%s", all)
			}
		})
	}
}

// How long a server process started on the store of one that was killed
// (SIGKILL) while a run waited for an approval takes to show that
// approval (shown-ms: from its start to the AI SDK's resume route
// replaying the approval request), and to serve (serve-ms: its listening
// log line); each iteration kills a process and starts the next, and the
// metrics are the p50 over the iterations (run with -benchtime 10x).
func BenchmarkRecoveryAfterKill(b *testing.B) {
	for _, name := range []string{"sqlite", "postgres"} {
		b.Run(name, func(b *testing.B) {
			db := killStores(b, name)
			var shown, served []time.Duration
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				first := startServer(b, "-approve", "-db", db)
				chat := "chat-" + string(rune('a'+i%26)) + time.Now().Format("150405.000000")
				_, events := post(b, first.url+"/api/chat", `{"id":"`+chat+`","messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"What is the weather in Paris?"}]}]}`)
				if field(events, "approvalId") == "" {
					b.Fatalf("no approval request: %v", events)
				}
				first.kill()
				b.StartTimer()
				_, s, v := approvalShown(b, db, chat)
				shown, served = append(shown, s), append(served, v)
			}
			p50 := func(ds []time.Duration) float64 {
				slices.Sort(ds)
				return float64(ds[len(ds)/2]) / float64(time.Millisecond)
			}
			b.ReportMetric(p50(shown), "shown-ms")
			b.ReportMetric(p50(served), "serve-ms")
		})
	}
}
