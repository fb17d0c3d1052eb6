package a2aagent_test

// The tests' A2A server runs in a process of its own: this test binary,
// started again with serverEnv set (see TestMain). It serves two agents of
// the fake model over A2A: the desk at "/" (weather, an email that needs
// approval, a tool held until the test releases it, one that reports
// its progress), which sends push notifications to loopback, and a typed
// agent under "/typed". Requests authenticate with "Authorization: Bearer
// <user>". It prints "URL <base>" once it listens, "started <key>" and
// "stopped <key>: <error>" as held tools start and see their context end,
// and serves until its standard input closes.

import (
	"bufio"
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
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/a2aagent"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

const serverEnv = "A2AAGENT_TEST_SERVER"

// model is a Gemini 3 model: the fake gives calls ids and thought
// signatures, and checks that the history sends them back.
const model = "gemini-3-flash-preview"

// serve runs the tests' A2A server until standard input closes.
func serve() int {
	out := &lineWriter{w: os.Stdout}
	m := fake.NewServer()
	defer m.Close()
	m.SetReplyFunc(deskModel)

	var holdMu sync.Mutex
	holds := map[string]chan struct{}{}
	gate := func(key string) chan struct{} {
		holdMu.Lock()
		defer holdMu.Unlock()
		if holds[key] == nil {
			holds[key] = make(chan struct{})
		}
		return holds[key]
	}
	type cityIn struct {
		City string `json:"city"`
	}
	type emailIn struct {
		To string `json:"to"`
	}
	type holdIn struct {
		Key string `json:"key"`
	}
	type countIn struct {
		N int `json:"n"`
	}
	tools := toolset.MustNew(
		toolset.MustFunc("get_weather", "The weather in a city", func(ctx context.Context, in cityIn) (string, error) {
			return "sunny in " + in.City, nil
		}),
		toolset.MustFunc("send_email", "Sends an email", func(ctx context.Context, in emailIn) (string, error) {
			return "sent to " + in.To, nil
		}),
		toolset.MustFunc("hold", "Waits until it is released", func(ctx context.Context, in holdIn) (string, error) {
			out.printf("started %s", in.Key)
			// Clients see it started: a stream's first progress.
			toolset.ReportProgress(ctx, 0, 0, "holding "+in.Key)
			select {
			case <-gate(in.Key):
				return "released " + in.Key, nil
			case <-ctx.Done():
				out.printf("stopped %s: %v", in.Key, ctx.Err())
				return "", ctx.Err()
			}
		}),
		toolset.MustFunc("count", "Counts to n, reporting each step", func(ctx context.Context, in countIn) (string, error) {
			for i := 1; i <= in.N; i++ {
				toolset.ReportProgress(ctx, float64(i), float64(in.N), fmt.Sprintf("step %d", i))
			}
			return fmt.Sprintf("counted to %d", in.N), nil
		}),
	)
	desk, err := agent.New(agent.Config{Models: m.Client().Models, Model: model, Name: "Weather Desk", Tools: tools,
		NeedsApproval: func(c *genai.FunctionCall) bool { return c.Name == "send_email" }})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	type forecast struct {
		City    string `json:"city"`
		Celsius int    `json:"celsius"`
	}
	plain, _ := agent.New(agent.Config{Models: m.Client().Models, Model: model, Name: "forecaster"})
	typed, err := agent.Typed[forecast](plain)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	auth := func(r *http.Request) (string, error) {
		user, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || user == "" {
			return "", errors.New("no bearer token")
		}
		return user, nil
	}
	logger := slog.New(slog.DiscardHandler)
	deskSrv, _ := agentserver.New(agentserver.Config{Agent: desk, Authenticate: auth, Logger: logger, KeepAlive: 5 * time.Millisecond})
	typedSrv, _ := agentserver.New(agentserver.Config{Agent: typed, Authenticate: auth, Logger: logger})

	mux := http.NewServeMux()
	// The desk sends push notifications to the tests' receivers, on
	// loopback; the typed agent refuses them there, as by default.
	mux.Handle("/", a2aagent.Handler(deskSrv, &a2aagent.Options{Push: a2aagent.PushOptions{AllowPrivateNetworks: true, RetryDelay: time.Millisecond}}))
	mux.Handle("/typed/", a2aagent.Handler(typedSrv, &a2aagent.Options{URL: "/typed/a2a"}))
	mux.HandleFunc("POST /test/release", func(w http.ResponseWriter, r *http.Request) {
		close(gate(r.URL.Query().Get("key")))
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	hs := &http.Server{Handler: mux}
	go hs.Serve(ln)
	out.printf("URL http://%s", ln.Addr())
	io.Copy(io.Discard, os.Stdin)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	deskSrv.Close(ctx)
	typedSrv.Close(ctx)
	hs.Shutdown(ctx)
	return 0
}

// deskModel plays the model of both agents.
func deskModel(req *fake.Request) *fake.Reply {
	last := req.Contents[len(req.Contents)-1]
	var results []string
	for _, p := range last.Parts {
		if r := p.FunctionResponse; r != nil {
			b, _ := json.Marshal(r.Response)
			results = append(results, r.Name+" "+string(b))
		}
	}
	if len(results) > 0 {
		return fake.Text("Done: " + strings.Join(results, "; ")).WithTextChunk(8)
	}
	q := lastText(last)
	if req.GenerationConfig != nil && req.GenerationConfig.ResponseSchema != nil || req.GenerationConfig != nil && req.GenerationConfig.ResponseJsonSchema != nil {
		return fake.Text(`{"city":"` + strings.TrimPrefix(q, "forecast for ") + `","celsius":21}`)
	}
	switch {
	case strings.HasPrefix(q, "weather in "):
		return fake.Calls(fake.Call("get_weather", map[string]any{"city": strings.TrimPrefix(q, "weather in ")}))
	case q == "email two":
		return fake.Calls(fake.Call("send_email", map[string]any{"to": "ann"}), fake.Call("send_email", map[string]any{"to": "bob"}))
	case strings.HasPrefix(q, "email "):
		return fake.Calls(fake.Call("send_email", map[string]any{"to": strings.TrimPrefix(q, "email ")}))
	case strings.HasPrefix(q, "count to "):
		n, _ := strconv.Atoi(strings.TrimPrefix(q, "count to "))
		return fake.Calls(fake.Call("count", map[string]any{"n": n}))
	case strings.HasPrefix(q, "hold "):
		return fake.Calls(fake.Call("hold", map[string]any{"key": strings.TrimPrefix(q, "hold ")}))
	case q == "think":
		return fake.Parts(&genai.Part{Text: "pondering", Thought: true}, genai.NewPartFromText("thought it over"))
	case q == "fail":
		return fake.Error(400, "the model refuses")
	case strings.HasPrefix(q, "remember"):
		var said []string
		for _, c := range req.Contents {
			if t := lastText(c); c.Role == genai.RoleUser && t != "" {
				said = append(said, t)
			}
		}
		return fake.Text(fmt.Sprintf("You said %d things: %s.", len(said), strings.Join(said, " | ")))
	}
	return fake.Text("You said: " + q)
}

func lastText(c *genai.Content) string {
	var b strings.Builder
	for _, p := range c.Parts {
		if !p.Thought {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// lineWriter prints lines, one at a time.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, format+"\n", args...)
}

// server is the tests' A2A server process, seen from a test.
type server struct {
	t     *testing.T
	URL   string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
	done  chan struct{}
	ended sync.Once
}

// startServer starts the tests' A2A server in a process of its own, until
// the test ends.
func startServer(t *testing.T) *server {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serverEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, cmd: cmd, stdin: stdin, lines: make(chan string, 100), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
	}()
	t.Cleanup(s.stop)
	line := s.next("URL ")
	s.URL = strings.TrimPrefix(line, "URL ")
	return s
}

// next returns the next line the server prints that starts with prefix.
func (s *server) next(prefix string) string {
	s.t.Helper()
	timeout := time.After(time.Minute) // a hang guard only
	for {
		select {
		case line := <-s.lines:
			if strings.HasPrefix(line, prefix) {
				return line
			}
		case <-s.done:
			s.t.Fatalf("the server exited before printing %q", prefix)
		case <-timeout:
			s.t.Fatalf("the server never printed %q", prefix)
		}
	}
}

// release lets the held tool of key finish.
func (s *server) release(key string) {
	s.t.Helper()
	resp, err := http.Post(s.URL+"/test/release?key="+key, "", nil)
	if err != nil {
		s.t.Fatal(err)
	}
	resp.Body.Close()
}

// kill ends the server at once, as a crash would.
func (s *server) kill() {
	s.cmd.Process.Kill()
	s.wait()
}

// wait waits for the process to end, once.
func (s *server) wait() {
	s.ended.Do(func() {
		<-s.done
		s.cmd.Wait()
	})
}

// stop ends the server as it is meant to end: its input closes.
func (s *server) stop() {
	s.stdin.Close()
	s.wait()
	http.DefaultClient.CloseIdleConnections()
}
