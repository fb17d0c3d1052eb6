package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/internal/offline"
	"google.golang.org/genai"
)

// fixedClock is the time every test's current_time tool sees.
func fixedClock() time.Time { return time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC) }

// chatOutput runs a piped (non-interactive) chat on input and returns what
// it printed.
func chatOutput(t *testing.T, opts options, input string) string {
	t.Helper()
	var out bytes.Buffer
	opts.clock = fixedClock
	if err := run(context.Background(), opts, strings.NewReader(input), &out); err != nil {
		t.Fatalf("run() = %v", err)
	}
	return out.String()
}

func TestOfflineConversation(t *testing.T) {
	out := chatOutput(t, options{}, strings.Join([]string{
		"What's the weather in Paris and Tokyo?",
		"what time is it in UTC",
		"what is (12+7)*3",
		"tell me a joke",
	}, "\n")+"\n")
	if strings.HasPrefix(out, "What") || !strings.HasPrefix(out, "→ get_weather") {
		t.Errorf("piped output starts with something other than the first answer:\n%s", out)
	}
	for _, want := range []string{
		"→ get_weather {\"city\":\"Paris\"}\n→ get_weather {\"city\":\"Tokyo\"}\n", // both calls in one turn
		"Paris: heavy rain, 3°C, humidity 53%, wind 45 km/h.",
		"Tokyo: windy, 13°C",
		"(The weather here is made-up demo data.)",
		"→ current_time {\"timezone\":\"UTC\"}",
		"In UTC it is Saturday, 14 March 2026 15:09 UTC (UTC+00:00).",
		"→ calculate {\"expression\":\"(12+7)*3\"}",
		"(12+7)*3 = 57",
		"I am the offline demo model",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Error("escape codes in output that is not a terminal")
	}
	if got := strings.Count(out, "← get_weather"); got != 2 {
		t.Errorf("%d get_weather results, want 2", got)
	}
}

func TestOfflineToolErrors(t *testing.T) {
	out := chatOutput(t, options{}, "what is 1/0\nwhat time is it in Atlantis/Capital\n")
	for _, want := range []string{
		`✗ calculate division by zero in "1/0"`,
		`calculate failed: division by zero in "1/0".`,
		`✗ current_time time zone "Atlantis/Capital" is unknown`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestScriptedChatKeepsHistoryAndCommands(t *testing.T) {
	srv := fake.NewServer()
	defer srv.Close()
	srv.Enqueue(fake.Text("Hi!"), fake.Text("You said hello."), fake.Text("Fresh start."))
	out := chatOutput(t, options{models: srv.Client().Models, model: "gemini-2.5-flash"},
		"hello\nwhat did I say?\n/history\n/reset\n/history\nagain\n/tools\n/help\n/nope\n/exit\nnever sent\n")
	for _, want := range []string{
		"Hi!", "You said hello.",
		"user:  hello\nmodel: Hi!\nuser:  what did I say?\nmodel: You said hello.\n",
		"(conversation cleared)", "(no conversation yet)", "Fresh start.",
		"get_weather   Get the current weather", "Commands:", "unknown command /nope",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3 (/exit stops before the last line)", len(reqs))
	}
	if n := len(reqs[1].Contents); n != 3 {
		t.Errorf("second request has %d contents, want 3 (the history)", n)
	}
	if n := len(reqs[2].Contents); n != 1 {
		t.Errorf("request after /reset has %d contents, want 1", n)
	}
	if reqs[0].SystemInstruction == nil || !strings.Contains(reqs[0].SystemInstruction.Parts[0].Text, "get_weather") {
		t.Error("no system instruction sent")
	}
}

func TestScriptedErrorIsShown(t *testing.T) {
	srv := fake.NewServer()
	defer srv.Close()
	srv.Enqueue(fake.Error(403, "API key not valid."), fake.Text("recovered"))
	out := chatOutput(t, options{models: srv.Client().Models, model: "gemini-2.5-flash"}, "hi\nhi again\n")
	if !strings.Contains(out, "error: agent: model call for turn 0 failed: Error 403, Message: API key not valid.") || !strings.Contains(out, "recovered") {
		t.Errorf("output:\n%s", out)
	}
}

func TestVerboseUsageAndColor(t *testing.T) {
	srv := fake.NewServer()
	defer srv.Close()
	srv.Enqueue(fake.Parts(&genai.Part{Text: "pondering", Thought: true}, &genai.Part{Text: "Answer."}))
	out := chatOutput(t, options{models: srv.Client().Models, model: "gemini-2.5-flash", verbose: true, color: true}, "q\n")
	if !regexp.MustCompile(`\x1b\[2m\[1 model turns · 0 tool calls · \d+ tokens in \(\d+ full price, 0 cached\), \d+ out, \d+ thinking · .*\]\x1b\[0m`).MatchString(out) {
		t.Errorf("no dimmed usage line in %q", out)
	}
	if !strings.Contains(out, "\x1b[2mpondering\x1b[0m\nAnswer.") {
		t.Errorf("thought not dimmed before the answer: %q", out)
	}
}

// TestVerboseUsageCached: -v's usage line splits the input into what is
// billed at the full price and what was read from a cache. On the offline
// model, a message long enough for the fake's implicit caching (the
// model's MinCacheTokens) is read from the cache by the next turn, which
// starts with the same prompt.
func TestVerboseUsageCached(t *testing.T) {
	long := "tell me a story about " + strings.Repeat("a very long road ", 4*fake.MinCacheTokens(offline.ModelName)/17+1)
	out := chatOutput(t, options{verbose: true}, long+"\nand another one\n")
	re := regexp.MustCompile(`\[1 model turns · 0 tool calls · (\d+) tokens in \((\d+) full price, (\d+) cached\), \d+ out, \d+ thinking · .*\]`)
	lines := re.FindAllStringSubmatch(out, -1)
	if len(lines) != 2 {
		t.Fatalf("%d usage lines; want 2:\n%s", len(lines), out)
	}
	for i, l := range lines {
		in, full, cached := atoi(t, l[1]), atoi(t, l[2]), atoi(t, l[3])
		if in != full+cached {
			t.Errorf("turn %d: %d tokens in; want %d full price + %d cached", i+1, in, full, cached)
		}
		switch {
		case i == 0 && cached != 0:
			t.Errorf("first turn: %d cached; want 0 (nothing sent before)", cached)
		case i == 1 && (cached < fake.MinCacheTokens(offline.ModelName) || full == 0):
			t.Errorf("second turn: %d cached, %d full price; want the first message's prefix (at least %d) cached, the new message at full price",
				cached, full, fake.MinCacheTokens(offline.ModelName))
		}
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// syncBuffer is a bytes.Buffer safe to read while run writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Ctrl-C stops the answer in progress and returns to the prompt; Ctrl-C at
// the prompt leaves.
func TestInterrupts(t *testing.T) {
	srv := fake.NewServer()
	defer srv.Close()
	arrived := make(chan struct{})
	srv.SetReplyFunc(func(*fake.Request) *fake.Reply {
		close(arrived)
		return fake.Text("too late").WithDelay(time.Hour)
	})
	sigs := make(chan os.Signal, 1)
	in, inW := io.Pipe()
	defer inW.Close()
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(context.Background(), options{models: srv.Client().Models, model: "m", interactive: true, interrupts: sigs}, in, &out)
	}()
	if _, err := io.WriteString(inW, "slow question\n"); err != nil {
		t.Fatal(err)
	}
	<-arrived
	sigs <- os.Interrupt // stops the answer
	for !strings.Contains(out.String(), "(answer stopped)\nyou> ") {
		select {
		case err := <-done:
			t.Fatalf("run ended early: %v\n%s", err, out.String())
		case <-time.After(time.Millisecond):
		}
	}
	sigs <- os.Interrupt // at the prompt: leave
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute): // a hang guard: it ends at once
		t.Fatalf("run did not end after Ctrl-C at the prompt:\n%s", out.String())
	}
	if strings.Contains(out.String(), "Chatting") {
		t.Errorf("a banner without a terminal:\n%s", out.String())
	}
}

// Ctrl-D (end of input) leaves the interactive chat.
func TestEndOfInputLeaves(t *testing.T) {
	srv := fake.NewServer()
	defer srv.Close()
	var out bytes.Buffer
	err := run(context.Background(), options{models: srv.Client().Models, model: "m", interactive: true}, strings.NewReader(""), &out)
	if err != nil || !strings.HasSuffix(out.String(), "you> \n") {
		t.Errorf("run() = %v, output %q", err, out.String())
	}
}

// With -approve, each call waits for the next input line: y runs it,
// anything else (or the end of the input) refuses it.
func TestApprove(t *testing.T) {
	out := chatOutput(t, options{approve: true}, "What's the weather in Paris and Tokyo?\ny\nno\nwhat is 2+2\n")
	for _, want := range []string{
		"run get_weather {\"city\":\"Paris\"}? [y/N] y\n",
		"run get_weather {\"city\":\"Tokyo\"}? [y/N] no\n",
		"✗ get_weather the user did not allow this call",
		"Paris: heavy rain",
		"run calculate {\"expression\":\"2+2\"}? [y/N] \n", // the input ended: refused
		"✗ calculate the user did not allow this call",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if got := strings.Count(out, "← get_weather"); got != 1 {
		t.Errorf("%d get_weather calls ran, want 1 (Paris):\n%s", got, out)
	}
}

func TestOfflineTrip(t *testing.T) {
	out := chatOutput(t, options{verbose: true}, "/trip Rome\n/trip Paris\n/trip\n")
	for _, want := range []string{
		"→ weather_researcher {\"request\":\"What is the weather in Rome?\"}\n" +
			"  [weather_researcher] → get_weather {\"city\":\"Rome\"}\n" +
			"  [weather_researcher] ← get_weather {\"city\":\"Rome\",\"condition\":\"cloudy\"",
		"← weather_researcher \"Rome: cloudy, 27°C",
		"A day in Rome (cloudy, 27°C, humidity 20%, wind 24 km/h):\n  1. a walk through the old town\n  2. lunch on a terrace\n  3. a viewpoint at sunset\n",
		"A day in Paris (heavy rain, 3°C, humidity 53%, wind 45 km/h):\n  1. a morning at a museum\n",
		"[tokens by agent: trip_planner ",
		", weather_researcher ",
		"usage: /trip <city>",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// With -search, a search Gemini runs is shown, never run, and the pages
// that ground the answer follow it; the request asks for the server-side
// invocations beside the chat's tools.
func TestOfflineSearch(t *testing.T) {
	out := chatOutput(t, options{search: true}, "search the latest Go release\nWhat's the weather in Paris?\n")
	for _, want := range []string{
		`⌕ google_search {"queries":["the Go release"]}`,
		"made-up finding about",
		"source: example.com (https://example.com/offline-search)",
		"→ get_weather",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// A long tool call shows its progress: plain lines in piped output, the
// last one at 100% before the result, and the offline model answers with
// the count.
func TestOfflineProgressPiped(t *testing.T) {
	out := chatOutput(t, options{}, "how many primes are there below 3 million?\n")
	start := strings.Index(out, `→ count_primes {"below":3000000}`)
	last := strings.Index(out, "… count_primes 100% sieved up to 3,000,000: 216,816 primes so far\n")
	result := strings.Index(out, `← count_primes {"below":3000000,"primes":216816,"largest":2999999}`)
	if start < 0 || last < start || result < last {
		t.Fatalf("want the call, its progress ending at 100%%, then its result, in order:\n%s", out)
	}
	if !strings.Contains(out, "There are 216816 primes below 3000000; the largest is 2999999.") {
		t.Errorf("no answer with the count:\n%s", out)
	}
	// One line per tenth at most.
	if n := strings.Count(out, "… count_primes"); n > 11 {
		t.Errorf("%d progress lines; want at most one per tenth:\n%s", n, out)
	}
	if strings.Contains(out, "\x1b[") {
		t.Error("escape codes in output that is not a terminal")
	}
}

// In a terminal, each running call has a live bar, redrawn in place, and
// erased when the call's result is printed.
func TestOfflineProgressLive(t *testing.T) {
	out := chatOutput(t, options{live: true}, "count the primes below 2 million and the primes under 1 million\n")
	for _, want := range []string{
		"  count_primes [████████████████████] 100% sieved up to 2,000,000: 148,933 pri…\n", // 79 columns
		"  count_primes [████████████████████] 100% sieved up to 1,000,000: 78,498 prim…\n",
		"\x1b[1A\r\x1b[J", // a bar erased
		`← count_primes {"below":2000000`,
		`← count_primes {"below":1000000`,
		"There are 148933 primes below 2000000",
		"There are 78498 primes below 1000000",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%q", want, out)
		}
	}
	// After the last result, no bar is left on the screen: the output
	// from the last erasure on draws none.
	tail := out[strings.LastIndex(out, "\x1b[J"):]
	if strings.Contains(tail, "█") {
		t.Errorf("a bar is left after the results: %q", tail)
	}
}

// The README's follow-up: "And in Oslo?" after a question about the
// weather asks about the weather in Oslo; /history labels the tools'
// results as such.
func TestOfflineFollowUp(t *testing.T) {
	out := chatOutput(t, options{}, weatherQuestion+"And in Oslo?\n/history\n")
	for _, want := range []string{
		"→ get_weather {\"city\":\"Oslo\"}",
		"Oslo: ",
		"user:  And in Oslo?\nmodel: call get_weather {\"city\":\"Oslo\"}\ntool:  get_weather -> {\"result\":{\"city\":\"Oslo\"",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "I am the offline demo model") || strings.Contains(out, "user:  get_weather") {
		t.Errorf("output:\n%s", out)
	}
}
