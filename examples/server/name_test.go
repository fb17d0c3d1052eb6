package main

import (
	"context"
	"log/slog"
	"testing"
)

// The served agent has a name (agent.Config.Name), which its events,
// traces and a dev UI show: the one on its A2A card.
func TestAgentName(t *testing.T) {
	a, err := newApp(context.Background(), options{}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	defer a.srv.Close(context.Background())
	if got := a.srv.Agent().Steps().Name(); got != agentName {
		t.Errorf("the agent's name: %q, want %q", got, agentName)
	}
}
