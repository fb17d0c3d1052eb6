package temporalagent

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/genai"
)

// cacheRules is a system instruction above the cache minimum of
// testModel (1024 tokens).
var cacheRules = genai.NewContentFromText(strings.Repeat("Answer in one short sentence. ", 200), genai.RoleUser)

// cachingAgent returns an agent on srv with tools and cacheRules that
// caches under a policy of its own: another agent from it is what another
// worker holds, with caches of its own.
func cachingAgent(t *testing.T, srv *fake.Server, tools *toolset.Set, obs agent.Observer) *agent.Agent {
	t.Helper()
	c := srv.Client()
	a := newAgent(t, srv, tools, func(cfg *agent.Config) {
		cfg.GenerateConfig = &genai.GenerateContentConfig{SystemInstruction: cacheRules}
		cfg.Cache = &agent.CachePolicy{Caches: c.Caches, TTL: time.Hour}
		cfg.Observer = obs
	})
	t.Cleanup(func() { a.Close(context.Background()) })
	return a
}

// methods counts the requests of each method srv received.
func methods(srv *fake.Server) map[fake.Method]int {
	out := map[fake.Method]int{}
	for _, r := range srv.Requests() {
		out[r.Method]++
	}
	return out
}

// TestCacheInActivities: the workflow's model activities make the cache
// and name it, leaving out what it holds; the cache is workflow state,
// carried over a continue-as-new, and the worker that runs the next
// execution, holding no cache of its own, adopts it (a refresh, no new
// cache) instead of making another.
func TestCacheInActivities(t *testing.T) {
	srv := fake.NewServer() // checked below: both workers delete the cache on Close
	t.Cleanup(srv.Close)
	srv.Enqueue(weatherTurns(2)...)
	tools := toolset.MustNew((&weatherTool{}).tool())
	var log1, log2 eventLog
	first := Agent{Name: "weather", Agent: cachingAgent(t, srv, tools, &log1), ContinueAsNewEvery: 2}
	env := newEnv(t, first)
	env.ExecuteWorkflow(WorkflowName, runInput{Agent: "weather", Contents: user("Weather in c0, c1?")})
	next, ok := continued(t, env)
	if !ok {
		t.Fatalf("the run did not continue as new: %v", env.GetWorkflowError())
	}
	caches := srv.Caches()
	if len(caches) != 1 || next.State == nil || next.State.Cache.Name != caches[0].Name || next.State.Cache.Fingerprint == "" {
		t.Fatalf("caches %v, carried %+v; want the one cache made carried as state", caches, next.State)
	}
	if m := methods(srv); m[fake.MethodCreateCachedContent] != 1 || m[fake.MethodGenerateContent] != 2 {
		t.Fatalf("requests %v; want one cache made and two model calls", m)
	}

	// Another worker: an agent of the same config, with no cache.
	second := Agent{Name: "weather", Agent: cachingAgent(t, srv, tools, &log2), ContinueAsNewEvery: 2}
	env = newEnv(t, second)
	env.ExecuteWorkflow(WorkflowName, next)
	var out runOutput
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	if m := methods(srv); m[fake.MethodCreateCachedContent] != 1 || m[fake.MethodUpdateCachedContent] != 1 || m[fake.MethodGenerateContent] != 3 {
		t.Errorf("requests %v; want the cache adopted (refreshed once), none made, three model calls", m)
	}
	for _, r := range srv.Requests() {
		if r.Method == fake.MethodGenerateContent && (r.CachedContent != caches[0].Name || r.SystemInstruction != nil || len(r.Tools) > 0) {
			t.Errorf("request #%d names %q, system instruction %v, %d tools; want %s and neither", r.Seq, r.CachedContent, r.SystemInstruction != nil, len(r.Tools), caches[0].Name)
		}
	}
	if got := cacheActions(&log1); len(got) != 1 || got[0] != agent.CacheCreated {
		t.Errorf("the first worker reported %v; want created", got)
	}
	if got := cacheActions(&log2); len(got) != 1 || got[0] != agent.CacheRefreshed {
		t.Errorf("the second worker reported %v; want refreshed", got)
	}
	// Both workers hold it: the first Close deletes it, the second finds
	// it gone, which is no error.
	for _, a := range []Agent{second, first} {
		if err := a.Agent.Close(context.Background()); err != nil {
			t.Errorf("Close() = %v", err)
		}
	}
	if len(srv.Caches()) != 0 {
		t.Errorf("caches kept after Close: %v", srv.Caches())
	}
	for _, rj := range srv.Rejections() {
		if r := srv.Requests()[rj.Seq-1]; r.Method != fake.MethodDeleteCachedContent {
			t.Errorf("request #%d (%s) refused: %s", rj.Seq, r.Method, rj.Err.Message)
		}
	}
}

// cacheActions returns the actions of the EventCache events l saw.
func cacheActions(l *eventLog) []agent.CacheAction {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []agent.CacheAction
	for _, e := range l.events {
		if e.Kind == agent.EventCache {
			out = append(out, e.Cache.Action)
		}
	}
	return out
}

// TestCacheGoneInActivity: a cache that expires between two model calls
// of a run is made again once, in the model activity, which sends its
// call again through it; the run succeeds, and carries the new cache.
func TestCacheGoneInActivity(t *testing.T) {
	srv := fake.NewServer() // one request is refused on purpose
	t.Cleanup(srv.Close)
	expire := toolset.MustFunc("get_weather", "Current weather for a city", func(ctx context.Context, in weatherIn) (string, error) {
		srv.ExpireCaches()
		return "rain in " + in.City, nil
	})
	var log eventLog
	env := newEnv(t, Agent{Name: "weather", Agent: cachingAgent(t, srv, toolset.MustNew(expire), &log)})
	srv.Enqueue(weatherTurns(1)...)
	res, err := execute(env, "weather", user("Weather in c0?"))
	if err != nil || res.Text != "all sunny" {
		t.Fatalf("run = %v, %v; want all sunny", res, err)
	}
	m := methods(srv)
	if m[fake.MethodCreateCachedContent] != 2 || m[fake.MethodGenerateContent] != 3 {
		t.Errorf("requests %v; want two caches made and three model calls (one refused)", m)
	}
	rejected := srv.Rejections()
	if len(rejected) != 1 || !strings.Contains(rejected[0].Err.Message, "CachedContent not found") {
		t.Errorf("rejections %+v; want the call naming the expired cache", rejected)
	}
	live := srv.Caches()
	gens := 0
	for _, r := range srv.Requests() {
		if r.Method == fake.MethodGenerateContent {
			gens++
			if gens == 3 && (len(live) != 1 || r.CachedContent != live[0].Name) {
				t.Errorf("the call sent again names %q; want the new cache %v", r.CachedContent, live)
			}
		}
	}
	if got := cacheActions(&log); len(got) != 2 || got[0] != agent.CacheCreated || got[1] != agent.CacheRecreated {
		t.Errorf("cache events %v; want created, recreated", got)
	}
}

// TestReplayMakesNoCache replays the recorded workflow histories with
// agents that cache: a replay runs no activity, so it makes no cache and
// calls nothing.
func TestReplayMakesNoCache(t *testing.T) {
	files := recordedHistories(t)
	srv := newServer(t)
	var log eventLog
	var agents []Agent
	for _, name := range []string{"weather", "weather-regular", "weather-local", "approve"} {
		agents = append(agents, Agent{Name: name, Agent: cachingAgent(t, srv, toolset.MustNew((&weatherTool{}).tool()), &log)})
	}
	h, err := newHost(agents)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.Contains(f, "typed") {
			continue // the typed agent is not registered here
		}
		r := worker.NewWorkflowReplayer()
		r.RegisterWorkflowWithOptions(h.run, workflow.RegisterOptions{Name: WorkflowName})
		if err := r.ReplayWorkflowHistoryFromJSONFile(quiet, f); err != nil {
			t.Errorf("replaying %s: %v", f, err)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("the replays sent %d requests (%v); want none", n, methods(srv))
	}
	if got := cacheActions(&log); len(got) != 0 {
		t.Errorf("the replays reported %v; want nothing", got)
	}
}
