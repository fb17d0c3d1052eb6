package session_test

import (
	"context"
	"fmt"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// Two runs on one stored conversation: the second one sees the first. The
// fake server stands in for Gemini; sqlitestore.Open gives a store that
// survives restarts.
func ExampleRun() {
	srv := fake.NewServer()
	defer srv.Close()
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: "gemini-3-flash-preview",
		Tools: toolset.MustNew(weather)})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	store := session.NewMemory()

	srv.Enqueue(fake.Calls(fake.Call("get_weather", map[string]any{"city": "Oslo"})), fake.Text("Sunny in Oslo."))
	res, err := session.Run(ctx, a, store, "alice", genai.Text("Weather in Oslo?")...)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text)

	srv.Enqueue(fake.Text("You asked about Oslo."))
	res, err = session.Run(ctx, a, store, "alice", genai.Text("Which city did I ask about?")...)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text)

	infos, _ := store.List(ctx)
	fmt.Printf("%s: %d contents\n", infos[0].ID, infos[0].Len)
	// Output:
	// Sunny in Oslo.
	// You asked about Oslo.
	// alice: 6 contents
}
