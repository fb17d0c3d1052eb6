package agent_test

import (
	"context"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// Steps.Interceptor hands back the agent's own Interceptor, so that an
// override can delegate to it.
func TestStepsInterceptor(t *testing.T) {
	srv := newServer(t)
	plain := newAgent(t, srv, nil)
	if plain.Steps().Interceptor() != nil {
		t.Error("an agent without Intercept has an Interceptor")
	}
	deny := func(context.Context, *genai.FunctionCall) *toolset.Result { return agent.Deny("no") }
	a := newAgent(t, srv, nil, func(c *agent.Config) { c.Intercept = deny })
	got := a.Steps().Interceptor()
	if got == nil {
		t.Fatal("no Interceptor")
	}
	if res := got(context.Background(), &genai.FunctionCall{Name: "x"}); res == nil || !res.IsError || res.Output != "no" {
		t.Errorf("the Interceptor returned %+v", res)
	}
}
