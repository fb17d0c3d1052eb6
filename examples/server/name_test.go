package main

import (
	"context"
	"github.com/toolnexus/toolnexus-go/examples/server/serverapp"
	"log/slog"
	"testing"
)

// The served agent has a name (agent.Config.Name), which its events,
// traces and a dev UI show: the one on its A2A card.
func TestAgentName(t *testing.T) {
	a, err := serverapp.New(context.Background(), serverapp.Options{}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	defer a.Server.Close(context.Background())
	if got := a.Server.Agent().Steps().Name(); got != serverapp.AgentName {
		t.Errorf("the agent's name: %q, want %q", got, serverapp.AgentName)
	}
}
