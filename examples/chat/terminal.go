package main

// How the chat reads its input and fits its output to the terminal: on a
// terminal, a line editor (golang.org/x/term's Terminal: the arrow keys
// move in the line, Home and End go to its ends, up and down recall
// earlier lines; a line being typed is redrawn when the terminal is
// resized) with the terminal in raw mode only while a line is read;
// otherwise plain lines. And the spinner shown while the model thinks.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
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
// a line is read, width (when set) its width, and resizes (when set)
// saying the terminal was resized: the line being read is then redrawn
// at the new width.
type editor struct {
	rw      io.ReadWriter
	keys    *keyReader // rw's input, Home and End as term.Terminal knows them
	raw     func() (restore func(), err error)
	width   func() int
	resizes <-chan os.Signal

	t       *term.Terminal
	history *lineHistory

	mu      sync.Mutex
	restore func() // set while the terminal is in raw mode
	closed  bool   // the chat has ended: no line is read any more
}

func newEditor(rw io.ReadWriter, raw func() (func(), error), width func() int, resizes <-chan os.Signal) *editor {
	return &editor{rw: rw, keys: &keyReader{r: rw}, raw: raw, width: width, resizes: resizes, history: &lineHistory{}}
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
		e.t = term.NewTerminal(struct {
			io.Reader
			io.Writer
		}{e.keys, e.rw}, "")
		e.t.History = e.history
	}
	if e.width != nil {
		_ = e.t.SetSize(e.width(), 24) // the height is not used by ReadLine
		if e.resizes != nil {
			// A resize while the line is typed: term.Terminal redraws it
			// at the new width (SetSize may be called during ReadLine).
			t, done := e.t, make(chan struct{})
			defer close(done)
			go func() {
				for {
					select {
					case <-e.resizes:
						_ = t.SetSize(e.width(), 24)
					case <-done:
						return
					}
				}
			}()
		}
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

// keyAliases are the Home and End keys' sequences that term.Terminal does
// not know (it knows ESC [ H and ESC [ F), each with the one it knows:
// tmux and screen send ESC [ 1 ~ and ESC [ 4 ~, rxvt ESC [ 7 ~ and
// ESC [ 8 ~, a terminal in application cursor mode ESC O H and ESC O F.
var keyAliases = [...]struct{ from, to string }{
	{"\x1b[1~", "\x1b[H"}, {"\x1b[7~", "\x1b[H"}, {"\x1bOH", "\x1b[H"},
	{"\x1b[4~", "\x1b[F"}, {"\x1b[8~", "\x1b[F"}, {"\x1bOF", "\x1b[F"},
}

// keyReader reads r, the terminal's keys, with the sequences of
// keyAliases replaced; a sequence split across reads is replaced whole
// (the start of one is held until the rest comes, as term.Terminal holds
// the start of any escape sequence).
type keyReader struct {
	r       io.Reader
	in, out []byte // read and not yet looked at (the start of a sequence); ready
	err     error  // r's, returned once out is empty
	buf     [256]byte
}

func (k *keyReader) Read(p []byte) (int, error) {
	for len(k.out) == 0 {
		if k.err != nil {
			if len(k.in) > 0 { // the start of a sequence that never ended
				k.out, k.in = k.in, nil
				break
			}
			return 0, k.err
		}
		n, err := k.r.Read(k.buf[:])
		k.in = append(k.in, k.buf[:n]...)
		k.err = err
		k.translate()
	}
	n := copy(p, k.out)
	k.out = k.out[n:]
	return n, nil
}

// translate moves what k.in holds to k.out, with each alias replaced,
// but for the start of a sequence at its end, which it leaves in k.in.
func (k *keyReader) translate() {
	b := k.in
	for len(b) > 0 {
		if b[0] != 0x1b {
			i := bytes.IndexByte(b, 0x1b)
			if i < 0 {
				i = len(b)
			}
			k.out = append(k.out, b[:i]...)
			b = b[i:]
			continue
		}
		matched, partial := false, false
		for _, a := range keyAliases {
			switch {
			case bytes.HasPrefix(b, []byte(a.from)):
				k.out = append(k.out, a.to...)
				b = b[len(a.from):]
				matched = true
			case len(b) < len(a.from) && strings.HasPrefix(a.from, string(b)):
				partial = true
			}
			if matched {
				break
			}
		}
		switch {
		case matched:
		case partial && k.err == nil:
			k.in = append(k.in[:0:0], b...) // held until the next read
			return
		default:
			k.out = append(k.out, b[0])
			b = b[1:]
		}
	}
	k.in = k.in[:0]
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
