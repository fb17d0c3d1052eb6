package main

import (
	"strings"
	"testing"
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
		"→ get_weather {\"city\":\"Paris\"}\n→ get_weather {\"city\":\"Tokyo\"}\n", // both calls in one toolCall
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
