package main

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// -live offline: the question gets both tool calls and their results over
// the Live API, a follow-up in the same live session asks again about
// another place, and the answers are as without -live.
func TestOfflineLive(t *testing.T) {
	out := chatOutput(t, options{liveAPI: true}, "What is the weather in Paris and Tokyo?\nAnd in Oslo?\nwhat time is it in UTC\n")
	if !strings.HasPrefix(out, "→ get_weather") {
		t.Errorf("piped output starts with something other than the first answer:\n%s", out)
	}
	for _, want := range []string{
		"Paris: heavy rain, 3°C, humidity 53%, wind 45 km/h.\n",
		"Tokyo: windy, 13°C",
		"→ get_weather {\"city\":\"Oslo\"}\n", // the follow-up, answered from the live session's conversation
		"Oslo: heavy rain, 13°C",
		"In UTC it is Saturday, 14 March 2026 15:09 UTC (UTC+00:00).",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Both calls come in one toolCall, answered before the model speaks
	// (their results may show between them: the tools run in parallel).
	answer := strings.Index(out, "Paris: heavy rain")
	for _, call := range []string{"→ get_weather {\"city\":\"Paris\"}\n", "→ get_weather {\"city\":\"Tokyo\"}\n"} {
		if i := strings.Index(out, call); i < 0 || i > answer {
			t.Errorf("%q not shown before the answer:\n%s", call, out)
		}
	}
	if got := strings.Count(out, "← get_weather"); got != 3 {
		t.Errorf("%d get_weather results, want 3:\n%s", got, out)
	}
	if strings.Contains(out, "error") {
		t.Errorf("an error shown:\n%s", out)
	}
}

// -live -approve: each call is asked at the prompt; y runs it, n has the
// model told it was not run.
func TestOfflineLiveApprove(t *testing.T) {
	out := chatOutput(t, options{liveAPI: true, approve: true}, "What is the weather in Paris and Tokyo?\ny\nn\n")
	for _, want := range []string{
		"run get_weather {\"city\":\"Paris\"}? [y/N] y\n",
		"run get_weather {\"city\":\"Tokyo\"}? [y/N] n\n",
		"Paris: heavy rain, 3°C",
		"get_weather failed:", // Tokyo's call, denied
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if got := strings.Count(out, "← get_weather"); got != 1 {
		t.Errorf("%d get_weather results, want 1:\n%s", got, out)
	}
}

func TestLiveRefusesWeb(t *testing.T) {
	for _, opts := range []options{{liveAPI: true, web: "localhost:0"}, {liveAPI: true, session: "x"}, {liveAPI: true, api: apiInteractions}} {
		if err := run(t.Context(), opts, strings.NewReader(""), new(strings.Builder)); err == nil || !strings.Contains(err.Error(), "-live") {
			t.Errorf("run(%+v) = %v, want a -live error", opts, err)
		}
	}
}

// Ctrl-C stops a live answer (here while a call waits for approval, which
// is then denied) and returns to the prompt; what is left of the stopped
// answer is dropped, and the next question gets its own answer.
func TestLiveInterrupt(t *testing.T) {
	sigs := make(chan os.Signal, 1)
	in, inW := io.Pipe()
	defer inW.Close()
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(context.Background(), options{liveAPI: true, approve: true, interactive: true, interrupts: sigs, clock: fixedClock}, in, &out)
	}()
	waitFor := func(s string) {
		t.Helper()
		start := time.Now()
		for !strings.Contains(out.String(), s) {
			select {
			case err := <-done:
				t.Fatalf("run ended early: %v\n%s", err, out.String())
			case <-time.After(time.Millisecond):
			}
			if time.Since(start) > time.Minute { // a hang guard
				t.Fatalf("waiting for %q:\n%s", s, out.String())
			}
		}
	}
	if _, err := io.WriteString(inW, "What is the weather in Paris?\n"); err != nil {
		t.Fatal(err)
	}
	waitFor("[y/N] ")
	sigs <- os.Interrupt // stops the answer
	waitFor("(answer stopped)\nyou> ")
	if _, err := io.WriteString(inW, "what is 2+2\n"); err != nil {
		t.Fatal(err)
	}
	waitFor(`calculate {"expression":"2+2"}? [y/N] `)
	if _, err := io.WriteString(inW, "y\n"); err != nil {
		t.Fatal(err)
	}
	waitFor("2+2 = 4\n")
	sigs <- os.Interrupt // at the prompt: leave
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute): // a hang guard: it ends at once
		t.Fatalf("run did not end after Ctrl-C at the prompt:\n%s", out.String())
	}
	if s := out.String(); strings.Contains(s, "get_weather failed") || strings.Contains(s, "✗") {
		t.Errorf("the stopped answer's end shown:\n%s", s)
	}
}
