package geminilive_test

import (
	"context"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/geminilive"
	"github.com/toolnexus/toolnexus-go/geminitest"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// benchTool is the tool both pipelines of BenchmarkToolTurn run.
func benchTool() *toolset.Tool {
	return toolset.MustFunc("lookup", "Looks a key up", func(_ context.Context, in struct {
		Key string `json:"key"`
	}) (string, error) {
		return "found " + in.Key, nil
	})
}

// BenchmarkToolTurn is one turn in which the model calls one tool and
// answers "Found.": through geminilive on an open session against the
// fake's Live websocket (Live), and through agent.Run against the fake's
// generateContent (Run), with the same tool, both over loopback and with
// the fake's work in the same process. BENCHMARKS.md ("Live against Run")
// reports the ratio of their callgrind instructions.
func BenchmarkToolTurn(b *testing.B) {
	call := func() *genai.FunctionCall { return geminitest.Call("lookup", map[string]any{"key": "milk"}) }
	b.Run("Live", func(b *testing.B) {
		srv := geminitest.NewServer() // no per-request log, unlike Start
		b.Cleanup(srv.Close)
		b.Cleanup(func() {
			if r := srv.LiveRejections(); len(r) > 0 {
				b.Errorf("the fake refused %d live messages, the first by rule %s", len(r), r[0].Rejection.Rule)
			}
		})
		srv.SetLiveReplyFunc(func(m *geminitest.LiveMessage) *geminitest.LiveReply {
			switch {
			case m.ToolResponse != nil:
				return geminitest.LiveText("Found.")
			case m.RealtimeInput != nil && m.RealtimeInput.Text != "":
				return geminitest.LiveCalls(call())
			}
			return nil
		})
		client, err := genai.NewClient(b.Context(), srv.LiveClientConfig())
		if err != nil {
			b.Fatal(err)
		}
		a, err := agent.New(agent.Config{Models: client.Models, Model: model, Tools: toolset.MustNew(benchTool())})
		if err != nil {
			b.Fatal(err)
		}
		s, err := geminilive.Connect(b.Context(), client, a, geminilive.Config{})
		if err != nil {
			b.Fatal(err)
		}
		defer func() {
			if err := s.Close(); err != nil {
				b.Error(err)
			}
			for range s.Events() { // drained until Close ends them
			}
		}()
		b.ReportAllocs()
		for b.Loop() {
			if err := s.SendText("look up milk"); err != nil {
				b.Fatal(err)
			}
			var said, result string
			for e, err := range s.Events() {
				if err != nil {
					b.Fatal(err)
				}
				switch e.Kind {
				case geminilive.EventText:
					said += e.Text
				case geminilive.EventToolResult:
					result, _ = e.Result.Output.(string)
				}
				if e.Kind == geminilive.EventTurnComplete {
					break
				}
			}
			if said != "Found." || result != "found milk" {
				b.Fatalf("said %q, the tool returned %q", said, result)
			}
		}
	})
	b.Run("Run", func(b *testing.B) {
		srv := geminitest.NewServer()
		b.Cleanup(srv.Close)
		b.Cleanup(func() {
			if r := srv.Rejections(); len(r) > 0 {
				b.Errorf("the fake refused %d requests, the first by rule %s", len(r), r[0].Rule)
			}
		})
		srv.SetReplyFunc(func(r *geminitest.Request) *geminitest.Reply {
			if len(r.FunctionResponses("lookup")) > 0 {
				return geminitest.Text("Found.")
			}
			return geminitest.Calls(call())
		})
		a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: "gemini-3-flash-preview", Tools: toolset.MustNew(benchTool())})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			res, err := a.Run(b.Context(), []*genai.Content{genai.NewContentFromText("look up milk", genai.RoleUser)})
			if err != nil {
				b.Fatal(err)
			}
			if res.Text != "Found." {
				b.Fatalf("said %q", res.Text)
			}
		}
	})
}
