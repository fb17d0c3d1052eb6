package agent_test

import (
	"context"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
)

// carrier is a Carrier that carries one value of its contexts, under its
// key.
type carrier struct {
	key   string
	panic bool
}

type carried struct{ key string }

func (c carrier) Observe(context.Context, *agent.Event) {}

func (c carrier) StartContext(ctx context.Context, e *agent.Event) context.Context {
	if e.Kind == agent.EventRunStart {
		return context.WithValue(ctx, carried{c.key}, "run of "+c.key)
	}
	return ctx
}

func (c carrier) Carry(ctx context.Context) map[string]string {
	if c.panic {
		panic("carry")
	}
	if v, ok := ctx.Value(carried{c.key}).(string); ok {
		return map[string]string{c.key: v}
	}
	return nil
}

func (c carrier) Resume(ctx context.Context, m map[string]string) context.Context {
	if c.panic {
		panic("resume")
	}
	if v, ok := m[c.key]; ok {
		return context.WithValue(ctx, carried{c.key}, v)
	}
	return ctx
}

// Steps.Carry and Steps.Resume carry what the agent's Observer keeps in a
// run's context, through Observers too, which carries each member that
// is a Carrier; an Observer that is no Carrier carries nothing, and a
// panic in one is recovered.
func TestStepsCarry(t *testing.T) {
	srv := fake.NewServer()
	defer srv.Close()
	newSteps := func(o agent.Observer) agent.Steps {
		a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: "gemini-3-flash-preview", Observer: o})
		if err != nil {
			t.Fatal(err)
		}
		return a.Steps()
	}
	s := newSteps(agent.Observers(carrier{key: "a"}, agent.ObserverFunc(func(context.Context, *agent.Event) {}), carrier{key: "b"}))
	ctx := s.StartContext(context.Background(), &agent.Event{Kind: agent.EventRunStart})
	m := s.Carry(ctx)
	if len(m) != 2 || m["a"] != "run of a" || m["b"] != "run of b" {
		t.Fatalf("Carry = %v, want both members' values", m)
	}
	elsewhere := s.Resume(context.Background(), m)
	if elsewhere.Value(carried{"a"}) != "run of a" || elsewhere.Value(carried{"b"}) != "run of b" {
		t.Errorf("Resume put back %v and %v", elsewhere.Value(carried{"a"}), elsewhere.Value(carried{"b"}))
	}
	if got := s.Carry(context.Background()); got != nil {
		t.Errorf("Carry of a context holding nothing = %v, want nil", got)
	}
	bg := context.Background()
	if s.Resume(bg, nil) != bg {
		t.Error("Resume of nothing did not return its context")
	}

	plain := newSteps(agent.ObserverFunc(func(context.Context, *agent.Event) {}))
	if got := plain.Carry(ctx); got != nil || plain.Resume(bg, m) != bg {
		t.Errorf("an Observer that is no Carrier carried %v", got)
	}
	broken := newSteps(carrier{key: "a", panic: true})
	if got := broken.Carry(ctx); got != nil || broken.Resume(bg, m) != bg {
		t.Errorf("a panicking Carrier carried %v", got)
	}
}
