package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/examples/internal/demotools"
	"github.com/toolnexus/toolnexus-go/mcptools"
)

// selfServer is the -mcp value that runs this test binary as an MCP server
// of the demo tools.
func selfServer(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsRune(exe, ' ') {
		t.Skip("the test binary's path has a space, which -mcp would split")
	}
	return exe + " " + mcpServerArg
}

// wide is the width of a terminal wide enough for any line of /tools.
func wide() int { return 300 }

// The offline chat answers through the MCP server's tools, which replace
// the built-in ones, with a real subprocess server.
func TestMCPCommand(t *testing.T) {
	spec := selfServer(t)
	// A terminal wide enough for /tools' lines unwrapped.
	out := chatOutput(t, options{mcp: []string{spec}, width: wide}, "What is the weather in Paris and Tokyo?\n/tools\n")
	for _, want := range []string{
		`MCP server "` + spec + `": calculate, count_primes, current_time, get_weather (in place of the built-in calculate, count_primes, current_time, get_weather).`,
		"→ get_weather {\"city\":\"Paris\"}\n→ get_weather {\"city\":\"Tokyo\"}\n",
		"Paris: heavy rain, 3°C, humidity 53%, wind 45 km/h.",
		"get_weather   Get the current weather for a city: condition, temperature, humidity and wind. [MCP " + spec + "]",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "[built in]") {
		t.Errorf("/tools still lists a built-in tool:\n%s", out)
	}
}

// A long tool of an MCP subprocess server shows its progress in the chat:
// the server sends it as notifications/progress, the client reports it,
// and the chat prints it, the last line at 100% before the result.
func TestMCPProgress(t *testing.T) {
	out := chatOutput(t, options{mcp: []string{"demo=" + selfServer(t)}}, "how many primes are there below 3 million?\n")
	call := strings.Index(out, `→ demo_count_primes {"below":3000000}`)
	last := strings.Index(out, "… demo_count_primes 100% sieved up to 3,000,000: 216,816 primes so far\n")
	result := strings.Index(out, `← demo_count_primes {"below":3000000,"largest":2999999,"primes":216816}`)
	if call < 0 || last < call || result < last {
		t.Fatalf("want the call, its progress ending at 100%%, then its result, in order:\n%s", out)
	}
}

// With name=, a server's tools keep their own names behind a prefix; the
// offline model calls them, and handles several requests in one message.
func TestMCPHTTPWithPrefix(t *testing.T) {
	ts := httptest.NewServer(mcptools.HTTPHandler(demotools.New(fixedClock), nil))
	defer ts.Close()
	out := chatOutput(t, options{mcpHTTP: []string{"demo=" + ts.URL}, loginFile: filepath.Join(t.TempDir(), "logins.json"), width: wide},
		"what is (12+7)*3 and what time is it in Tokyo?\n/tools\n")
	for _, want := range []string{
		`MCP server "demo=` + ts.URL + `": demo_calculate, demo_count_primes, demo_current_time, demo_get_weather.`,
		"→ demo_calculate {\"expression\":\"(12+7)*3\"}\n→ demo_current_time {\"timezone\":\"Asia/Tokyo\"}\n", // one turn
		"(12+7)*3 = 57",
		"In Asia/Tokyo it is Sunday, 15 March 2026 00:09 JST (UTC+09:00).",
		"  get_weather       Get the current weather for a city: condition, temperature, humidity and wind. [built in]",
		"  demo_get_weather  Get the current weather for a city: condition, temperature, humidity and wind. [MCP demo=" + ts.URL + "]",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestMCPErrors(t *testing.T) {
	ts := httptest.NewServer(mcptools.HTTPHandler(demotools.New(fixedClock), nil))
	defer ts.Close()
	for _, tc := range []struct {
		name string
		opts options
		want string
	}{
		{"empty command", options{mcp: []string{"name=  "}}, `-mcp "name=  ": no command`},
		{"not a URL", options{mcpHTTP: []string{"localhost:8080"}}, `-mcp-http "localhost:8080": not an http:// or https:// URL`},
		{"cannot start", options{mcp: []string{"/nonexistent/server --flag"}}, `MCP server "/nonexistent/server --flag": mcptools: connecting to the MCP server`},
		{"two servers, same names", options{mcpHTTP: []string{ts.URL, ts.URL}},
			`MCP servers "` + ts.URL + `" and "` + ts.URL + `" both have a tool calculate: give one a name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.clock = fixedClock
			tc.opts.loginFile = filepath.Join(t.TempDir(), "logins.json")
			err := run(t.Context(), tc.opts, strings.NewReader(""), &strings.Builder{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run() = %v; want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestListFlag(t *testing.T) {
	var f listFlag
	if err := f.Set("a b"); err != nil {
		t.Fatal(err)
	}
	if err := f.Set("c"); err != nil {
		t.Fatal(err)
	}
	if err := f.Set(" "); err == nil {
		t.Error("Set(blank) succeeded")
	}
	if got := f.String(); got != "a b, c" {
		t.Errorf("String() = %q", got)
	}
}
