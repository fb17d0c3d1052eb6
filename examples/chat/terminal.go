package main

// How the chat reads its input and fits its output to the terminal: on a
// terminal, a line editor (golang.org/x/term's Terminal: the arrow keys
// move in the line, up and down recall earlier lines) with the terminal in
// raw mode only while a line is read; otherwise plain lines. And the
// spinner shown while the model thinks.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"
)

// defaultWidth is the width of output whose terminal width is unknown
// (piped output included).
const defaultWidth = 80

// lineReader reads the user's input a line at a time.
type lineReader interface {
	// readLine shows prompt and returns the next line, without its line
	// ending; io.EOF when the input ended (on a terminal: Ctrl-D on an
	// empty line, or Ctrl-C).
	readLine(prompt string) (string, error)
}

// plainReader reads lines from a pipe or a file (or a terminal left in its
// own line mode), writing the prompt to out when it is set.
type plainReader struct {
	sc  *bufio.Scanner
	out io.Writer // nil: no prompt
}

func newPlainReader(in io.Reader, out io.Writer) *plainReader {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	return &plainReader{sc: sc, out: out}
}

func (r *plainReader) readLine(prompt string) (string, error) {
	if r.out != nil {
		fmt.Fprint(r.out, prompt)
	}
	if r.sc.Scan() {
		return r.sc.Text(), nil
	}
	if r.out != nil {
		fmt.Fprintln(r.out) // end the prompt's line
	}
	if err := r.sc.Err(); err != nil {
		return "", err
	}
	return "", io.EOF
}

// maxHistory is how many earlier lines the line editor recalls.
const maxHistory = 500

// editor reads lines through a line editor on a terminal: term.Terminal
// on rw, with raw (when set) putting the terminal in raw mode for the time
// a line is read, and width (when set) its width.
type editor struct {
	rw    io.ReadWriter
	raw   func() (restore func(), err error)
	width func() int

	t       *term.Terminal
	history *lineHistory

	mu      sync.Mutex
	restore func() // set while the terminal is in raw mode
	closed  bool   // the chat has ended: no line is read any more
}

func newEditor(rw io.ReadWriter, raw func() (func(), error), width func() int) *editor {
	return &editor{rw: rw, raw: raw, width: width, history: &lineHistory{}}
}

func (e *editor) readLine(prompt string) (string, error) {
	if e.raw != nil {
		// Raw mode is entered and recorded under the lock that close
		// takes, so that a chat ending at any moment restores it; once
		// the chat has ended, no line is read.
		e.mu.Lock()
		if e.closed {
			e.mu.Unlock()
			return "", io.EOF
		}
		restore, err := e.raw()
		if err != nil {
			e.mu.Unlock()
			return "", fmt.Errorf("putting the terminal in raw mode: %w", err)
		}
		e.restore = restore
		e.mu.Unlock()
		defer e.restoreRaw()
	}
	if e.t == nil {
		e.t = term.NewTerminal(e.rw, "")
		e.t.History = e.history
	}
	if e.width != nil {
		_ = e.t.SetSize(e.width(), 24) // the height is not used by ReadLine
	}
	e.t.SetPrompt(prompt)
	line, err := e.t.ReadLine()
	if errors.Is(err, term.ErrPasteIndicator) {
		err = nil // a pasted line is a line
	}
	if err != nil {
		// After Ctrl-C or Ctrl-D the terminal keeps the cursor after the
		// prompt and skips the next prompt: the next line gets a fresh
		// one (with the same history).
		e.t = nil
		if errors.Is(err, io.EOF) {
			fmt.Fprint(e.rw, "\r\n")
		}
	}
	return line, err
}

// close restores the terminal if a line is being read: the chat calls it
// when it ends, so that no exit path leaves the terminal raw.
func (e *editor) close() {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	e.restoreRaw()
}

// restoreRaw restores the terminal if it is in raw mode.
func (e *editor) restoreRaw() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.restore != nil {
		e.restore()
		e.restore = nil
	}
}

// lineHistory is the line editor's history: the last maxHistory lines, empty
// ones left out, a line equal to the one before it kept once.
type lineHistory struct{ lines []string }

// Add adds a line read.
func (h *lineHistory) Add(line string) {
	if line == "" || (len(h.lines) > 0 && h.lines[len(h.lines)-1] == line) {
		return
	}
	if len(h.lines) == maxHistory {
		h.lines = h.lines[1:]
	}
	h.lines = append(h.lines, line)
}

// Len returns the number of lines kept.
func (h *lineHistory) Len() int { return len(h.lines) }

// At returns the line idx lines back: 0 is the last one.
func (h *lineHistory) At(idx int) string { return h.lines[len(h.lines)-1-idx] }

// stdTerminal is standard input and output as one terminal.
type stdTerminal struct{}

func (stdTerminal) Read(p []byte) (int, error)  { return os.Stdin.Read(p) }
func (stdTerminal) Write(p []byte) (int, error) { return os.Stdout.Write(p) }

// rawMode returns what puts the terminal f in raw mode and returns what
// restores it.
func rawMode(f *os.File) func() (func(), error) {
	return func() (func(), error) {
		fd := int(f.Fd())
		state, err := term.MakeRaw(fd)
		if err != nil {
			return nil, err
		}
		return func() { _ = term.Restore(fd, state) }, nil
	}
}

// stdoutWidth is the width of the terminal standard output is, or
// defaultWidth.
func stdoutWidth() int {
	if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil && w > 0 {
		return w
	}
	return defaultWidth
}

// spinnerFrames are the spinner's frames, one per spinnerInterval.
var spinnerFrames = []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")

const spinnerInterval = 100 * time.Millisecond

// spinner shows that the model is thinking, on the line the cursor is at
// the start of, until stop erases it.
type spinner struct {
	stopc chan struct{}
	done  chan struct{}
}

// startSpinner draws the first frame at once, then the next ones from a
// goroutine of its own; each frame is draw(frame) written to out.
func startSpinner(out io.Writer, draw func(frame string) string) *spinner {
	s := &spinner{stopc: make(chan struct{}), done: make(chan struct{})}
	fmt.Fprint(out, "\r"+draw(string(spinnerFrames[0])))
	go func() {
		defer close(s.done)
		tick := time.NewTicker(spinnerInterval)
		defer tick.Stop()
		for i := 1; ; i++ {
			select {
			case <-s.stopc:
				fmt.Fprint(out, "\r\x1b[K") // erase the spinner's line
				return
			case <-tick.C:
				fmt.Fprint(out, "\r"+draw(string(spinnerFrames[i%len(spinnerFrames)])))
			}
		}
	}()
	return s
}

// stop erases the spinner and returns once it is gone. A nil spinner is
// stopped.
func (s *spinner) stop() {
	if s == nil {
		return
	}
	close(s.stopc)
	<-s.done
}
