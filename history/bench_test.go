package history_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/history"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// hundredTurns is a 100-turn conversation as a store returns it (maps, not
// structs): each turn a message, a signed call, a 1 KiB answer and a text
// answer, then a new message.
func hundredTurns() []*genai.Content {
	var cs []*genai.Content
	for i := range 100 {
		cs = append(cs, userText(fmt.Sprintf("What is the weather in city %d?", i)))
		cs = append(cs, step([]byte(strings.Repeat("s", 200)), func(string) any { return strings.Repeat("sunny ", 170) }, fmt.Sprint("city-", i))...)
		cs = append(cs, modelText(fmt.Sprintf("It is sunny in city %d.", i), []byte("end")))
	}
	return append(cs, userText("And tomorrow?"))
}

// What Prepare costs per model call on a 100-turn history (about 38,000
// estimated tokens): on a later call of a run, under the limit (the common
// case); on the first call of a run, under the limit (every content is
// estimated); and when it trims, to a tenth.
func BenchmarkPrepare(b *testing.B) {
	contents := hundredTurns()
	all := history.Estimate(contents...)
	for _, bc := range []struct {
		name   string
		tr     history.Trimmer
		prompt int
	}{
		{"later-call", history.Trimmer{MaxTokens: 2 * all}, all},
		{"first-call", history.Trimmer{MaxTokens: 2 * all}, 0},
		{"trim", history.Trimmer{MaxTokens: all / 10}, 0},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h := &agent.HistoryInfo{Contents: contents, Turn: 1, PromptTokens: bc.prompt, Model: model3}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.tr.Prepare(ctx, h); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// One model call on a 100-turn history through the whole loop, the real
// client and the fake, without a HistoryFunc, with a Trimmer under its
// limit, and with a Trimmer that trims to a tenth: what the policy adds to
// a model call, next to what the call itself costs here.
func BenchmarkRunOn100Turns(b *testing.B) {
	contents := hundredTurns()
	all := history.Estimate(contents...)
	for _, bc := range []struct {
		name    string
		prepare agent.HistoryFunc
	}{
		{"none", nil},
		{"trimmer-under-limit", history.Trimmer{MaxTokens: 2 * all}.Prepare},
		{"trimmer-trims", history.Trimmer{MaxTokens: all / 10}.Prepare},
	} {
		b.Run(bc.name, func(b *testing.B) {
			srv := fake.NewServer()
			defer srv.Close()
			srv.SetReplyFunc(func(*fake.Request) *fake.Reply { return fake.Text("Sunny.") })
			a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model3,
				Tools: toolset.MustNew(report), PrepareHistory: bc.prepare})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.Run(context.Background(), contents); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
