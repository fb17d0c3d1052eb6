package main

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/geminitest"
	"github.com/toolnexus/toolnexus-go/memory"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// userKey names the demo's user on the contexts of its runs.
type userKey struct{}

func userOf(ctx context.Context) string { u, _ := ctx.Value(userKey{}).(string); return u }

// demo has a user tell the agent something in one conversation and ask
// about it in another.
func demo(ctx context.Context, w io.Writer, client *genai.Client, model string, cfg memory.Config) error {
	var given []memory.Result
	cfg.Observer = memory.ObserverFunc(func(_ context.Context, e *memory.Event) {
		if e.Kind == memory.EventSearch {
			given = e.Results
		}
	})
	svc, err := memory.New(cfg)
	if err != nil {
		return err
	}
	defer svc.Close(ctx)
	search, err := svc.Tool(memory.ToolOptions{User: userOf})
	if err != nil {
		return err
	}
	pre := &memory.Preload{Service: svc, User: userOf}
	a, err := agent.New(agent.Config{Models: client.Models, Model: model, Tools: toolset.MustNew(search), PrepareHistory: pre.Prepare,
		GenerateConfig: &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText(
			"You are a helpful assistant with a memory of earlier conversations. Be brief.", genai.RoleUser)}})
	if err != nil {
		return err
	}
	threads := session.NewMemory()
	ctx = context.WithValue(ctx, userKey{}, "alice")
	for _, turn := range []struct{ thread, text string }{
		{"monday", "I'm allergic to peanuts, and I'm flying to Lisbon on Friday."},
		{"friday", "What snack should I pack for Lisbon?"},
	} {
		given = nil
		before, _ := threads.Load(ctx, turn.thread) // nothing, for a new thread
		fmt.Fprintf(w, "thread %q, alice: %s\n", turn.thread, turn.text)
		res, err := session.Run(ctx, a, threads, turn.thread, genai.NewContentFromText(turn.text, genai.RoleUser))
		if err != nil {
			return err
		}
		if len(given) > 0 {
			fmt.Fprintln(w, "  memories given to the model:")
			for _, m := range given {
				fmt.Fprintf(w, "    - %s, %s, thread %q: %s\n", m.Time.Format("2 Jan 2006"), m.Author, m.Thread, m.Text)
			}
		}
		fmt.Fprintf(w, "  agent: %s\n", strings.TrimSpace(res.Text))
		// What agentserver's Config.Remember does after each saved run.
		stored, err := threads.Load(ctx, turn.thread)
		if err != nil {
			return err
		}
		svc.RememberRun(ctx, "alice", turn.thread, stored, len(before))
	}
	return nil
}

var recalled = regexp.MustCompile(`(?m)^- [^:]*: (.+)$`)

// offlineModel is the demo's model without a key: it answers from the
// memories it was given, as a model would.
func offlineModel(req *geminitest.Request) *geminitest.Reply {
	var all strings.Builder
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			all.WriteString(p.Text + "\n")
		}
	}
	if strings.Contains(all.String(), memory.MemoriesPrefix) {
		if m := recalled.FindStringSubmatch(all.String()); m != nil {
			return geminitest.Text("You told me before: \"" + m[1] + "\" So, no peanuts: how about dried figs?")
		}
	}
	return geminitest.Text("Noted. Have a good trip!")
}
