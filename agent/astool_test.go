package agent_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// team is a fake model that plays several agents, told apart by their
// system instructions ("You are <name>."), each with its own script.
type team struct {
	mu      sync.Mutex
	scripts map[string]func(req *fake.Request) *fake.Reply
	tokens  map[string]int32 // the total tokens each reply of an agent reports
}

func newTeam(srv *fake.Server) *team {
	tm := &team{scripts: map[string]func(*fake.Request) *fake.Reply{}, tokens: map[string]int32{}}
	srv.SetReplyFunc(func(req *fake.Request) *fake.Reply {
		who := strings.TrimSuffix(strings.TrimPrefix(textOf(req.SystemInstruction), "You are "), ".")
		tm.mu.Lock()
		script, tokens := tm.scripts[who], tm.tokens[who]
		tm.mu.Unlock()
		if script == nil {
			return fake.Error(500, "no script for agent "+who)
		}
		reply := script(req)
		if tokens > 0 && reply.Response != nil {
			reply.Response.UsageMetadata = &genai.GenerateContentResponseUsageMetadata{
				PromptTokenCount: tokens - 1, CandidatesTokenCount: 1, TotalTokenCount: tokens}
		}
		return reply
	})
	return tm
}

// add scripts the agent name, whose replies each report tokens tokens.
func (tm *team) add(name string, tokens int32, script func(req *fake.Request) *fake.Reply) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	tm.scripts[name], tm.tokens[name] = script, tokens
}

func textOf(c *genai.Content) string {
	if c == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range c.Parts {
		if !p.Thought {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// member returns an agent of the team on srv.
func member(t *testing.T, srv *fake.Server, name string, tools *toolset.Set, edit ...func(*agent.Config)) *agent.Agent {
	t.Helper()
	return newAgent(t, srv, tools, append([]func(*agent.Config){func(c *agent.Config) {
		c.Model, c.Name = model3, name
		c.GenerateConfig = &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText("You are "+name+".", "")}
	}}, edit...)...)
}

func mustAsTool(t *testing.T, a *agent.Agent, name string) *toolset.Tool {
	t.Helper()
	tool, err := agent.AsTool(a, name, "Asks the "+name+" agent.")
	if err != nil {
		t.Fatalf("AsTool(%q) = %v", name, err)
	}
	return tool
}

// answers returns the function responses of a request's last content.
func answers(req *fake.Request) []*genai.FunctionResponse {
	return responses(req.Contents[len(req.Contents)-1])
}

func TestAsTool(t *testing.T) {
	srv := newServer(t)
	tm := newTeam(srv)
	tm.add("researcher", 0, func(req *fake.Request) *fake.Reply {
		return fake.Text("Paris has 2.1 million people (asked: " + textOf(req.Contents[0]) + ")")
	})
	tm.add("coordinator", 0, func(req *fake.Request) *fake.Reply {
		if rs := answers(req); len(rs) > 0 {
			return fake.Text(fmt.Sprint("Answer: ", rs[0].Response["result"]))
		}
		return fake.Calls(fake.Call("researcher", map[string]any{"request": "Population of Paris?"}))
	})
	researcher := member(t, srv, "researcher", nil)
	coordinator := member(t, srv, "coordinator", toolset.MustNew(mustAsTool(t, researcher, "researcher")))

	res, err := coordinator.Run(context.Background(), user("How many people live in Paris?"))
	if err != nil {
		t.Fatalf("Run() = %v", err)
	}
	if want := "Answer: Paris has 2.1 million people (asked: Population of Paris?)"; res.Text != want {
		t.Errorf("Text = %q; want %q", res.Text, want)
	}
	// The researcher saw only the request, in a conversation of its own.
	reqs := srv.Requests()
	if len(reqs) != 3 || len(reqs[1].Contents) != 1 || textOf(reqs[1].SystemInstruction) != "You are researcher." {
		t.Fatalf("requests = %d, second with %d contents; want the researcher's run between the coordinator's turns", len(reqs), len(reqs[1].Contents))
	}
	d := reqs[0].Tools[0].FunctionDeclarations[0]
	if d.Name != "researcher" || d.Parameters.Properties["request"].Type != genai.TypeString || !cmp.Equal(d.Parameters.Required, []string{"request"}) {
		t.Errorf("declaration = %+v; want researcher(request string)", d)
	}
}

// TestAsToolNested runs agents two levels deep: the coordinator calls two
// researchers in parallel and a writer; each researcher calls a fact
// checker, which calls a tool. It checks the parallelism, the usage sums
// and the events the coordinator's observer sees.
func TestAsToolNested(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%t", stream), func(t *testing.T) { testNested(t, stream) })
	}
}

func testNested(t *testing.T, stream bool) {
	srv := newServer(t)
	tm := newTeam(srv)
	// Both fact checkers' lookups must be running at once to go on: the
	// researchers run in parallel, and so do their sub-agents.
	var barrier sync.WaitGroup
	barrier.Add(2)
	arrived := make(chan struct{})
	go func() { barrier.Wait(); close(arrived) }()
	lookup := toolset.MustFunc("lookup", "Looks a fact up", func(ctx context.Context, in struct {
		Q string `json:"q"`
	}) (string, error) {
		barrier.Done()
		select {
		case <-arrived:
			return "confirmed: " + in.Q, nil
		case <-time.After(hangGuard):
			return "", errors.New("the other lookup never started: sub-agents did not run in parallel")
		}
	})
	tm.add("fact_checker", 1, func(req *fake.Request) *fake.Reply {
		if rs := answers(req); len(rs) > 0 {
			return fake.Text(fmt.Sprint(rs[0].Response["result"]))
		}
		return fake.Calls(fake.Call("lookup", map[string]any{"q": textOf(req.Contents[0])}))
	})
	tm.add("researcher", 10, func(req *fake.Request) *fake.Reply {
		if rs := answers(req); len(rs) > 0 {
			return fake.Text(fmt.Sprint("researched, ", rs[0].Response["result"]))
		}
		return fake.Calls(fake.Call("fact_checker", map[string]any{"request": textOf(req.Contents[0])}))
	})
	tm.add("writer", 1000, func(*fake.Request) *fake.Reply { return fake.Text("drafted") })
	tm.add("coordinator", 100, func(req *fake.Request) *fake.Reply {
		if rs := answers(req); len(rs) > 0 {
			var parts []string
			for _, r := range rs {
				parts = append(parts, fmt.Sprint(r.Response["result"]))
			}
			return fake.Text(strings.Join(parts, " | "))
		}
		return fake.Calls(
			fake.Call("researcher", map[string]any{"request": "Paris"}),
			fake.Call("researcher", map[string]any{"request": "Tokyo"}),
			fake.Call("writer", map[string]any{"request": "draft"}))
	})

	log := &eventLog{}
	checker := member(t, srv, "fact_checker", toolset.MustNew(lookup))
	researcher := member(t, srv, "researcher", toolset.MustNew(mustAsTool(t, checker, "fact_checker")))
	writer := member(t, srv, "writer", nil)
	coordinator := member(t, srv, "coordinator", toolset.MustNew(mustAsTool(t, researcher, "researcher"), mustAsTool(t, writer, "writer")),
		func(c *agent.Config) { c.Observer = log })

	var res *agent.Result
	var err error
	if stream {
		for e, serr := range coordinator.Stream(context.Background(), user("Compare Paris and Tokyo.")) {
			if e.Agent != "coordinator" {
				t.Errorf("the Stream yielded an event of agent %q; want only the coordinator's", e.Agent)
			}
			if e.Kind == agent.EventDone {
				res, err = e.Result, serr
			}
		}
	} else {
		res, err = coordinator.Run(context.Background(), user("Compare Paris and Tokyo."))
	}
	if err != nil {
		t.Fatalf("run = %v", err)
	}
	if want := "researched, confirmed: Paris | researched, confirmed: Tokyo | drafted"; res.Text != want {
		t.Errorf("Text = %q; want %q", res.Text, want)
	}

	// Usage: the coordinator's 2 replies of 100 tokens, 2 researcher runs of
	// 2 replies of 10, 2 fact checker runs of 2 replies of 1, 1 writer reply of 1000.
	wantAgents := map[string]int{"coordinator": 200, "researcher": 40, "fact_checker": 4, "writer": 1000}
	gotAgents := map[string]int{}
	for name, u := range res.Agents {
		gotAgents[name] = u.TotalTokens
	}
	if diff := cmp.Diff(wantAgents, gotAgents); diff != "" {
		t.Errorf("Result.Agents total tokens (-want +got):\n%s", diff)
	}
	if res.Usage.TotalTokens != 1244 || res.Usage.CandidatesTokens != 2+4+4+1 || res.Usage.PromptTokens != 1244-11 {
		t.Errorf("Usage = %+v; want 1244 tokens, 11 of them candidates", res.Usage)
	}

	// Events: the coordinator's observer sees every agent's run, each
	// event marked with its agent and the call it serves.
	starts := map[string][]*agent.Event{}
	for _, e := range log.of(agent.EventRunStart) {
		starts[e.Agent] = append(starts[e.Agent], e)
	}
	if n := map[string]int{"coordinator": len(starts["coordinator"]), "researcher": len(starts["researcher"]),
		"fact_checker": len(starts["fact_checker"]), "writer": len(starts["writer"])}; !maps.Equal(n, map[string]int{"coordinator": 1, "researcher": 2, "fact_checker": 2, "writer": 1}) {
		t.Fatalf("runs started per agent = %v", n)
	}
	if starts["coordinator"][0].Parent != nil {
		t.Errorf("the coordinator's run has a Parent")
	}
	var cities []string
	for _, e := range starts["researcher"] {
		p := e.Parent
		if p == nil || p.Kind != agent.EventToolCall || p.Agent != "coordinator" || p.Call.Name != "researcher" || p.Parent != nil {
			t.Fatalf("researcher run's Parent = %+v; want the coordinator's researcher call", p)
		}
		cities = append(cities, fmt.Sprint(p.Call.Args["request"]))
	}
	slices.Sort(cities)
	if !cmp.Equal(cities, []string{"Paris", "Tokyo"}) {
		t.Errorf("researcher runs serve calls for %v; want Paris and Tokyo", cities)
	}
	for _, e := range starts["fact_checker"] {
		p := e.Parent
		if p == nil || p.Agent != "researcher" || p.Call.Name != "fact_checker" || p.Parent == nil || p.Parent.Agent != "coordinator" {
			t.Fatalf("fact checker run's Parent = %+v; want a researcher's call, itself under the coordinator", p)
		}
	}
	// Every event of a sub-agent's run is marked like its RunStart, and
	// each run's events end with its EventDone.
	byRun := map[*agent.Event][]agent.EventKind{}
	log.mu.Lock()
	events := slices.Clone(log.events)
	log.mu.Unlock()
	for _, e := range events {
		if e.Agent != "coordinator" {
			byRun[e.Parent] = append(byRun[e.Parent], e.Kind)
		}
	}
	if len(byRun) != 5 {
		t.Errorf("sub-agent runs seen = %d; want 5", len(byRun))
	}
	for p, kinds := range byRun {
		if kinds[0] != agent.EventRunStart || kinds[len(kinds)-1] != agent.EventDone {
			t.Errorf("run serving %v: events %v; want RunStart first and Done last", p.Call.Args, kinds)
		}
	}
	for _, e := range log.of(agent.EventDone) {
		if e.Agent == "researcher" && (e.Result.Usage.TotalTokens != 22 || e.Result.Agents["fact_checker"].TotalTokens != 2) {
			t.Errorf("researcher run Usage %+v, Agents %v; want 22 tokens, 2 of them the fact checker's", e.Result.Usage, e.Result.Agents)
		}
	}
}

func TestAsToolFailureIsAnErrorResult(t *testing.T) {
	srv := newServer(t)
	tm := newTeam(srv)
	tm.add("researcher", 0, func(*fake.Request) *fake.Reply {
		return fake.Error(403, "Permission denied on the researcher's project.")
	})
	tm.add("coordinator", 0, func(req *fake.Request) *fake.Reply {
		if rs := answers(req); len(rs) > 0 {
			return fake.Text(fmt.Sprint("The researcher failed: ", rs[0].Response["error"]))
		}
		return fake.Calls(fake.Call("researcher", map[string]any{"request": "anything"}))
	})
	researcher := member(t, srv, "researcher", nil)
	coordinator := member(t, srv, "coordinator", toolset.MustNew(mustAsTool(t, researcher, "researcher")))
	res, err := coordinator.Run(context.Background(), user("Go."))
	if err != nil {
		t.Fatalf("Run() = %v; want the coordinator to go on", err)
	}
	if !strings.Contains(res.Text, "agent researcher failed: agent: model call for turn 0 failed") || !strings.Contains(res.Text, "Permission denied") {
		t.Errorf("Text = %q; want the researcher's failure as the coordinator's model read it", res.Text)
	}
	if r := res.Turns[0].Results[0]; !r.IsError {
		t.Errorf("the researcher call's result = %+v; want an error result", r)
	}
}

// TestAsToolCancellation cancels the coordinator's run while a sub-agent's
// tool is running, and checks that the cancellation reaches that tool.
func TestAsToolCancellation(t *testing.T) {
	t.Run("context", func(t *testing.T) {
		if !asToolCancellation(t, "context", 0) {
			t.Fatal("the run ended before the sub-agent's tool started")
		}
	})
	t.Run("tool timeout", func(t *testing.T) {
		// The coordinator's ToolTimeout runs from the start of its call:
		// it must not run out before the sub-agent's model call has
		// returned and its tool has started, which on a loaded machine
		// can take longer than the timeout. Then it is tried again, with a
		// longer one.
		for timeout := 50 * time.Millisecond; !asToolCancellation(t, "tool timeout", timeout); timeout *= 2 {
			if timeout > 20*time.Second {
				t.Fatalf("the ToolTimeout of %v ran out before the sub-agent's tool started", timeout)
			}
			t.Logf("the ToolTimeout of %v ran out before the sub-agent's tool started; trying a longer one", timeout)
		}
	})
}

// asToolCancellation runs a coordinator whose sub-agent's tool waits for
// its context, and stops the coordinator's run by how: its context, or its
// ToolTimeout of timeout. It reports false when the run ended before the
// tool started, which only the timeout can do.
func asToolCancellation(t *testing.T, how string, timeout time.Duration) bool {
	srv := newServer(t)
	tm := newTeam(srv)
	started, stopped := make(chan struct{}), make(chan error, 1)
	slow := toolset.MustFunc("slow", "Takes its time", func(ctx context.Context, _ struct{}) (string, error) {
		close(started)
		<-ctx.Done()
		stopped <- context.Cause(ctx)
		return "", ctx.Err()
	})
	tm.add("worker", 0, func(*fake.Request) *fake.Reply { return fake.Calls(fake.Call("slow", nil)) })
	tm.add("coordinator", 0, func(req *fake.Request) *fake.Reply {
		if rs := answers(req); len(rs) > 0 {
			return fake.Text(fmt.Sprint(rs[0].Response["error"]))
		}
		return fake.Calls(fake.Call("worker", map[string]any{"request": "work"}))
	})
	worker := member(t, srv, "worker", toolset.MustNew(slow))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	coordinator := member(t, srv, "coordinator", toolset.MustNew(mustAsTool(t, worker, "worker")), func(c *agent.Config) {
		c.ToolTimeout = timeout
	})
	done := make(chan struct{})
	var res *agent.Result
	var err error
	go func() {
		defer close(done)
		res, err = coordinator.Run(ctx, user("Work."))
	}()
	select {
	case <-started:
	case <-done:
		return false
	}
	if how == "context" {
		cancel()
	}
	select {
	case cause := <-stopped:
		if how == "tool timeout" && !errors.Is(cause, agent.ErrToolTimeout) {
			t.Errorf("the sub-agent's tool stopped with %v; want the coordinator's ToolTimeout", cause)
		}
	case <-time.After(hangGuard):
		t.Fatal("the sub-agent's tool was never cancelled")
	}
	<-done
	switch how {
	case "context":
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run() = %v; want context.Canceled", err)
		}
	case "tool timeout":
		if err != nil || !strings.Contains(res.Text, "timed out") {
			t.Errorf("Run() = %q, %v; want the coordinator to read the timeout", res.Text, err)
		}
	}
	return true
}

// TestAsToolDepth gives an agent a tool that runs the agent itself: the
// chain stops at MaxAgentDepth with an error result.
func TestAsToolDepth(t *testing.T) {
	srv := newServer(t)
	tm := newTeam(srv)
	var depthErrors []string
	var mu sync.Mutex
	tm.add("recursive", 0, func(req *fake.Request) *fake.Reply {
		if rs := answers(req); len(rs) > 0 {
			if e, ok := rs[0].Response["error"]; ok {
				mu.Lock()
				depthErrors = append(depthErrors, fmt.Sprint(e))
				mu.Unlock()
			}
			return fake.Text("unwound")
		}
		return fake.Calls(fake.Call("recurse", map[string]any{"request": "again"}))
	})
	var self *toolset.Tool
	proxy := toolset.MustDefine(toolset.Tool{Name: "recurse", Description: "Runs this agent again",
		InputSchema: nil, Run: func(ctx context.Context, args map[string]any) (any, error) {
			r := self.Execute(ctx, args)
			if r.IsError {
				return nil, r.Err
			}
			return r.Output, nil
		}})
	log := &eventLog{}
	a := member(t, srv, "recursive", toolset.MustNew(proxy), func(c *agent.Config) { c.Observer = log })
	var err error
	if self, err = agent.AsTool(a, "recursive", "Runs the recursive agent"); err != nil {
		t.Fatal(err)
	}
	res, err := a.Run(context.Background(), user("Go."))
	if err != nil || res.Text != "unwound" {
		t.Fatalf("Run() = %q, %v", res.Text, err)
	}
	if n := len(log.of(agent.EventRunStart)); n != agent.MaxAgentDepth+1 {
		t.Errorf("%d runs; want the top run and %d nested", n, agent.MaxAgentDepth)
	}
	if len(depthErrors) != 1 || !strings.Contains(depthErrors[0], "at most 5 are allowed") {
		t.Errorf("errors read by the models = %q; want one depth error", depthErrors)
	}
}

// TestAsToolObserverOnce gives the coordinator and the sub-agent the same
// observer: it sees each event once.
func TestAsToolObserverOnce(t *testing.T) {
	srv := newServer(t)
	tm := newTeam(srv)
	tm.add("helper", 0, func(*fake.Request) *fake.Reply { return fake.Text("helped") })
	tm.add("coordinator", 0, func(req *fake.Request) *fake.Reply {
		if len(answers(req)) > 0 {
			return fake.Text("done")
		}
		return fake.Calls(fake.Call("helper", map[string]any{"request": "help"}))
	})
	log := &eventLog{}
	helper := member(t, srv, "helper", nil, func(c *agent.Config) { c.Observer = log })
	coordinator := member(t, srv, "coordinator", toolset.MustNew(mustAsTool(t, helper, "helper")), func(c *agent.Config) { c.Observer = log })
	if _, err := coordinator.Run(context.Background(), user("Go.")); err != nil {
		t.Fatal(err)
	}
	var helperStarts int
	for _, e := range log.of(agent.EventRunStart) {
		if e.Agent == "helper" {
			helperStarts++
		}
	}
	if helperStarts != 1 {
		t.Errorf("the shared observer saw the helper's run start %d times; want once", helperStarts)
	}
	// Run on its own, the helper reports with its own name and no parent.
	log2 := &eventLog{}
	if _, err := helper.With(agent.Overrides{Observer: log2}).Run(context.Background(), user("Help.")); err != nil {
		t.Fatal(err)
	}
	if e := log2.of(agent.EventDone)[0]; e.Agent != "helper" || e.Parent != nil || e.Result.Agents != nil {
		t.Errorf("standalone EventDone = agent %q, parent %v, Agents %v; want helper, none, nil", e.Agent, e.Parent, e.Result.Agents)
	}
}

type tripRequest struct {
	City string `json:"city"`
	Days int    `json:"days"`
}

type tripPlan struct {
	City  string   `json:"city"`
	Stops []string `json:"stops"`
}

func TestAsTypedTool(t *testing.T) {
	srv := newServer(t)
	tm := newTeam(srv)
	tm.add("planner", 0, func(req *fake.Request) *fake.Reply {
		// A typed run on gemini-3: the answer is JSON, as the schema says.
		if gc := req.GenerationConfig; gc == nil || gc.ResponseSchema == nil {
			return fake.Error(400, "test: the planner was not asked for JSON")
		}
		return fake.Text(`{"city":"Rome","stops":["Colosseum","Trevi"]}`)
	})
	tm.add("coordinator", 0, func(req *fake.Request) *fake.Reply {
		if rs := answers(req); len(rs) > 0 {
			return fake.Text(fmt.Sprint(rs[0].Response["result"]))
		}
		return fake.Calls(fake.Call("plan_trip", map[string]any{"city": "Rome", "days": 2.0}))
	})
	planner := member(t, srv, "planner", nil)
	tool, err := agent.AsTypedTool[tripRequest, tripPlan](planner, "plan_trip", "Plans a trip")
	if err != nil {
		t.Fatal(err)
	}
	coordinator := member(t, srv, "coordinator", toolset.MustNew(tool))
	res, err := coordinator.Run(context.Background(), user("Plan two days in Rome."))
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Turns[0].Results[0].Output; !cmp.Equal(got, tripPlan{City: "Rome", Stops: []string{"Colosseum", "Trevi"}}) {
		t.Errorf("tool output = %#v; want the trip plan", got)
	}
	plannerReq := srv.Requests()[1]
	if got := textOf(plannerReq.Contents[0]); got != `{"city":"Rome","days":2}` {
		t.Errorf("the planner was asked %q; want the request as JSON", got)
	}
	if _, err := agent.AsTypedTool[tripRequest, chan int](planner, "bad", "d"); err == nil {
		t.Error("AsTypedTool with an Out that has no schema = nil error")
	}
	if _, err := agent.AsTool(nil, "x", "d"); err == nil {
		t.Error("AsTool(nil) = nil error")
	}
	if _, err := agent.AsTool(planner, "bad name", "d"); !errors.Is(err, toolset.ErrInvalidTool) {
		t.Errorf("AsTool with an invalid name = %v; want ErrInvalidTool", err)
	}
}
