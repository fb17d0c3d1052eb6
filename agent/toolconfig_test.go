package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

func forced(mode genai.FunctionCallingConfigMode, names ...string) *genai.GenerateContentConfig {
	return &genai.GenerateContentConfig{ToolConfig: &genai.ToolConfig{
		FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: mode, AllowedFunctionNames: names},
		RetrievalConfig:       &genai.RetrievalConfig{LanguageCode: "fr"},
	}}
}

// A forcing mode applies to the first model call of a run only: a model
// forced to call a tool on every turn could never answer. Before, mode ANY
// made 10 model calls and 10 tool runs, then ErrMaxTurns.
func TestForcingModeFirstCallOnly(t *testing.T) {
	for _, tc := range []struct {
		name      string
		config    *genai.GenerateContentConfig
		every     bool
		wantLater genai.FunctionCallingConfigMode
	}{
		{"ANY", forced(genai.FunctionCallingConfigModeAny), false, genai.FunctionCallingConfigModeAuto},
		{"ANY with names", forced(genai.FunctionCallingConfigModeAny, "get_weather"), false, genai.FunctionCallingConfigModeAuto},
		{"ANY every turn", forced(genai.FunctionCallingConfigModeAny), true, genai.FunctionCallingConfigModeAny},
		{"VALIDATED is not forcing", forced(genai.FunctionCallingConfigModeValidated), false, genai.FunctionCallingConfigModeValidated},
	} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tc.name, stream), func(t *testing.T) {
				srv := newServer(t)
				w := &weatherTool{}
				a := newAgent(t, srv, toolset.MustNew(w.tool()), func(c *agent.Config) {
					c.GenerateConfig = tc.config
					c.ForceEveryTurn = tc.every
				})
				srv.Enqueue(fake.Calls(cities(1)...), fake.Calls(cities(1)...), fake.Text("done"))
				if _, err := runOrStream(a, stream, user("go")); err != nil {
					t.Fatal(err)
				}
				reqs := srv.Requests()
				first := reqs[0].ToolConfig.FunctionCallingConfig
				if first.Mode != tc.config.ToolConfig.FunctionCallingConfig.Mode || len(first.AllowedFunctionNames) != len(tc.config.ToolConfig.FunctionCallingConfig.AllowedFunctionNames) {
					t.Errorf("first call: %+v, want the config as given", first)
				}
				for _, req := range reqs[1:] {
					fc := req.ToolConfig.FunctionCallingConfig
					if fc.Mode != tc.wantLater || (tc.wantLater == genai.FunctionCallingConfigModeAuto && fc.AllowedFunctionNames != nil) {
						t.Errorf("call %d: %+v, want mode %s", req.Seq, fc, tc.wantLater)
					}
					if req.ToolConfig.RetrievalConfig == nil || req.ToolConfig.RetrievalConfig.LanguageCode != "fr" {
						t.Errorf("call %d lost the retrieval config: %+v", req.Seq, req.ToolConfig)
					}
				}
			})
		}
	}
	// The caller's config is never modified.
	cfg := forced(genai.FunctionCallingConfigModeAny)
	srv := newServer(t)
	newAgent(t, srv, toolset.MustNew((&weatherTool{}).tool()), func(c *agent.Config) { c.GenerateConfig = cfg })
	if cfg.ToolConfig.FunctionCallingConfig.Mode != genai.FunctionCallingConfigModeAny {
		t.Error("New modified the caller's tool config")
	}
}

// Without declarations only the function calling config goes, which the
// API refuses without them; the rest of the tool config is sent.
func TestNoDeclarationsKeepsTheRestOfToolConfig(t *testing.T) {
	srv := newServer(t)
	a := newAgent(t, srv, nil, func(c *agent.Config) { c.GenerateConfig = forced(genai.FunctionCallingConfigModeAny) })
	srv.Enqueue(fake.Text("hi"))
	if _, err := a.Run(context.Background(), user("hi")); err != nil {
		t.Fatal(err)
	}
	tc := srv.LastRequest().ToolConfig
	if tc == nil || tc.FunctionCallingConfig != nil || tc.RetrievalConfig == nil || tc.RetrievalConfig.LanguageCode != "fr" {
		t.Errorf("tool config sent = %+v; want the retrieval config and no function calling config", tc)
	}
}

// Vertex can stream a call's arguments in pieces; the loop runs whole calls
// only, so the setting is refused with a clear error rather than turning
// one call into several unknown ones.
func TestStreamFunctionCallArgumentsRefused(t *testing.T) {
	srv := newServer(t)
	on := true
	_, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model, GenerateConfig: &genai.GenerateContentConfig{
		ToolConfig: &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{StreamFunctionCallArguments: &on}}}})
	if err == nil || !strings.Contains(err.Error(), "StreamFunctionCallArguments is not supported") {
		t.Errorf("New() error = %v, want StreamFunctionCallArguments refused", err)
	}
}
