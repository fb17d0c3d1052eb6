package temporalagent

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// team scripts srv for two agents told apart by their system instructions:
// a coordinator that asks a researcher (an agent run as a tool), each
// reply reporting tokens, 100 for the coordinator and 10 for the
// researcher.
func team(srv *fake.Server) {
	srv.SetReplyFunc(func(req *fake.Request) *fake.Reply {
		var reply *fake.Reply
		var tokens int32
		last := req.Contents[len(req.Contents)-1]
		switch si := req.SystemInstruction.Parts[0].Text; {
		case strings.Contains(si, "researcher"):
			reply, tokens = fake.Text("2.1 million"), 10
		case last.Parts[0].FunctionResponse != nil:
			reply, tokens = fake.Text(fmt.Sprint("Answer: ", last.Parts[0].FunctionResponse.Response["result"])), 100
		default:
			reply, tokens = fake.Calls(fake.Call("researcher", map[string]any{"request": "Population of Paris?"})), 100
		}
		reply.Response.UsageMetadata = &genai.GenerateContentResponseUsageMetadata{
			PromptTokenCount: tokens - 1, CandidatesTokenCount: 1, TotalTokenCount: tokens}
		return reply
	})
}

// coordinator returns the coordinator agent on srv, whose tool is the
// researcher agent.
func coordinator(t *testing.T, srv *fake.Server, obs agent.Observer) *agent.Agent {
	named := func(name string) func(*agent.Config) {
		return func(c *agent.Config) {
			c.Name = name
			c.GenerateConfig = &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText("You are the "+name+".", "")}
		}
	}
	researcher := newAgent(t, srv, nil, named("researcher"))
	tool, err := agent.AsTool(researcher, "researcher", "Asks the researcher.")
	if err != nil {
		t.Fatal(err)
	}
	return newAgent(t, srv, toolset.MustNew(tool), named("coordinator"), func(c *agent.Config) { c.Observer = obs })
}

// TestAgentAsToolSameAsRun: an agent run as a tool within a durable run
// sends what it sends under agent.Run, its usage counts in the run's
// Result as there, and its events reach the worker's Observer linked to
// the call that ran it.
func TestAgentAsToolSameAsRun(t *testing.T) {
	direct, durable := newServer(t), newServer(t)
	team(direct)
	team(durable)
	want, err := coordinator(t, direct, nil).Run(context.Background(), user("How many people live in Paris?"))
	if err != nil {
		t.Fatalf("agent.Run: %v", err)
	}
	log := &eventLog{}
	env := newEnv(t, Agent{Name: "coordinator", Agent: coordinator(t, durable, log)})
	got, err := execute(env, "coordinator", user("How many people live in Paris?"))
	if err != nil {
		t.Fatalf("durable run: %v", err)
	}
	sameRequests(t, durable, direct, 3)
	if got.Text != want.Text || got.Usage != want.Usage || !cmp.Equal(got.Agents, want.Agents) {
		t.Errorf("durable: %q, usage %+v, agents %+v\n    Run: %q, usage %+v, agents %+v", got.Text, got.Usage, got.Agents, want.Text, want.Usage, want.Agents)
	}
	if got.Usage.TotalTokens != 210 || got.Agents["researcher"].TotalTokens != 10 {
		t.Errorf("usage %d tokens, the researcher's %d; want 210 and 10", got.Usage.TotalTokens, got.Agents["researcher"].TotalTokens)
	}
	linked := false
	for _, e := range log.all() {
		if e.Agent == "researcher" && e.Kind == agent.EventModelRequest {
			linked = e.Parent != nil && e.Parent.Call != nil && e.Parent.Call.Name == "researcher" && e.Parent.Agent == "coordinator"
		}
	}
	if !linked {
		t.Errorf("the researcher's model request did not reach the Observer linked to the coordinator's call")
	}
}
