package agent

import (
	"context"
	"testing"

	"github.com/toolnexus/toolnexus-go/toolset"
)

type benchAnswer struct {
	City  string  `json:"city"`
	TempC float64 `json:"temp_c"`
}

// BenchmarkTypedAgent is what a typed run adds before its first request:
// the derived agent, with the final-answer tool or the response schema.
func BenchmarkTypedAgent(b *testing.B) {
	tool := toolset.MustDefine(toolset.Tool{Name: "f", Run: func(context.Context, map[string]any) (any, error) { return nil, nil }})
	for _, model := range []string{"gemini-2.5-flash", "gemini-3-flash-preview"} {
		a, err := New(Config{Models: noModels{}, Model: model, Tools: toolset.MustNew(tool)})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(a.strategy().String(), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := typedAgent[benchAnswer](a); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
