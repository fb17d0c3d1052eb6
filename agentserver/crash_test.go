package agentserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/citest"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/internal/pgtest"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/session/pgstore"
	"github.com/toolnexus/toolnexus-go/session/sqlitestore"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// The environment of the crash tests' server process: the test binary,
// run again with childEnv set, serves the tests' protocol (see handler)
// on a store, and prints the address it listens on.
const (
	childEnv   = "AGENTSERVER_CHILD"       // the store: a postgres:// URL, or a SQLite file
	modelEnv   = "AGENTSERVER_CHILD_MODEL" // the fake model's URL
	countEnv   = "AGENTSERVER_CHILD_COUNT" // the file each tool appends its name to when it runs
	blockEnv   = "AGENTSERVER_CHILD_BLOCK" // the tools that block until the process dies, separated by commas
	addrPrefix = "listening on "
)

// openStore opens the store a URL names: PostgreSQL or a SQLite file.
func openStore(ctx context.Context, url string) (session.Journaler, func() error, error) {
	if strings.HasPrefix(url, "postgres://") {
		s, err := pgstore.Open(ctx, url)
		if err != nil {
			return nil, nil, err
		}
		return s, func() error { s.Close(); return nil }, nil
	}
	s, err := sqlitestore.Open(ctx, url)
	if err != nil {
		return nil, nil, err
	}
	return s, s.Close, nil
}

// serveChild is the crash tests' server process. Its tools: act (a tool
// that is not safe to repeat), look (read-only: safe to repeat), and send
// (needs approval); each appends its name to the count file when it runs.
func serveChild() {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(2)
	}
	ctx := context.Background()
	store, _, err := openStore(ctx, os.Getenv(childEnv))
	if err != nil {
		fail(err)
	}
	count := func(name string) {
		f, err := os.OpenFile(os.Getenv(countEnv), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			fail(err)
		}
		fmt.Fprintln(f, name)
		f.Close()
	}
	block := func(ctx context.Context, name string) {
		if slices.Contains(strings.Split(os.Getenv(blockEnv), ","), name) {
			<-ctx.Done()
		}
	}
	act := toolset.MustFunc("act", "Does something", func(ctx context.Context, in whatIn) (string, error) {
		count("act")
		block(ctx, "act")
		return "done", nil
	})
	look := toolset.MustFunc("look", "Looks", func(ctx context.Context, in whatIn) (string, error) {
		count("look")
		block(ctx, "look")
		return "seen", nil
	})
	look.ReadOnly = true
	send := toolset.MustFunc("send", "Sends", func(ctx context.Context, in whatIn) (string, error) {
		count("send")
		block(ctx, "send")
		return "sent", nil
	})
	client, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: fake.APIKey, Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: os.Getenv(modelEnv)}})
	if err != nil {
		fail(err)
	}
	a, err := agent.New(agent.Config{Models: client.Models, Model: model, Tools: toolset.MustNew(act, look, send),
		NeedsApproval: func(c *genai.FunctionCall) bool { return c.Name == "send" },
		Retry:         agent.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		fail(err)
	}
	// A short lease: the next process takes over a killed one's runs
	// once their claims run out.
	srv, err := agentserver.New(agentserver.Config{Agent: a, Store: store, Logger: slog.New(slog.NewTextHandler(os.Stderr, nil)), RunLease: time.Second,
		Authenticate: func(r *http.Request) (string, error) { return r.Header.Get("X-User"), nil }})
	if err != nil {
		fail(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	// SIGTERM is a graceful stop, as a deploy sends: Close, then exit.
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	go func() { fail(http.Serve(ln, handler(srv))) }()
	fmt.Println(addrPrefix + ln.Addr().String())
	<-term
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := srv.Close(ctx); err != nil {
		fail(err)
	}
	os.Exit(0)
}

// whatIn is the input of the crash tests' tools.
type whatIn struct {
	What string `json:"what"`
}

// what is the arguments of the crash tests' calls.
var what = map[string]any{"what": "it"}

// child is a server process of the crash tests.
type child struct {
	cmd  *exec.Cmd
	base string
	run  string // the run the test follows, once it knows it
}

// replay reads the run the test follows from its start, over or not (a
// run picked up may end before the test reads it).
func (c *child) replay() *response { return c.do(bg, "GET", "/replay?run="+c.run, nil) }

// startChild starts a server process on store, whose tools named in block
// block until it dies.
func startChild(t *testing.T, store, modelURL, count string, block ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+store, modelEnv+"="+modelURL, countEnv+"="+count, blockEnv+"="+strings.Join(block, ","))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd}
	t.Cleanup(c.kill)
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), addrPrefix)
	if err != nil || !ok {
		t.Fatalf("the server process did not start: %q, %v", line, err)
	}
	c.base = "http://" + addr
	return c
}

// terminate stops the process with SIGTERM, as a deploy does, and waits
// for it to exit: it must exit cleanly.
func (c *child) terminate(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("the server process did not exit cleanly on SIGTERM: %v", err)
	}
}

// kill kills the process with SIGKILL.
func (c *child) kill() {
	if c.cmd.ProcessState == nil {
		c.cmd.Process.Kill()
		c.cmd.Wait()
	}
}

// do sends a request of the tests' protocol and reads the whole response;
// a process killed meanwhile leaves the response as far as it went.
func (c *child) do(ctx context.Context, method, path string, req any) *response {
	var body io.Reader
	if req != nil {
		b, _ := json.Marshal(req)
		body = bytes.NewReader(b)
	}
	r, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return &response{body: err.Error()}
	}
	r.Header.Set("X-User", "alice")
	r.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		return &response{body: err.Error()}
	}
	defer resp.Body.Close()
	out := &response{status: resp.StatusCode}
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		out.body = string(b)
		return out
	}
	out.raw, out.events, _ = readEvents(resp.Body)
	return out
}

// counts returns how many times each tool ran, from the count file.
func counts(t *testing.T, path string) map[string]int {
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, name := range strings.Fields(string(b)) {
		n[name]++
	}
	return n
}

// until waits for cond, polling: a hang guard, not a measure of time.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestCrashSQLite kills a server process on SQLite at each kind of point
// of a run, and checks that a new process on the same file goes on.
func TestCrashSQLite(t *testing.T) {
	testCrash(t, func(t *testing.T) string { return filepath.Join(t.TempDir(), "threads.db") })
}

// TestCrashPostgres is TestCrashSQLite on PostgreSQL.
func TestCrashPostgres(t *testing.T) {
	pgtest.URL(t)
	testCrash(t, func(t *testing.T) string { return pgtest.Database(t) })
}

func testCrash(t *testing.T, newStore func(*testing.T) string) {
	citest.Heavy(t, "starts server processes and kills them")
	// Each case: what the model answers, the point at which the first
	// process is killed, what the second must do, and what comes of it.
	for _, tc := range []struct {
		name string
		// first runs the run in the first process until the point to kill
		// it at.
		first func(t *testing.T, c *child, m *fake.Server, count string) *response
		// second continues it in the second process, given what the first
		// one's client read (nil when the process died mid-response), and
		// returns its records.
		second func(t *testing.T, c *child, read *response) *response
		// reply answers the model request numbered seq (from 1, over both
		// processes).
		reply  func(seq int) *fake.Reply
		counts map[string]int
		// block names the tools that block in the first process.
		block []string
		// term stops the first process with SIGTERM (a graceful stop,
		// Close) rather than SIGKILL.
		term bool
		// stored is the thread at the end, as requestText writes it.
		stored []string
	}{{
		name: "model streaming",
		reply: func(seq int) *fake.Reply {
			if seq == 1 { // the first piece, and never the rest
				r := fake.Text("Hello, this is a long answer.").WithTextChunk(5)
				r.EventDelay = time.Hour
				return r
			}
			return fake.Text("Hello again.")
		},
		first: func(t *testing.T, c *child, m *fake.Server, count string) *response {
			go c.do(bg, "POST", "/run", testRequest{Thread: "t1", Text: "Say hello"})
			until(t, "the model call", func() bool { return len(m.Requests()) == 1 })
			return nil
		},
		second: func(t *testing.T, c *child, _ *response) *response { return c.replay() },
		counts: map[string]int{},
		stored: []string{"user: Say hello", "model: Hello again."},
	}, {
		name:  "tools running",
		block: []string{"act", "look"},
		reply: replies(fake.Calls(fake.Call("act", what), fake.Call("look", what)), fake.Text("Done and seen.")),
		first: func(t *testing.T, c *child, m *fake.Server, count string) *response {
			go c.do(bg, "POST", "/run", testRequest{Thread: "t1", Text: "Act and look"})
			until(t, "both tools to start", func() bool { n := counts(t, count); return n["act"] == 1 && n["look"] == 1 })
			return nil
		},
		second: func(t *testing.T, c *child, _ *response) *response {
			resp := c.replay()
			// The calls the client was shown are shown again, once.
			want := []string{"open", "start", "step", "tool-call", "tool-call"}
			if k := resp.kinds(); !slices.Equal(k[:min(len(k), len(want))], want) || len(resp.of(agentserver.KindToolCall)) != 2 {
				t.Errorf("the recovered run's log is %v; want it to start with %v, and no call twice", k, want)
			}
			return resp
		},
		counts: map[string]int{"act": 1, "look": 2}, // act is not run again; look, read-only, is
		stored: []string{"user: Act and look", `model: call act{"what":"it"} | call look{"what":"it"}`,
			`user: response act{"error":"tool act was interrupted: the process running it stopped before it returned, so it may or may not have run; check whether it took effect before calling it again, or ask the user"} | response look{"result":"seen"}`,
			"model: Done and seen."},
	}, {
		name:  "waiting for an approval",
		reply: replies(fake.Calls(fake.Call("send", what)), fake.Text("Sent.")),
		first: sendPaused,
		second: func(t *testing.T, c *child, read *response) *response {
			_, p := recoveredPause(t, c, read)
			return approvePending(t, c, p)
		},
		counts: map[string]int{"send": 1},
		stored: []string{"user: Send it", `model: call send{"what":"it"}`, `user: response send{"result":"sent"}`, "model: Sent."},
	}, {
		// A deploy: Close leaves the run that waits in its journal.
		name:  "waiting for an approval, stopped with SIGTERM",
		term:  true,
		reply: replies(fake.Calls(fake.Call("send", what)), fake.Text("Sent.")),
		first: sendPaused,
		second: func(t *testing.T, c *child, read *response) *response {
			replay, p := recoveredPause(t, c, read)
			if n := len(replay.of(agentserver.KindToolResult)) + len(replay.of(agentserver.KindDecision)); n != 0 {
				t.Errorf("the recovered run shows %d results or decisions of the first process's Close: %v", n, replay.kinds())
			}
			return approvePending(t, c, p)
		},
		counts: map[string]int{"send": 1},
		stored: []string{"user: Send it", `model: call send{"what":"it"}`, `user: response send{"result":"sent"}`, "model: Sent."},
	}, {
		name:  "an approved call running",
		block: []string{"send"},
		reply: replies(fake.Calls(fake.Call("send", what)), fake.Text("Maybe sent.")),
		first: func(t *testing.T, c *child, m *fake.Server, count string) *response {
			resp := c.do(bg, "POST", "/run", testRequest{Thread: "t1", Text: "Send it"})
			p := resp.last()
			if p.Kind != agentserver.KindPause {
				t.Fatalf("the run did not pause: %v %s", resp.kinds(), resp.body)
			}
			go c.do(bg, "POST", "/run", testRequest{Thread: "t1", Decisions: []agentserver.Decision{{CallID: p.Pending[0].Call.ID, Approved: true}}})
			until(t, "send to start", func() bool { return counts(t, count)["send"] == 1 })
			return resp
		},
		second: func(t *testing.T, c *child, _ *response) *response { return c.replay() },
		counts: map[string]int{"send": 1}, // approved, it ran, and may have taken effect: not run again
		stored: []string{"user: Send it", `model: call send{"what":"it"}`,
			`user: response send{"error":"tool send was interrupted: the process running it stopped before it returned, so it may or may not have run; check whether it took effect before calling it again, or ask the user"}`,
			"model: Maybe sent."},
	}, {
		// A denial journaled before the crash stays a denial: the
		// recovered run answers the model, and stores, it marked.
		name:  "a later turn's call running after a denial",
		block: []string{"act"},
		reply: replies(fake.Calls(fake.Call("send", what)), fake.Calls(fake.Call("act", what)), fake.Text("Not sent; maybe acted.")),
		first: func(t *testing.T, c *child, m *fake.Server, count string) *response {
			resp := sendPaused(t, c, m, count)
			p := resp.last()
			go c.do(bg, "POST", "/run", testRequest{Thread: "t1", Decisions: []agentserver.Decision{{CallID: p.Pending[0].Call.ID, Approved: false}}})
			until(t, "act to start", func() bool { return counts(t, count)["act"] == 1 })
			return resp
		},
		second: func(t *testing.T, c *child, _ *response) *response { return c.replay() },
		counts: map[string]int{"act": 1},
		stored: []string{"user: Send it", `model: call send{"what":"it"}`, `user: response send{"denied":true,"error":"the user denied this call"}`,
			`model: call act{"what":"it"}`,
			`user: response act{"error":"tool act was interrupted: the process running it stopped before it returned, so it may or may not have run; check whether it took effect before calling it again, or ask the user"}`,
			"model: Not sent; maybe acted."},
	}, {
		name:  "a later turn's call running",
		block: []string{"act"},
		reply: replies(fake.Calls(fake.Call("look", what)), fake.Calls(fake.Call("act", what)), fake.Text("Looked, then acted.")),
		first: func(t *testing.T, c *child, m *fake.Server, count string) *response {
			go c.do(bg, "POST", "/run", testRequest{Thread: "t1", Text: "Look, then act"})
			until(t, "act to start", func() bool { return counts(t, count)["act"] == 1 })
			return nil
		},
		second: func(t *testing.T, c *child, _ *response) *response {
			resp := c.replay()
			want := []string{"open", "start", "step", "tool-call", "tool-result", "step-end", "step", "tool-call", "tool-result", "step-end", "step", "text", "step-end", "done"}
			if k := resp.kinds(); !slices.Equal(k, want) {
				t.Errorf("the recovered run's log is %v; want %v", k, want)
			}
			return resp
		},
		counts: map[string]int{"look": 1, "act": 1},
		stored: []string{"user: Look, then act", `model: call look{"what":"it"}`, `user: response look{"result":"seen"}`,
			`model: call act{"what":"it"}`,
			`user: response act{"error":"tool act was interrupted: the process running it stopped before it returned, so it may or may not have run; check whether it took effect before calling it again, or ask the user"}`,
			"model: Looked, then acted."},
	}, {
		name:  "between results and the next model call",
		reply: replies(fake.Calls(fake.Call("look", what)), fake.Text("never").WithDelay(time.Hour), fake.Text("Seen.")),
		first: func(t *testing.T, c *child, m *fake.Server, count string) *response {
			go c.do(bg, "POST", "/run", testRequest{Thread: "t1", Text: "Look"})
			until(t, "the second model call", func() bool { return len(m.Requests()) == 2 })
			return nil
		},
		second: func(t *testing.T, c *child, _ *response) *response { return c.replay() },
		counts: map[string]int{"look": 1}, // its result was journaled: reused, not run again
		stored: []string{"user: Look", `model: call look{"what":"it"}`, `user: response look{"result":"seen"}`, "model: Seen."},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			store := newStore(t)
			count := filepath.Join(t.TempDir(), "count")
			m := fake.NewServer()
			defer m.Close()
			m.SetReplyFunc(func(req *fake.Request) *fake.Reply { return tc.reply(req.Seq) })
			c1 := startChild(t, store, m.URL, count, tc.block...)
			read := tc.first(t, c1, m, count)
			if tc.term {
				c1.terminate(t)
			} else {
				c1.kill()
			}

			s, closeStore, err := openStore(bg, store)
			if err != nil {
				t.Fatal(err)
			}
			defer closeStore()
			held, err := s.LoadRun(bg, "agentserver/alice/t1")
			if err != nil {
				t.Fatalf("the first process left no journal: %v", err)
			}
			// A run that waits is parked in the store, claimed by nobody;
			// another is claimed by the killed process's life, which ended
			// with it: the new process takes it at once.
			var last struct{ Kind string }
			json.Unmarshal(held.Entries[len(held.Entries)-1], &last)
			if parked := last.Kind == "pause"; parked != (held.Owner == "") {
				t.Errorf("the run's journal ends with a %s and is claimed by %q; want a journal claimed unless it waits", last.Kind, held.Owner)
			}
			c2 := startChild(t, store, m.URL, count)
			c2.run = held.Run
			if !tc.term {
				until(t, "the run to be picked up", func() bool {
					if c2.do(bg, "GET", "/current?thread=t1", nil).status == http.StatusOK {
						return true
					}
					_, err := s.LoadRun(bg, "agentserver/alice/t1")
					return errors.Is(err, session.ErrNoRun) // picked up, and over already
				})
			}
			resp := tc.second(t, c2, read)
			if last := resp.last(); last.Kind != agentserver.KindDone || last.Done.State != agentserver.StateDone {
				t.Errorf("the recovered run ended with %+v: %v", last, resp.kinds())
			}
			c2.kill()
			if got := counts(t, count); !mapsEqual(got, tc.counts) {
				t.Errorf("the tools ran %v times; want %v", got, tc.counts)
			}
			stored, err := s.Load(bg, "agentserver/alice/t1")
			if err != nil {
				t.Fatal(err)
			}
			if got := dump(stored); !slices.Equal(got, tc.stored) {
				t.Errorf("the thread holds\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.stored, "\n"))
			}
			if j, err := s.LoadRun(bg, "agentserver/alice/t1"); !errors.Is(err, session.ErrNoRun) {
				t.Errorf("a journal is left: %+v, %v", j, err)
			}
			for _, rj := range m.Rejections() {
				t.Errorf("the fake rejected request #%d (rule %s): %s", rj.Seq, rj.Rule, rj.Err.Message)
			}
		})
	}
}

// replies returns a reply function that answers request seq with
// rs[seq-1].
func replies(rs ...*fake.Reply) func(seq int) *fake.Reply {
	return func(seq int) *fake.Reply { return rs[seq-1] }
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// sendPaused asks for the send of the approval cases, and checks that
// the run paused for it.
func sendPaused(t *testing.T, c *child, _ *fake.Server, _ string) *response {
	resp := c.do(bg, "POST", "/run", testRequest{Thread: "t1", Text: "Send it"})
	if p := resp.last(); p.Kind != agentserver.KindPause {
		t.Fatalf("the run did not pause: %v %s", resp.kinds(), resp.body)
	}
	return resp
}

// recoveredPause replays the recovered run of t1 and checks that it is
// the run read, ending at the pause read ended at; it returns the replay
// and its pause.
func recoveredPause(t *testing.T, c *child, read *response) (*response, event) {
	t.Helper()
	replay := c.do(bg, "GET", "/replay?thread=t1", nil)
	p := replay.last()
	if p.Kind != agentserver.KindPause || len(p.Pending) != 1 || p.Pending[0].Call.ID != read.last().Pending[0].Call.ID {
		t.Fatalf("the recovered run shows %v; want it to end at the pause for %s", replay.kinds(), read.last().Pending[0].Call.ID)
	}
	if replay.run() != read.run() {
		t.Errorf("the recovered run is %s; want %s, its id", replay.run(), read.run())
	}
	return replay, p
}

// approvePending approves the pending call of pause p.
func approvePending(t *testing.T, c *child, p event) *response {
	t.Helper()
	resp := c.do(bg, "POST", "/run", testRequest{Thread: "t1", Decisions: []agentserver.Decision{{CallID: p.Pending[0].Call.ID, Approved: true}}})
	if resp.status != 200 {
		t.Fatalf("the decision: %d %s", resp.status, resp.body)
	}
	return resp
}
