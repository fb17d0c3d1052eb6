//go:build unix

package mcptools_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolnexus/toolnexus-go/internal/citest"
	"github.com/toolnexus/toolnexus-go/mcptools"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// hangGuard bounds every wait of these tests: it only turns a hang into a
// failure, and nothing passes because it is short. Ending a wedged server
// takes the 5 seconds Command waits before SIGTERM.
const hangGuard = 2 * time.Minute

// async runs f on its own goroutine; the channel receives its result.
func async[T any](f func() T) <-chan T {
	ch := make(chan T, 1)
	go func() { ch <- f() }()
	return ch
}

// await returns what ch receives. If nothing comes before the hang guard,
// it fails the test and returns the zero value.
func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(hangGuard):
		t.Errorf("%s: still blocked after %v", what, hangGuard)
		var zero T
		return zero
	}
}

// started returns the pids of the slowstart servers started in dir so far.
func started(t *testing.T, dir string) []int {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.pid"))
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, n := range names {
		pid, err := strconv.Atoi(strings.TrimSuffix(filepath.Base(n), ".pid"))
		if err != nil {
			t.Fatalf("pid file %s: %v", n, err)
		}
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	return pids
}

// waitStarted waits until n slowstart servers have started in dir, and
// returns their pids.
func waitStarted(t *testing.T, dir string, n int) []int {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for {
		if pids := started(t, dir); len(pids) >= n {
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d slowstart servers started in %v; want %d", len(started(t, dir)), hangGuard, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// release lets every slowstart server of dir, started or to come, serve.
func release(t *testing.T, dir string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "release"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

// reconnectingToSlowStart connects to the flaky server, then kills it, so
// that the next call reconnects through the same Dial, which now starts
// slowstart servers in the directory it returns. It returns the client,
// its pid tool, and that directory. When the test ends, every slowstart
// server still there is killed before the client is closed, so that a
// failing test (a client stuck in a reconnection) ends too.
func reconnectingToSlowStart(t *testing.T) (*mcptools.Client, *toolset.Tool, string) {
	t.Helper()
	dir := t.TempDir()
	first, slow := serverCommand(t, "flaky", t.TempDir()), serverCommand(t, "slowstart", dir)
	var dials atomic.Int32
	c := connect(t, func() mcp.Transport {
		if dials.Add(1) == 1 {
			return first()
		}
		return slow()
	}, nil)
	t.Cleanup(func() {
		for _, pid := range started(t, dir) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	pid := pidOf(t, c)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	return c, lookup(t, c.Tools(), "pid"), dir
}

// cancellable starts a call of tool (its Run: Execute returns when the
// context ends even if Run is stuck); the channel receives its error once
// it returns, and cancel ends its context.
func cancellable(t *testing.T, tool *toolset.Tool) (<-chan error, context.CancelFunc) {
	ctx, cancel := context.WithCancel(t.Context())
	return async(func() error { _, err := tool.Run(ctx, nil); return err }), cancel
}

// A reconnection to a server that hangs at start-up, made by a call
// without a deadline, holds up nothing else: another call leaves when its
// context ends, Tools and Skipped answer, and Close ends the connection in
// progress (the call fails with ErrClosed) and the hanging process.
func TestReconnectionHangs(t *testing.T) {
	citest.Heavy(t, "waits out Tools' 30-second refresh timeout")
	c, tool, dir := reconnectingToSlowStart(t)
	hung := async(func() toolset.Result { return tool.Execute(context.Background(), nil) })
	pid := waitStarted(t, dir, 1)[0]

	other, cancel := cancellable(t, tool)
	cancel()
	if err := await(t, other, "a call whose context ended"); !errors.Is(err, context.Canceled) {
		t.Errorf("a call whose context ended = %v; want context.Canceled", err)
	}
	if n := len(await(t, async(c.Tools), "Tools")); n != 3 {
		t.Errorf("Tools() = %d tools; want the 3 listed", n)
	}
	await(t, async(c.Skipped), "Skipped")

	if err := await(t, async(c.Close), "Close"); err != nil {
		t.Errorf("Close() = %v", err)
	}
	if r := await(t, hung, "the call without a deadline"); !r.IsError || !errors.Is(r.Err, mcptools.ErrClosed) {
		t.Errorf("the call waiting for the connection = %+v; want an error wrapping ErrClosed", r)
	}
	assertGone(t, pid)
	if pids := started(t, dir); len(pids) != 1 {
		t.Errorf("slowstart servers started: %v; want only %d", pids, pid)
	}
}

// The connection does not belong to the caller that started it: when its
// context ends, it leaves, and the connection goes on for the callers still
// waiting, who get the session once the server is up.
func TestReconnectionOutlivesFirstCaller(t *testing.T) {
	c, tool, dir := reconnectingToSlowStart(t)
	first, cancel := cancellable(t, tool)
	pid := waitStarted(t, dir, 1)[0]
	second := async(func() toolset.Result { return tool.Execute(context.Background(), nil) })
	waitFor(t, "two callers waiting for the connection", func() bool { return mcptools.Waiting(c) == 2 })

	cancel()
	if err := await(t, first, "the first caller"); !errors.Is(err, context.Canceled) {
		t.Errorf("the first caller, whose context ended = %v; want context.Canceled", err)
	}
	release(t, dir)
	r := await(t, second, "the second caller")
	if r.IsError || r.Output != strconv.Itoa(pid) {
		t.Errorf("the second caller = %+v; want the pid %d of the server started for the first", r, pid)
	}
	if pids := started(t, dir); len(pids) != 1 {
		t.Errorf("slowstart servers started: %v; want one", pids)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close() = %v", err)
	}
	assertGone(t, pid)
}

// When every caller waiting for a connection has left, the connection is
// abandoned and its process ended; the next call starts a new one.
func TestReconnectionAbandoned(t *testing.T) {
	c, tool, dir := reconnectingToSlowStart(t)
	first, cancel := cancellable(t, tool)
	abandoned := waitStarted(t, dir, 1)[0]
	cancel()
	if err := await(t, first, "the only caller"); !errors.Is(err, context.Canceled) {
		t.Errorf("the only caller, whose context ended = %v; want context.Canceled", err)
	}
	release(t, dir)
	r := await(t, async(func() toolset.Result { return tool.Execute(context.Background(), nil) }), "the next call")
	if r.IsError || r.Output == strconv.Itoa(abandoned) {
		t.Fatalf("the next call = %+v; want the pid of a new server (the abandoned one was %d)", r, abandoned)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close() = %v", err)
	}
	for _, pid := range started(t, dir) {
		assertGone(t, pid)
	}
}

// Connect to a server that hangs at start-up returns when its context
// ends, and leaves no process behind.
func TestConnectHangsCancelled(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	done := async(func() error {
		c, err := mcptools.Connect(ctx, serverCommand(t, "slowstart", dir), nil)
		if err == nil {
			c.Close()
		}
		return err
	})
	pid := waitStarted(t, dir, 1)[0]
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	cancel()
	if err := await(t, done, "Connect"); !errors.Is(err, context.Canceled) {
		t.Errorf("Connect() = %v; want context.Canceled", err)
	}
	assertGone(t, pid)
}

// waitFor waits until cond holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %v", what, hangGuard)
		}
		time.Sleep(time.Millisecond)
	}
}
