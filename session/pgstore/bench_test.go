package pgstore_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/internal/pgtest"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/session/pgstore"
	"google.golang.org/genai"
)

// turn returns one turn of a conversation as the loop stores it: the
// user's message, the model's signed function call, the tool's answer (1
// KiB) and the model's answer (as sqlitestore's benchmarks do).
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

// a100 returns a store, on a database of its own, holding a 100-turn
// conversation "c".
func a100(b *testing.B) *pgstore.Store {
	s, err := pgstore.Open(ctx, pgtest.Database(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
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
	s := a100(b)
	next := turn(100)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Append(ctx, "c", next); err != nil {
			b.Fatal(err)
		}
	}
}

// Loading a 100-turn conversation (400 contents, about 170 KB of JSON).
func BenchmarkLoad100Turns(b *testing.B) {
	s := a100(b)
	b.ReportAllocs()
	for b.Loop() {
		got, err := s.Load(ctx, "c")
		if err != nil || len(got) != 400 {
			b.Fatal(len(got), err)
		}
	}
}

// Appends from concurrent goroutines, each to its own conversation.
func BenchmarkAppendTurnParallel(b *testing.B) {
	s := a100(b)
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

// A page of 20 of one owner's 100 conversations, among 10,000.
func BenchmarkListPage(b *testing.B) {
	u := pgtest.Database(b)
	s, err := pgstore.Open(ctx, u)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	pgtest.Exec(b, u, `INSERT INTO toolnexus_conversations (id, created, updated, length, bytes)
		SELECT 'user' || (i % 100) || '/' || i, clock_timestamp(), clock_timestamp(), 1, 10 FROM generate_series(1, 10000) i`,
		"ANALYZE toolnexus_conversations")
	b.ReportAllocs()
	for b.Loop() {
		page, err := s.ListPage(ctx, session.ListOptions{Prefix: "user7/", Limit: 20})
		if err != nil || len(page.Infos) != 20 {
			b.Fatal(len(page.Infos), err)
		}
	}
}

// AppendRun of one small entry (one step of a run, as agentserver writes
// it) to the journal of the run in progress on a 100-turn conversation.
// The run is ended and begun again, untimed, every 100 steps.
func BenchmarkAppendRun(b *testing.B) {
	s := a100(b)
	entries := [][]byte{[]byte(`{"type":"text","text":"It is sunny in Paris, 21 degrees."}`)}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%100 == 0 {
			b.StopTimer()
			s.EndRun(ctx, "c", "run", session.Claim{}, nil)
			if err := s.BeginRun(ctx, "c", "run", session.Claim{}, nil); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		if err := s.AppendRun(ctx, "c", "run", session.Claim{}, entries); err != nil {
			b.Fatal(err)
		}
	}
}

// EndRun of a two-turn run (4 contents, whose 4 entries the journal
// holds) on a 100-turn conversation: the journal dropped and the run
// appended, in one transaction. BeginRun is untimed.
func BenchmarkEndRun(b *testing.B) {
	s := a100(b)
	contents := turn(100)
	entries := make([][]byte, len(contents))
	for i, c := range contents {
		entries[i], _ = json.Marshal(c)
	}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		if err := s.BeginRun(ctx, "c", "run", session.Claim{}, entries); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := s.EndRun(ctx, "c", "run", session.Claim{}, contents); err != nil {
			b.Fatal(err)
		}
	}
}
