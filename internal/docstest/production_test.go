package docstest

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestProductionProgram builds docs/production.md's program as it is, in
// a module of its own that requires this module and temporalagent
// through replace directives, and runs it offline on a SQLite file, as
// the guide says: no token, 401; Alice's question answered through the
// tool; Alice's thread, to Bob, what a thread that exists nowhere is; a preflight of
// the allowed origin answered, another's not; SIGTERM, a clean exit; and,
// started again on the same file, Alice's conversation still there.
func TestProductionProgram(t *testing.T) {
	goBin := goCommand(t)
	root := repoRoot(t)
	var program string
	for _, b := range blocks(t, root, filepath.Join("docs", "production.md")) {
		if b.lang == "go" && strings.Contains(b.text, "\npackage main\n") {
			program = b.text
			break
		}
	}
	if program == "" {
		t.Fatal("docs/production.md has no program (a ```go block of package main)")
	}
	var sums []string
	for _, f := range []string{"go.sum", filepath.Join("temporalagent", "go.sum")} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		sums = append(sums, string(b))
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/production\n\ngo 1.26.0\n\n" +
			"require (\n\tgithub.com/toolnexus/toolnexus-go v0.0.0\n\tgithub.com/toolnexus/toolnexus-go/temporalagent v0.0.0\n)\n\n" +
			"replace github.com/toolnexus/toolnexus-go => " + filepath.ToSlash(root) + "\n\n" +
			"replace github.com/toolnexus/toolnexus-go/temporalagent => " + filepath.ToSlash(filepath.Join(root, "temporalagent")) + "\n",
		// The dependencies are this module's and temporalagent's.
		"go.sum":  strings.Join(sums, ""),
		"main.go": program + "\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := append(offlineEnv(t, goBin), "GOFLAGS=-mod=mod") // -mod=mod completes the go.mod from the graph
	exe := filepath.Join(dir, "server")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute) // a hang guard: the first build compiles Temporal's SDK
	defer cancel()
	build := exec.CommandContext(ctx, goBin, "build", "-o", exe, ".")
	build.Dir, build.Env = dir, env
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building docs/production.md's program: %v\n%s", err, out)
	}

	const alice, bob, app = "s3cret-alice", "s3cret-bob", "http://app.example"
	env = append(env, "API_TOKENS=alice="+alice+",bob="+bob)
	db := filepath.Join(dir, "threads.db")
	p, base := startProduction(t, exe, env, db, app)
	post := func(token string) (int, string) {
		t.Helper()
		body := `{"id":"chat-1","messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"What is the weather in Paris?"}]}]}`
		return request(t, "POST", base+"/api/chat", body, map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json"})
	}
	if status, body := post("wrong-token"); status != http.StatusUnauthorized || !strings.Contains(body, `"unauthenticated"`) {
		t.Errorf("a wrong token: %d %s, want 401", status, body)
	}
	if status, body := request(t, "POST", base+"/api/chat", "{}", map[string]string{"Content-Type": "application/json"}); status != http.StatusUnauthorized {
		t.Errorf("no token: %d %s, want 401", status, body)
	}
	if status, body := post(alice); status != http.StatusOK || !strings.Contains(body, `"output":"sunny in Paris"`) {
		t.Errorf("Alice's question: %d %s", status, body)
	}
	messages := func(base, token, thread string) (int, string) {
		return request(t, "GET", base+"/api/chat/"+thread+"/messages", "", map[string]string{"Authorization": "Bearer " + token})
	}
	status, body := messages(base, bob, "chat-1")
	if nsStatus, nsBody := messages(base, bob, "chat-nowhere"); status != nsStatus || body != nsBody || strings.Contains(body, "Paris") {
		t.Errorf("Alice's thread, read by Bob: %d %s; want what a thread that exists nowhere answers: %d %s", status, body, nsStatus, nsBody)
	}
	preflight := func(origin string) string {
		req, _ := http.NewRequest("OPTIONS", base+"/api/chat", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization,content-type")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.Header.Get("Access-Control-Allow-Origin")
	}
	if got := preflight(app); got != app {
		t.Errorf("the app's preflight: Access-Control-Allow-Origin %q, want %q", got, app)
	}
	if got := preflight("http://evil.example"); got != "" {
		t.Errorf("another site's preflight: Access-Control-Allow-Origin %q, want none", got)
	}
	p.stop(t)

	p, base = startProduction(t, exe, env, db, app)
	if status, body := messages(base, alice, "chat-1"); status != http.StatusOK || !strings.Contains(body, "sunny in Paris") {
		t.Errorf("Alice's thread after a restart: %d %s", status, body)
	}
	p.stop(t)
}

// production is the program TestProductionProgram runs, running.
type production struct {
	cmd    *exec.Cmd
	exited chan error
	output *lockedBuffer
}

// lockedBuffer is a program's output, read while it is written.
type lockedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startProduction starts the program on a free port and returns it and
// its URL, read from its "serving" log line.
func startProduction(t *testing.T, exe string, env []string, db, origin string) (*production, string) {
	t.Helper()
	cmd := exec.Command(exe, "-addr", "127.0.0.1:0", "-db", db, "-cors", origin)
	cmd.Env = env
	out := &lockedBuffer{}
	cmd.Stdout = out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &production{cmd: cmd, exited: make(chan error, 1), output: out}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			out.Write(append(sc.Bytes(), '\n'))
			var line struct{ Msg, URL string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "serving" {
				urls <- line.URL
			}
		}
		p.exited <- cmd.Wait()
	}()
	t.Cleanup(func() { p.cmd.Process.Kill() }) // a no-op once it has exited
	select {
	case u := <-urls:
		return p, u
	case err := <-p.exited:
		p.exited <- err
		t.Fatalf("the program exited instead of serving: %v\n%s", err, out.String())
	case <-time.After(time.Minute): // a hang guard
		t.Fatalf("the program does not serve after a minute:\n%s", out.String())
	}
	return nil, ""
}

// stop sends SIGTERM to the program, which must end by itself, cleanly.
func (p *production) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.exited:
		if err != nil {
			t.Errorf("the program after SIGTERM: %v, want a clean exit\n%s", err, p.output.String())
		}
	case <-time.After(time.Minute): // a hang guard
		t.Fatalf("the program still runs a minute after SIGTERM:\n%s", p.output.String())
	}
}

// request sends a request with headers and returns the status and body.
func request(t *testing.T, method, url, body string, headers map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	defer http.DefaultClient.CloseIdleConnections()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
