package agentserver_test

import (
	"context"
	"iter"
	"log/slog"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// scripted is a model in the process: a turn of two calls, then an
// answer streamed in 40 pieces of 10 bytes (the headline conversation,
// its text streamed as Gemini streams it).
type scripted struct{}

func (scripted) GenerateContent(context.Context, string, []*genai.Content, *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	panic("the benchmark streams")
}

func (scripted) GenerateContentStream(_ context.Context, _ string, contents []*genai.Content, _ *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error] {
	resp := func(finish genai.FinishReason, parts ...*genai.Part) *genai.GenerateContentResponse {
		return &genai.GenerateContentResponse{Candidates: []*genai.Candidate{{Content: genai.NewContentFromParts(parts, genai.RoleModel), FinishReason: finish}},
			UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 20, CandidatesTokenCount: 5, TotalTokenCount: 25}}
	}
	return func(yield func(*genai.GenerateContentResponse, error) bool) {
		if last := contents[len(contents)-1]; last.Parts[0].FunctionResponse == nil {
			yield(resp(genai.FinishReasonStop, genai.NewPartFromFunctionCall("get_weather", map[string]any{"city": "Paris"}),
				genai.NewPartFromFunctionCall("get_weather", map[string]any{"city": "Tokyo"})), nil)
			return
		}
		for i := range 40 {
			finish := genai.FinishReasonUnspecified
			if i == 39 {
				finish = genai.FinishReasonStop
			}
			if !yield(resp(finish, genai.NewPartFromText("Sunny in P")), nil) {
				return
			}
		}
	}
}

// What a run that is over holds while the server keeps it (for
// KeepFinished), once its response has read it: its log cut to its end,
// or kept (Request.KeepLog), its text joined. held-B/run is the live heap
// the runs add, per run, the thread's stored history included.
func BenchmarkFinishedRunHeld(b *testing.B) {
	for _, keep := range []bool{false, true} {
		name := "cut"
		if keep {
			name = "kept"
		}
		b.Run(name, func(b *testing.B) {
			weather := toolset.MustFunc("get_weather", "Weather", func(_ context.Context, in cityIn) (string, error) { return "sunny in " + in.City, nil })
			a, err := agent.New(agent.Config{Models: scripted{}, Model: "m", Tools: toolset.MustNew(weather)})
			if err != nil {
				b.Fatal(err)
			}
			srv, err := agentserver.New(agentserver.Config{Agent: a, Store: session.NewMemory(), KeepFinished: time.Hour, Logger: slog.New(slog.DiscardHandler),
				MaxThreadsPerUser: -1}) // one user, a thread per run
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Close(context.Background())
			ctx := context.Background()
			var before, after runtime.MemStats
			runtime.GC()
			runtime.GC()
			runtime.ReadMemStats(&before)
			n := 0
			for b.Loop() {
				n++
				att, err := srv.Submit(ctx, "alice", agentserver.Request{Thread: "t" + strconv.Itoa(n),
					Message: genai.NewContentFromText("Weather in Paris and Tokyo?", genai.RoleUser), KeepLog: keep})
				if err != nil {
					b.Fatal(err)
				}
				for {
					if _, _, err := att.Cursor.Next(ctx, time.Minute); err != nil {
						break
					}
				}
				att.Cursor.Close()
			}
			runtime.GC()
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(n), "held-B/run")
		})
	}
}
