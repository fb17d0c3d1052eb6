package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// fakeTerminal is a terminal for the line editor: each Read returns the
// next of keys (what the user types at once), then err (io.EOF when nil);
// the editor draws on screen; raw records the raw mode entered and
// restored.
type fakeTerminal struct {
	keys   []string
	err    error
	block  io.Reader // when set, read after keys: a terminal the user does not type in
	screen bytes.Buffer

	mu             sync.Mutex
	raws, restores int
	entered        chan struct{} // closed when raw mode is first entered
	enteredOnce    sync.Once
}

func newFakeTerminal(keys ...string) *fakeTerminal {
	return &fakeTerminal{keys: keys, entered: make(chan struct{})}
}

func (f *fakeTerminal) Read(p []byte) (int, error) {
	if len(f.keys) > 0 {
		n := copy(p, f.keys[0])
		f.keys = f.keys[1:]
		return n, nil
	}
	if f.block != nil {
		return f.block.Read(p)
	}
	if f.err != nil {
		return 0, f.err
	}
	return 0, io.EOF
}

func (f *fakeTerminal) Write(p []byte) (int, error) { return f.screen.Write(p) }

func (f *fakeTerminal) raw() (func(), error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.raws != f.restores {
		panic("raw mode entered twice")
	}
	f.raws++
	f.enteredOnce.Do(func() { close(f.entered) })
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.restores++
	}, nil
}

// checkRestored fails t unless raw mode was entered n times and restored
// each time.
func (f *fakeTerminal) checkRestored(t *testing.T, n int) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.raws != n || f.restores != n {
		t.Errorf("raw mode entered %d times and restored %d times, want %d and %d", f.raws, f.restores, n, n)
	}
}

// onTerminal runs the chat on the offline model with its input from term,
// and returns what it printed and run's error.
func onTerminal(t *testing.T, opts options, term *fakeTerminal) (string, error) {
	t.Helper()
	var out bytes.Buffer
	opts.clock, opts.term, opts.raw = fixedClock, term, term.raw
	err := run(t.Context(), opts, strings.NewReader("never read"), &out)
	return out.String(), err
}

// On a terminal, the arrow keys edit the line (no escape code reaches the
// message), up recalls the line before, and Ctrl-D leaves; the terminal
// is raw only while a line is read.
func TestLineEditor(t *testing.T) {
	const left, up = "\x1b[D", "\x1b[A"
	term := newFakeTerminal("what time is it in TC", left+left, "U", "\r", up, "\r", "/history\r", "\x04")
	out, err := onTerminal(t, options{}, term)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(out, "user:  what time is it in UTC\n"); got != 2 {
		t.Errorf("/history shows the edited and the recalled message %d times, want 2:\n%s", got, out)
	}
	if got := strings.Count(out, "→ current_time {\"timezone\":\"UTC\"}"); got != 2 {
		t.Errorf("%d current_time calls, want 2:\n%s", got, out)
	}
	if strings.Contains(out, "[D") || strings.Contains(out, "[A") {
		t.Errorf("an escape code in the conversation:\n%q", out)
	}
	if !strings.Contains(term.screen.String(), "you> ") {
		t.Errorf("no prompt on the terminal: %q", term.screen.String())
	}
	term.checkRestored(t, 4)
}

// The banner is one short line on a terminal, and piped output has none.
func TestBanner(t *testing.T) {
	out, err := onTerminal(t, options{}, newFakeTerminal())
	if err != nil {
		t.Fatal(err)
	}
	banner, rest, _ := strings.Cut(out, "\n")
	if banner != "Chatting with the offline demo model (no GEMINI_API_KEY); /help for commands." || rest != "" {
		t.Errorf("output on a terminal: %q", out)
	}
	if n := utf8.RuneCountInString(banner); n >= defaultWidth {
		t.Errorf("the banner is %d columns wide", n)
	}
	if out := chatOutput(t, options{}, "/tools\n"); !strings.HasPrefix(out, "  get_weather") {
		t.Errorf("piped output does not start with the answer to the first line:\n%s", out)
	}
}

// Ctrl-C at a question refuses the call, and the chat goes on; Ctrl-C at
// the prompt leaves. Raw mode is restored each time.
func TestLineEditorCtrlC(t *testing.T) {
	term := newFakeTerminal("what is 2+2\r", "\x03", "what is 3+3\r", "y\r", "\x03")
	out, err := onTerminal(t, options{approve: true}, term)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"✗ calculate the user did not allow this call", "3+3 = 6"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(term.screen.String(), "run calculate {\"expression\":\"2+2\"}? [y/N] ") {
		t.Errorf("the question is not the editor's prompt: %q", term.screen.String())
	}
	term.checkRestored(t, 5)
}

// A terminal that fails ends the chat with its error, the terminal
// restored; so does one that cannot be made raw.
func TestLineEditorErrors(t *testing.T) {
	errGone := errors.New("terminal gone")
	term := newFakeTerminal("what is")
	term.err = errGone
	if _, err := onTerminal(t, options{}, term); !errors.Is(err, errGone) {
		t.Errorf("run() = %v, want %v", err, errGone)
	}
	term.checkRestored(t, 1)

	errRaw := errors.New("not a terminal")
	opts := options{clock: fixedClock, term: newFakeTerminal(), raw: func() (func(), error) { return nil, errRaw }}
	if err := run(t.Context(), opts, nil, io.Discard); !errors.Is(err, errRaw) {
		t.Errorf("run() = %v, want %v", err, errRaw)
	}
}

// An interrupt that ends the chat while a line is read (a signal from
// elsewhere: in raw mode Ctrl-C is a key) restores the terminal.
func TestLineEditorInterrupted(t *testing.T) {
	keys, typing := io.Pipe()
	defer typing.Close() // ends the read left waiting
	term := newFakeTerminal()
	term.block = keys
	sigs := make(chan os.Signal, 1)
	done := make(chan error, 1)
	go func() {
		_, err := onTerminal(t, options{interrupts: sigs}, term)
		done <- err
	}()
	<-term.entered
	sigs <- os.Interrupt
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute): // a hang guard
		t.Fatal("the chat did not end")
	}
	term.checkRestored(t, 1)
}

// Home and End move to the line's ends whatever sequence the terminal
// sends for them: xterm's (ESC [ H, ESC [ F), tmux's and screen's
// (ESC [ 1 ~, ESC [ 4 ~), rxvt's (ESC [ 7 ~, ESC [ 8 ~) and application
// mode's (ESC O H, ESC O F), one split across two reads too; no part of
// a sequence reaches the line.
func TestLineEditorHomeEnd(t *testing.T) {
	for _, keys := range []struct{ name, home, end string }{
		{"xterm", "\x1b[H", "\x1b[F"},
		{"tmux and screen", "\x1b[1~", "\x1b[4~"},
		{"rxvt", "\x1b[7~", "\x1b[8~"},
		{"application mode", "\x1bOH", "\x1bOF"},
	} {
		t.Run(keys.name, func(t *testing.T) {
			// Typed: abc, Home, X, End split in two reads, Y, Enter.
			term := newFakeTerminal("abc", keys.home, "X", keys.end[:2], keys.end[2:]+"Y", "\r")
			line, err := newEditor(term, term.raw, nil, nil).readLine("you> ")
			if err != nil || line != "XabcY" {
				t.Errorf("readLine() = %q, %v; want XabcY", line, err)
			}
		})
	}
	// An escape sequence that is none of them goes through as it came,
	// the start of one held when the input ends included.
	k := &keyReader{r: strings.NewReader("a\x1b[2~b\x1b[1;5Cc\x1b[")}
	if got, err := io.ReadAll(k); err != nil || string(got) != "a\x1b[2~b\x1b[1;5Cc\x1b[" {
		t.Errorf("other sequences read as %q, %v", got, err)
	}
}

// lockedScreen is a terminal whose keys come from a pipe the test writes
// to, and whose screen the test reads while the editor writes it.
type lockedScreen struct {
	io.Reader
	mu     sync.Mutex
	screen strings.Builder
}

func (s *lockedScreen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.screen.Write(p)
}

func (s *lockedScreen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.screen.String()
}

// A terminal resized while a line is typed: the line is redrawn at the
// new width (the prompt and the line written again), and reads on as
// typed.
func TestLineEditorResize(t *testing.T) {
	keys, typing := io.Pipe()
	defer typing.Close()
	term := &lockedScreen{Reader: keys}
	var width atomic.Int32
	width.Store(80)
	resizes := make(chan os.Signal, 1)
	ed := newEditor(term, nil, func() int { return int(width.Load()) }, resizes)
	type read struct {
		line string
		err  error
	}
	done := make(chan read, 1)
	go func() {
		line, err := ed.readLine("you> ")
		done <- read{line, err}
	}()
	if _, err := typing.Write([]byte("hello world")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the line typed", func() bool { return strings.Contains(term.String(), "hello world") })
	width.Store(8)
	resizes <- syscall.SIGWINCH
	waitFor(t, "the line redrawn at the new width", func() bool { return strings.Count(term.String(), "you> ") == 2 })
	if _, err := typing.Write([]byte("!\r")); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.err != nil || r.line != "hello world!" {
		t.Errorf("readLine() = %q, %v; want hello world!", r.line, r.err)
	}
}

// waitFor waits until cond holds, polling; a minute without is a failure
// (a hang guard, not a measure).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: still not after a minute", what)
		}
	}
}

// /help fits an 80-column terminal, and /tools wraps each description
// at the terminal's width between words, under itself, whole.
func TestHelpAndToolsFit(t *testing.T) {
	for _, l := range strings.Split(chatOutput(t, options{}, "/help\n"), "\n") {
		if n := utf8.RuneCountInString(l); n >= defaultWidth {
			t.Errorf("a /help line %d columns wide: %q", n, l)
		}
	}
	out := chatOutput(t, options{width: func() int { return 50 }}, "/tools\n")
	descriptions := map[string]string{}
	var last string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if n := utf8.RuneCountInString(l); n >= 50 {
			t.Errorf("a /tools line %d columns wide at 50: %q", n, l)
		}
		fields := strings.Fields(l)
		if !strings.HasPrefix(l, "   ") { // a tool's first line
			last, fields = fields[0], fields[1:]
		}
		descriptions[last] += " " + strings.Join(fields, " ")
	}
	want := "Get the current weather for a city: condition, temperature, humidity and wind. [built in]"
	if got := strings.TrimSpace(descriptions["get_weather"]); got != want || len(descriptions) != 4 {
		t.Errorf("get_weather's description, its lines joined: %q (of %d tools); want %q\n%s", got, len(descriptions), want, out)
	}
}

// The line editor's history keeps the last lines, without empty lines or
// repeats.
func TestLineHistory(t *testing.T) {
	var h lineHistory
	for i := range maxHistory + 10 {
		h.Add(fmt.Sprint(i))
		h.Add(fmt.Sprint(i))
		h.Add("")
	}
	if h.Len() != maxHistory {
		t.Errorf("%d lines kept, want %d", h.Len(), maxHistory)
	}
	for i := range h.Len() {
		if want := fmt.Sprint(maxHistory + 9 - i); h.At(i) != want {
			t.Fatalf("At(%d) = %q, want %q", i, h.At(i), want)
		}
	}
}

// Results are cut to the output's width, whatever it is.
func TestResultsFitTheWidth(t *testing.T) {
	const question = "What's the weather in Paris?\n"
	narrow := chatOutput(t, options{width: func() int { return 40 }}, question)
	var results int
	for _, l := range strings.Split(narrow, "\n") {
		if strings.HasPrefix(l, "←") {
			results++
			if n := utf8.RuneCountInString(l); n > 39 || !strings.Contains(l, "…") {
				t.Errorf("a result %d columns wide at 40: %q", n, l)
			}
		}
	}
	if results != 1 {
		t.Errorf("%d results:\n%s", results, narrow)
	}
	wide := chatOutput(t, options{width: func() int { return 300 }}, question)
	if !strings.Contains(wide, `"note":"demo data: deterministic, not a real forecast"} (`) || strings.Contains(wide, "…") {
		t.Errorf("a result cut at 300 columns:\n%s", wide)
	}
}

// A live bar fits the terminal's width less a column, whatever the width,
// so that redrawing it never leaves a line behind.
func TestBarsFitTheWidth(t *testing.T) {
	r := &running{name: "count_primes", p: toolset.Progress{Done: 1, Total: 2, Message: strings.Repeat("sieving ", 10)}}
	for _, width := range []int{1, 10, 30, 50, 80, 200} {
		if n := utf8.RuneCountInString(r.bar(width)); n > max(width-1, 1) {
			t.Errorf("bar(%d) is %d columns wide: %q", width, n, r.bar(width))
		}
	}
	if !strings.HasSuffix(r.bar(200), "sieving") {
		t.Errorf("bar(200) cuts the message: %q", r.bar(200))
	}
	out := chatOutput(t, options{live: true, width: func() int { return 50 }}, "count the primes below 2 million\n")
	bars := 0
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimPrefix(l, "\x1b[1A\r\x1b[J")
		if strings.Contains(l, "█") || strings.Contains(l, "░") {
			bars++
			if n := utf8.RuneCountInString(l); n > 49 {
				t.Errorf("a bar %d columns wide at 50: %q", n, l)
			}
		}
	}
	if bars == 0 {
		t.Errorf("no bar drawn:\n%q", out)
	}
}

// On a terminal a spinner shows while the model thinks, and is erased
// before the answer; piped output has none.
func TestSpinner(t *testing.T) {
	srv := fake.NewServer()
	defer srv.Close()
	srv.Enqueue(fake.Text("Answer.").WithDelay(2*spinnerInterval), fake.Text("Answer."))
	out := chatOutput(t, options{models: srv.Client().Models, model: "m", live: true}, "q\n")
	spin, erased, answer := strings.Index(out, "\r⠋ thinking…"), strings.LastIndex(out, "\r\x1b[K"), strings.Index(out, "Answer.")
	if spin != 0 || erased < spin || answer != erased+len("\r\x1b[K") {
		t.Errorf("want the spinner, erased, then the answer: %q", out)
	}
	if out := chatOutput(t, options{models: srv.Client().Models, model: "m"}, "q\n"); strings.Contains(out, "thinking") {
		t.Errorf("a spinner in piped output: %q", out)
	}
}
