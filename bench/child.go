package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The -load measurements run the fake server in a child process, this
// binary started again with serveEnv set, so that the heap they read is the
// client's alone: what a program running agents holds, without the fake's
// connections and request decoding, which with the real API are Google's.
// -apis does the same with internal/fake (apis.go), so that the CPU it
// reads is the client's alone.
//
// The child serves the scenario on loopback, prints its URL on the first
// line of its standard output, and obeys commands on its standard input,
// one a line:
//
//	hold N    hold the next N requests; print "holding" at once, and
//	          "held" once all N wait
//	release   let the held requests through
//
// At the end of its input it prints the server's verdict, "ok" or the
// first malformed request it saw, and exits.

// serveEnv names the scenario the child serves; main and TestMain act as
// the child when it is set.
const serveEnv = "BENCH_SERVE_SCENARIO"

// serveChild is the child's side.
func serveChild(name string) error {
	if name == apisChild {
		return serveAPIs()
	}
	scs, err := selectScenarios(name)
	if err != nil || len(scs) != 1 {
		return fmt.Errorf("want one scenario, not %q", name)
	}
	s := newScripted(scs[0])
	h := &holder{next: s}
	s.srv = httptest.NewServer(h)
	defer s.Close()
	out := bufio.NewWriter(os.Stdout)
	var mu sync.Mutex
	say := func(line string) {
		mu.Lock()
		defer mu.Unlock()
		out.WriteString(line + "\n")
		out.Flush()
	}
	say(s.URL())
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		cmd, arg, _ := strings.Cut(in.Text(), " ")
		switch cmd {
		case "hold":
			n, err := strconv.Atoi(arg)
			if err != nil || n < 1 {
				return fmt.Errorf("hold %q: want a positive count", arg)
			}
			held := h.arm(n)
			say("holding")
			go func() {
				<-held
				say("held")
			}()
		case "release":
			h.open()
		default:
			return fmt.Errorf("unknown command %q", in.Text())
		}
	}
	h.open()
	if err := s.Err(); err != nil {
		say("malformed request: " + err.Error())
	} else {
		say("ok")
	}
	return in.Err()
}

// A holder holds requests on their way to the server, when told to.
type holder struct {
	next http.Handler
	barrier
}

func (h *holder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.pass(r.Context())
	h.next.ServeHTTP(w, r)
}

// A barrier holds what passes it once armed: the next n passages wait
// until it is opened, and the last of them closes the channel arm
// returned. Passages beyond those n, and any once it is opened, go through.
type barrier struct {
	mu     sync.Mutex
	left   int
	all    chan struct{}
	opened chan struct{}
}

// arm makes the next n passages wait, and returns a channel closed once
// all n wait.
func (b *barrier) arm(n int) <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.left, b.all, b.opened = n, make(chan struct{}), make(chan struct{})
	return b.all
}

// open lets every passage through, from now on.
func (b *barrier) open() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.opened != nil {
		close(b.opened)
		b.opened = nil
	}
	b.left = 0
}

// pass waits, when it is one of the passages to hold, until the barrier
// opens or ctx is done.
func (b *barrier) pass(ctx context.Context) {
	b.mu.Lock()
	opened := b.opened
	if b.left > 0 {
		b.left--
		if b.left == 0 {
			close(b.all)
		}
	} else {
		opened = nil
	}
	b.mu.Unlock()
	if opened != nil {
		select {
		case <-opened:
		case <-ctx.Done():
		}
	}
}

// A child is the fake server of the -load measurements, in a child
// process.
type child struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  chan string // the child's lines after the URL
	url  string
	done chan struct{} // closed when the child's output ends
}

// startChild starts the child serving the scenario of this name (or, for
// apisChild, the fake of -apis).
func startChild(name string) (*child, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), serveEnv+"="+name)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, in: in, out: make(chan string, 4), done: make(chan struct{})}
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() {
		in.Close()
		cmd.Wait()
		return nil, errors.New("the fake server's process printed no URL")
	}
	c.url = lines.Text()
	go func() {
		defer close(c.done)
		for lines.Scan() {
			c.out <- lines.Text()
		}
	}()
	return c, nil
}

// URL is the fake's base URL.
func (c *child) URL() string { return c.url }

// hold makes the fake hold its next n requests, from the time it returns.
func (c *child) hold(n int) error {
	if _, err := fmt.Fprintf(c.in, "hold %d\n", n); err != nil {
		return err
	}
	select {
	case line := <-c.out:
		if line != "holding" {
			return fmt.Errorf("the fake server said %q, want holding", line)
		}
		return nil
	case <-c.done:
		return errors.New("the fake server's process ended")
	}
}

// waitHeld waits until the held requests have all arrived, or until gone
// is closed (the clients gave up), or for at most limit.
func (c *child) waitHeld(gone <-chan struct{}, limit time.Duration) error {
	select {
	case line := <-c.out:
		if line != "held" {
			return fmt.Errorf("the fake server said %q, want held", line)
		}
		return nil
	case <-gone:
		return errors.New("runs ended before their requests reached the fake server")
	case <-c.done:
		return errors.New("the fake server's process ended")
	case <-time.After(limit):
		return fmt.Errorf("the held requests did not all arrive within %v", limit)
	}
}

// release lets the held requests through.
func (c *child) release() error {
	_, err := io.WriteString(c.in, "release\n")
	return err
}

// Close stops the child and returns its verdict: nil, or the first
// malformed request it saw.
func (c *child) Close() error {
	c.in.Close()
	var verdict string
	select {
	case verdict = <-c.out:
	case <-c.done:
	}
	werr := c.cmd.Wait()
	switch {
	case verdict == "ok":
		return nil
	case verdict != "":
		return errors.New("fake server: " + verdict)
	case werr != nil:
		return fmt.Errorf("fake server: %w", werr)
	}
	return errors.New("fake server: ended without a verdict")
}
