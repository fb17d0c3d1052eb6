package sqlitestore_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/session/sqlitestore"
	"google.golang.org/genai"
)

// turn returns one turn of a conversation as the loop stores it: the
// user's message, the model's signed function call, the tool's answer (1
// KiB) and the model's answer.
func turn(i int) []*genai.Content {
	id := fmt.Sprint("fc-", i)
	return []*genai.Content{
		genai.NewContentFromText(fmt.Sprintf("What is the weather in city %d?", i), genai.RoleUser),
		{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{ID: id, Name: "get_weather",
			Args: map[string]any{"city": fmt.Sprint("city-", i)}}, ThoughtSignature: []byte(strings.Repeat("s", 200))}}},
		{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: id, Name: "get_weather",
			Response: map[string]any{"result": strings.Repeat("sunny ", 170)}}}}},
		{Role: genai.RoleModel, Parts: []*genai.Part{{Text: fmt.Sprintf("It is sunny in city %d.", i), ThoughtSignature: []byte("end")}}},
	}
}

// stores are the stores the benchmarks compare.
func stores(b *testing.B) map[string]func(b *testing.B) session.Store {
	return map[string]func(b *testing.B) session.Store{
		"sqlite": func(b *testing.B) session.Store {
			s, err := sqlitestore.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			return s
		},
		"memory": func(*testing.B) session.Store { return session.NewMemory() },
	}
}

// a100 returns a store holding a 100-turn conversation "c".
func a100(b *testing.B, open func(*testing.B) session.Store) session.Store {
	s := open(b)
	for i := range 100 {
		if err := s.Append(ctx, "c", turn(i)); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// Appending one turn (4 contents, one transaction) to a 100-turn
// conversation: what session.Run adds after each run.
func BenchmarkAppendTurn(b *testing.B) {
	for _, name := range []string{"sqlite", "memory"} {
		b.Run(name, func(b *testing.B) {
			s := a100(b, stores(b)[name])
			next := turn(100)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if err := s.Append(ctx, "c", next); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Loading a 100-turn conversation (400 contents, about 170 KB of JSON):
// what session.Run does before each run.
func BenchmarkLoad100Turns(b *testing.B) {
	for _, name := range []string{"sqlite", "memory"} {
		b.Run(name, func(b *testing.B) {
			s := a100(b, stores(b)[name])
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				got, err := s.Load(ctx, "c")
				if err != nil || len(got) != 400 {
					b.Fatal(len(got), err)
				}
			}
		})
	}
}

// Appends from concurrent goroutines, each to its own conversation, to one
// file.
func BenchmarkAppendTurnParallel(b *testing.B) {
	s := stores(b)["sqlite"](b)
	next := turn(0)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		id := fmt.Sprintf("c-%p", pb)
		for pb.Next() {
			if err := s.Append(ctx, id, next); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A small journal entry: one step of a run, as agentserver writes it.
var step = []byte(`{"type":"text","text":"It is sunny in Paris, 21 degrees."}`)

// AppendRun of one small entry to the journal of the run in progress on
// a 100-turn conversation: what a served run writes at each step. The
// run is ended and begun again, untimed, every 100 steps.
func BenchmarkAppendRun(b *testing.B) {
	for _, name := range []string{"sqlite", "memory"} {
		b.Run(name, func(b *testing.B) {
			j := a100(b, stores(b)[name]).(session.Journaler)
			entries := [][]byte{step}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if i%100 == 0 {
					b.StopTimer()
					j.EndRun(ctx, "c", "run", session.Claim{}, nil)
					if err := j.BeginRun(ctx, "c", "run", session.Claim{}, nil); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				if err := j.AppendRun(ctx, "c", "run", session.Claim{}, entries); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// EndRun of a two-turn run (the user's message, a call, its result, the
// answer: 4 contents, whose 4 entries the journal holds) on a conversation
// of 100 turns or more: the journal dropped and the run appended, in one
// transaction. BeginRun is untimed; so is starting the conversation anew,
// every 10,000 runs, to keep it within a Memory's bound.
func BenchmarkEndRun(b *testing.B) {
	for _, name := range []string{"sqlite", "memory"} {
		b.Run(name, func(b *testing.B) {
			open := stores(b)[name]
			j := a100(b, open).(session.Journaler)
			contents, entries := run2()
			b.ReportAllocs()
			for i := 1; b.Loop(); i++ {
				b.StopTimer()
				if i%10_000 == 0 {
					j = a100(b, open).(session.Journaler)
				}
				if err := j.BeginRun(ctx, "c", "run", session.Claim{}, entries); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if err := j.EndRun(ctx, "c", "run", session.Claim{}, contents); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// run2 returns the contents of a two-turn run and the journal entries
// that hold them.
func run2() ([]*genai.Content, [][]byte) {
	contents := turn(100)
	entries := make([][]byte, len(contents))
	for i, c := range contents {
		entries[i], _ = json.Marshal(c)
	}
	return contents, entries
}
