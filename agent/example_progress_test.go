package agent_test

import (
	"context"
	"fmt"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// A long tool reports its progress; a Stream consumer keeps the latest
// report of each running call (what a progress bar shows) and sees the
// last one before the call's result, however many came between.
func ExampleEventToolProgress() {
	srv := fake.NewServer()
	defer srv.Close()
	srv.Enqueue(fake.Calls(fake.Call("index", map[string]any{"files": 1000})), fake.Text("Indexed 1000 files."))
	index := toolset.MustFunc("index", "Indexes files", func(ctx context.Context, in struct {
		Files int `json:"files"`
	}) (string, error) {
		for i := 1; i <= in.Files; i++ {
			// … index file i …
			toolset.ReportProgress(ctx, float64(i), float64(in.Files), fmt.Sprintf("file %d of %d", i, in.Files))
		}
		return fmt.Sprint(in.Files, " files indexed"), nil
	})
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: "gemini-3-flash-preview", Tools: toolset.MustNew(index)})
	if err != nil {
		panic(err)
	}
	latest := map[int]*toolset.Progress{} // by the call's index in its turn
	for ev, err := range a.Stream(context.Background(), genai.Text("Index my files.")) {
		if err != nil {
			panic(err)
		}
		switch ev.Kind {
		case agent.EventToolProgress:
			latest[ev.Index] = ev.Progress // redraw the call's bar here
		case agent.EventToolResult:
			p := latest[ev.Index]
			f, _ := p.Fraction()
			fmt.Printf("%s: %.0f%% (%s), then %v\n", ev.Call.Name, 100*f, p.Message, ev.ToolResult.Output)
		case agent.EventText:
			fmt.Print(ev.Text)
		}
	}
	fmt.Println()
	// Output:
	// index: 100% (file 1000 of 1000), then 1000 files indexed
	// Indexed 1000 files.
}
