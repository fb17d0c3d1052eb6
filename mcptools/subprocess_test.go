//go:build unix

package mcptools_test

import (
	"errors"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/mcptools"
)

// processGone reports whether the process pid has exited and been reaped:
// a zombie counts as left behind.
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// pidOf calls the flaky server's pid tool.
func pidOf(t *testing.T, c *mcptools.Client) int {
	t.Helper()
	r := call(t, c, "pid", nil)
	if r.IsError {
		t.Fatalf("pid: %v", r.Output)
	}
	pid, err := strconv.Atoi(r.Output.(string))
	if err != nil {
		t.Fatalf("pid answered %q", r.Output)
	}
	return pid
}

// A real subprocess server, serving a toolset with NewServer, answers
// through the client like the tools themselves, and is gone after Close.
func TestSubprocessToolset(t *testing.T) {
	c := connect(t, serverCommand(t, "toolset"), &mcptools.Options{Prefix: "demo_"})
	r := call(t, c, "demo_get_weather", map[string]any{"city": "Paris"})
	if r.IsError {
		t.Fatalf("get_weather: %v", r.Output)
	}
	if diff := cmp.Diff(map[string]any{"city": "Paris", "temp_c": 15.0}, r.Output); diff != "" {
		t.Errorf("get_weather mismatch (-want +got):\n%s", diff)
	}
	r = call(t, c, "demo_get_weather", map[string]any{"city": "Atlantis"})
	if !r.IsError || r.Output != "no weather for Atlantis: it is under water" {
		t.Errorf("get_weather(Atlantis) = %+v; want the tool's error", r)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close() = %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close() = %v", err)
	}
	r = lookup(t, c.Tools(), "demo_echo").Execute(t.Context(), map[string]any{"text": "hi"})
	if !r.IsError || !errors.Is(r.Err, mcptools.ErrClosed) {
		t.Errorf("a call after Close = %+v; want an error wrapping ErrClosed", r)
	}
}

// The server process killed between calls: the next call reconnects with a
// new process, the dead one is reaped, and Close leaves nothing running.
func TestSubprocessKilledThenReconnect(t *testing.T) {
	c := connect(t, serverCommand(t, "flaky", t.TempDir()), nil)
	first := pidOf(t, c)
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	second := pidOf(t, c) // read-only: retried after reconnecting if the kill is noticed mid-call
	if second == first {
		t.Fatalf("pid after the kill = %d, the killed process's", second)
	}
	assertGone(t, first)
	if third := pidOf(t, c); third != second {
		t.Errorf("pid = %d, then %d: the client reconnected without need", second, third)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close() = %v", err)
	}
	assertGone(t, second)
}

// The server process dies in the middle of a call: an idempotent tool is
// called again on a new process; any other call is answered with an error
// saying it may not have run, and the next call reconnects.
func TestSubprocessCrashDuringCall(t *testing.T) {
	c := connect(t, serverCommand(t, "flaky", t.TempDir()), nil)
	var pids []int
	pids = append(pids, pidOf(t, c))

	r := call(t, c, "crash_idempotent", nil)
	if r.IsError {
		t.Fatalf("crash_idempotent = %v; want it retried on a new process", r.Output)
	}
	pids = append(pids, pidOf(t, c))
	if r.Output != strconv.Itoa(pids[1]) || pids[1] == pids[0] {
		t.Errorf("crash_idempotent answered from pid %v; processes were %v", r.Output, pids)
	}

	r = call(t, c, "crash_write", nil)
	if !r.IsError || !strings.Contains(r.Output.(string), "the connection to the MCP server was lost during the call, so crash_write may or may not have run") {
		t.Fatalf("crash_write = %+v; want an error saying it may not have run", r)
	}
	r = call(t, c, "crash_write", nil) // reconnects; the marker says it crashed already
	if r.IsError {
		t.Fatalf("crash_write after the crash = %v; want a reconnection", r.Output)
	}
	pids = append(pids, pidOf(t, c))
	if err := c.Close(); err != nil {
		t.Errorf("Close() = %v", err)
	}
	for _, pid := range pids {
		assertGone(t, pid)
	}
}

// A command that cannot start fails Connect with the reason, and leaves
// nothing behind.
func TestCommandNotFound(t *testing.T) {
	_, err := mcptools.Connect(t.Context(), mcptools.Command("/nonexistent/mcp-server"), nil)
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/mcp-server") {
		t.Fatalf("Connect() = %v; want an error naming the command", err)
	}
}

// assertGone fails the test if the process pid is still there, zombie
// included: the client reaps a process when it drops its session, and
// Close returns after the process has exited.
func assertGone(t *testing.T, pid int) {
	t.Helper()
	if !processGone(pid) {
		t.Errorf("process %d is still there", pid)
	}
}
