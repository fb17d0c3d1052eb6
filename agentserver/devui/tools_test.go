package devui

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// toolsEnv serves an agent with get_weather, a tool that fails, and one
// that needs approval.
func toolsEnv(t *testing.T, ui *Options) *env {
	return newEnv(t, envOpts{ui: ui, agent: func(c *agent.Config) {
		broken := toolset.MustFunc("broken", "Always fails", func(ctx context.Context, _ struct{}) (string, error) {
			return "", errors.New("the disk is full")
		})
		deploy := toolset.MustFunc("deploy", "Deploys", func(ctx context.Context, _ struct{}) (string, error) { return "deployed", nil })
		c.Tools = toolset.MustNew(append(c.Tools.Tools(), broken, deploy)...)
		c.NeedsApproval = func(call *genai.FunctionCall) bool { return call.Name == "deploy" }
	}, server: func(c *agentserver.Config) { c.MaxBodyBytes = 1 << 10 }})
}

func TestRunTool(t *testing.T) {
	e := toolsEnv(t, nil)
	post := func(tool, user, ct, body string) (int, toolRunJSON, string) {
		t.Helper()
		status, b := e.do("POST", "/api/tools/"+tool+"/run", user, ct, body)
		var out toolRunJSON
		if status == http.StatusOK {
			if err := json.Unmarshal([]byte(b), &out); err != nil {
				t.Fatalf("%s: %v", b, err)
			}
		}
		return status, out, b
	}
	const js = "application/json"

	status, out, b := post("get_weather", "alice", js, `{"args":{"city":"Oslo"}}`)
	if status != http.StatusOK || out.IsError || out.Invalid || out.Tool != "get_weather" || out.DurationMs < 0 {
		t.Fatalf("a run: %d %s", status, b)
	}
	if got, _ := json.Marshal(out.Output); string(got) != `{"city":"Oslo","sky":"sunny"}` {
		t.Errorf("the output: %s", got)
	}
	// Arguments that fail the schema: the tool does not run, and the
	// answer is the message the model would read.
	status, out, b = post("get_weather", "alice", js, `{"args":{"city":7}}`)
	if status != http.StatusOK || !out.IsError || !out.Invalid || !strings.Contains(out.Output.(string), "city") {
		t.Errorf("invalid arguments: %d %s", status, b)
	}
	// A tool's error, as the model reads it.
	status, out, b = post("broken", "alice", js, `{}`)
	if status != http.StatusOK || !out.IsError || out.Invalid || !strings.Contains(out.Output.(string), "the disk is full") {
		t.Errorf("a failing tool: %d %s", status, b)
	}

	for _, c := range []struct {
		name, tool, user, ct, body string
		status                     int
		code                       string
	}{
		{"unauthenticated", "get_weather", "", js, `{}`, 401, "unauthenticated"},
		{"unknown tool", "nope", "alice", js, `{}`, 404, "not_found"},
		{"long name", strings.Repeat("x", 200), "alice", js, `{}`, 400, "bad_tool"},
		{"needs approval", "deploy", "alice", js, `{}`, 403, "needs_approval"},
		{"bad JSON", "get_weather", "alice", js, `{"args":`, 400, "bad_json"},
		{"args not an object", "get_weather", "alice", js, `{"args":[1]}`, 400, "bad_field"},
		{"two values", "get_weather", "alice", js, `{} {}`, 400, "bad_json"},
		{"no content type", "get_weather", "alice", "", `{}`, 415, "bad_content_type"},
		{"a form", "get_weather", "alice", "application/x-www-form-urlencoded", `args=1`, 415, "bad_content_type"},
		{"too large", "get_weather", "alice", js, `{"args":{"city":"` + strings.Repeat("a", 2<<10) + `"}}`, 413, "too_large"},
	} {
		status, _, b := post(c.tool, c.user, c.ct, c.body)
		if status != c.status || !strings.Contains(b, `"code":"`+c.code+`"`) {
			t.Errorf("%s: %d %s, want %d %s", c.name, status, b, c.status, c.code)
		}
	}
	if status, b := e.do("GET", "/api/tools/get_weather/run", "alice", "", ""); status != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d %s", status, b)
	}
}

// With Options.RunToolsNeedingApproval, a tool that needs approval runs.
func TestRunToolNeedingApproval(t *testing.T) {
	e := toolsEnv(t, &Options{RunToolsNeedingApproval: true})
	status, b := e.do("POST", "/api/tools/deploy/run", "alice", "application/json", `{"args":{}}`)
	if status != http.StatusOK || !strings.Contains(b, `"output":"deployed"`) {
		t.Errorf("%d %s", status, b)
	}
}

// A tool run by hand reads the user who asked from its context, as in a
// served run (agentserver.RunUser), and no run.
func TestRunToolUser(t *testing.T) {
	e := newEnv(t, envOpts{agent: func(c *agent.Config) {
		whoami := toolset.MustFunc("whoami", "Says who runs it", func(ctx context.Context, _ struct{}) (map[string]string, error) {
			return map[string]string{"user": agentserver.RunUser(ctx), "run": agentserver.RunID(ctx)}, nil
		})
		c.Tools = toolset.MustNew(append(c.Tools.Tools(), whoami)...)
	}})
	for _, user := range []string{"alice", "bob"} {
		status, b := e.do("POST", "/api/tools/whoami/run", user, "application/json", `{"args":{}}`)
		if status != http.StatusOK || !strings.Contains(b, `"output":{"run":"","user":"`+user+`"}`) {
			t.Errorf("%s: %d %s", user, status, b)
		}
	}
}

// Tools run by hand are bounded as runs are (issue 43: 12 concurrent
// runs of one user all ran, where chat runs are capped at 8): a user runs
// Config.MaxRunsPerUser at once, more are refused with 429
// too_many_runs; another user is not affected.
func TestRunToolConcurrency(t *testing.T) {
	started, release := make(chan struct{}, 12), make(chan struct{})
	e := newEnv(t, envOpts{agent: func(c *agent.Config) {
		slow := toolset.MustFunc("slow", "Takes its time", func(ctx context.Context, _ struct{}) (string, error) {
			started <- struct{}{}
			select {
			case <-release:
				return "done", nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		})
		c.Tools = toolset.MustNew(append(c.Tools.Tools(), slow)...)
	}})
	type result struct {
		status int
		body   string
	}
	results := make(chan result, 12)
	for range 12 {
		go func() {
			status, body := e.do("POST", "/api/tools/slow/run", "alice", "application/json", `{}`)
			results <- result{status, body}
		}()
	}
	var once sync.Once
	releaseAll := func() { once.Do(func() { close(release) }) }
	defer releaseAll()
	// The runs admitted hold until released: the first four answers are
	// the refusals, and no more than eight start.
	refused, running := 0, 0
	for refused < 12-agentserver.DefaultMaxRunsPerUser || running < agentserver.DefaultMaxRunsPerUser {
		select {
		case r := <-results:
			if r.status != http.StatusTooManyRequests || !strings.Contains(r.body, `"too_many_runs"`) {
				t.Fatalf("a run over the user's bound: %d %s, want 429 too_many_runs", r.status, r.body)
			}
			refused++
		case <-started:
			if running++; running > agentserver.DefaultMaxRunsPerUser {
				t.Fatalf("%d runs by hand of one user at once", running)
			}
		}
	}
	if status, body := e.do("POST", "/api/tools/get_weather/run", "bob", "application/json", `{"args":{"city":"Oslo"}}`); status != http.StatusOK {
		t.Errorf("bob's run while alice's hold: %d %s", status, body)
	}
	releaseAll()
	for range agentserver.DefaultMaxRunsPerUser {
		if r := <-results; r.status != http.StatusOK {
			t.Errorf("a run admitted: %d %s", r.status, r.body)
		}
	}
	if status, body := e.do("POST", "/api/tools/get_weather/run", "alice", "application/json", `{"args":{"city":"Oslo"}}`); status != http.StatusOK {
		t.Errorf("alice's run once hers ended: %d %s", status, body)
	}
}
