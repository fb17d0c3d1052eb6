package pgstore_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/internal/pgtest"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/session/pgstore"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

type cityIn struct {
	City string `json:"city"`
}

var weather = toolset.MustFunc("get_weather", "Current weather for a city", func(_ context.Context, in cityIn) (string, error) {
	return "sunny in " + in.City, nil
})

// A Gemini 3 conversation stopped in the middle of its function calls is
// saved to the database, the store is closed and opened again, and the run
// goes on from there: the fake checks that the first function call of
// every step of the current turn carries its thought signature, so the
// signatures must have come back from the database byte for byte, where
// they were.
func TestGemini3ConversationContinuesFromTheDatabase(t *testing.T) {
	srv := fake.NewServer()
	defer srv.Close()
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: "gemini-3-flash-preview",
		Tools: toolset.MustNew(weather), MaxTurns: 2})
	if err != nil {
		t.Fatal(err)
	}
	path := pgtest.Database(t)
	store, err := pgstore.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(
		fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"}), fake.Call("get_weather", map[string]any{"city": "Oslo"})),
		fake.Calls(fake.Call("get_weather", map[string]any{"city": "Rome"})),
	)
	res, err := session.Run(ctx, a, store, "trip", genai.Text("Weather in Paris, Oslo, then Rome?")...)
	if !errors.Is(err, agent.ErrMaxTurns) {
		t.Fatalf("Run() = %v; want ErrMaxTurns", err)
	}
	store.Close()

	store = open(t, path)
	stored, err := store.Load(ctx, "trip")
	if err != nil || len(stored) != len(res.History) {
		t.Fatalf("Load() = %d contents, %v; want %d", len(stored), err, len(res.History))
	}
	signatures := 0
	for i, c := range res.History {
		for j, p := range c.Parts {
			if got := stored[i].Parts[j].ThoughtSignature; !bytes.Equal(got, p.ThoughtSignature) {
				t.Errorf("content %d part %d: signature %x after the database, %x before", i, j, got, p.ThoughtSignature)
			}
			if len(p.ThoughtSignature) > 0 {
				signatures++
			}
		}
	}
	if signatures != 2 {
		t.Fatalf("%d signatures in the history; want one per step (2): this test proves nothing", signatures)
	}

	srv.Enqueue(fake.Text("Sunny everywhere."))
	res, err = session.Run(ctx, a, store, "trip")
	if err != nil || res.Text != "Sunny everywhere." {
		t.Fatalf("continuing from the database: %q, %v", res.Text, err)
	}
	if rej := srv.Rejections(); len(rej) != 0 {
		t.Fatalf("the fake refused: %s", rej[0].Err.Message)
	}

	// The control: without its signature, the same history is refused.
	stored[1].Parts[0].ThoughtSignature = nil
	_, err = a.Run(ctx, stored)
	if ae := (genai.APIError{}); !errors.As(err, &ae) || ae.Code != 400 {
		t.Errorf("a history without its signature = %v; want the fake's 400", err)
	}
}
