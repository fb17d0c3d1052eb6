package docstest

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadmePrograms builds every program of README.md (a ```go block
// that starts with "package main") in a module of its own that requires
// this one through a replace directive, as a newcomer's own module does,
// and runs it with no API key: on the offline model, a program must print
// an answer that get_weather's result is in and exit cleanly, and a
// program that serves must listen and answer a useChat request through
// the tool.
func TestReadmePrograms(t *testing.T) {
	goBin := goCommand(t)
	root := repoRoot(t)
	var programs []block
	for _, b := range blocks(t, root, "README.md") {
		if b.lang == "go" && strings.HasPrefix(b.text, "package main\n") {
			programs = append(programs, b)
		}
	}
	if len(programs) < 3 {
		t.Fatalf("README.md has %d programs, want the first program, streaming and serving", len(programs))
	}

	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	gosum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	genai := regexp.MustCompile(`(?m)^\s*google\.golang\.org/genai (v\S+)`).FindSubmatch(gomod)
	if genai == nil {
		t.Fatal("go.mod does not require google.golang.org/genai")
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/hello\n\ngo 1.25.0\n\nrequire (\n" +
			"\tgithub.com/toolnexus/toolnexus-go v0.0.0\n" +
			"\tgoogle.golang.org/genai " + string(genai[1]) + "\n)\n\n" +
			"replace github.com/toolnexus/toolnexus-go => " + filepath.ToSlash(root) + "\n",
		// The module's dependencies are this module's: its checksums cover them.
		"go.sum": string(gosum),
	}
	// A program that serves does on a free port, not the README's.
	port := freePort(t)
	var pkgs []string
	for i, p := range programs {
		pkg := fmt.Sprintf("prog%d", i+1)
		files[filepath.Join(pkg, "main.go")] = strings.ReplaceAll(p.text, "localhost:8080", "localhost:"+port) + "\n"
		pkgs = append(pkgs, "./"+pkg)
	}
	for name, content := range files {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := offlineEnv(t, goBin)
	// -mod=mod completes the throwaway go.mod from the module graph.
	env = append(env, "GOFLAGS=-mod=mod")
	bin := filepath.Join(dir, "bin")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, goBin, append([]string{"build", "-o", bin + string(os.PathSeparator)}, pkgs...)...)
	build.Dir, build.Env = dir, env
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building README.md's programs in a module of their own: %v\n%s", err, out)
	}

	for i, p := range programs {
		t.Run(fmt.Sprintf("README.md:%d", p.line), func(t *testing.T) {
			exe := filepath.Join(bin, fmt.Sprintf("prog%d", i+1))
			if strings.Contains(p.text, "ListenAndServe(") {
				serveProgram(t, exe, env, port)
				return
			}
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a hang guard
			defer cancel()
			cmd := exec.CommandContext(ctx, exe)
			cmd.Env = env
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", exe, err, out, stderr.String())
			}
			if !strings.Contains(string(out), "sunny in") {
				t.Errorf("stdout = %q, want the offline model's answer from get_weather", out)
			}
			t.Logf("stdout:\n%s", out)
		})
	}
}

// serveProgram starts a program that serves the agent on port, checks
// that it listens and that a useChat request is answered through the
// tool, and stops it with SIGTERM, as a deployment does: it must end by
// itself, cleanly (exit status 0).
func serveProgram(t *testing.T, exe string, env []string, port string) {
	t.Helper()
	cmd := exec.Command(exe)
	cmd.Env = env
	var output strings.Builder
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Kill()
		<-exited
	}()
	addr := net.JoinHostPort("localhost", port)
	deadline := time.Now().Add(time.Minute) // a hang guard
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			break
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("%s exited instead of serving: %v\n%s", exe, err, output.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not listen on %s after a minute:\n%s", exe, addr, output.String())
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	body := `{"id":"chat-1","messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"What is the weather in Paris?"}]}]}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/api/chat", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	defer http.DefaultClient.CloseIdleConnections()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(got), `"output":"sunny in Paris"`) {
		t.Errorf("POST /api/chat = %s\n%s\nwant get_weather's output in the stream", resp.Status, got)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err // for the deferred kill
		if err != nil {
			t.Errorf("%s after SIGTERM: %v, want a clean exit (SIGTERM wired to Close)\n%s", exe, err, output.String())
		}
	case <-time.After(time.Minute): // a hang guard
		t.Errorf("%s still runs a minute after SIGTERM:\n%s", exe, output.String())
	}
}
