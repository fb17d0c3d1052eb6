package openaiadapter_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/toolnexus/toolnexus-go/openaiadapter"
	"github.com/toolnexus/toolnexus-go/toolset"
)

type benchIn struct {
	City  string   `json:"city" jsonschema:"the city"`
	Days  int      `json:"days,omitempty"`
	Units string   `json:"units,omitempty"`
	Tags  []string `json:"tags,omitempty"`
}

func benchTool(name string) *toolset.Tool {
	return toolset.MustFunc(name, "Weather forecast", func(_ context.Context, in benchIn) (string, error) { return in.City, nil })
}

// A call through ExecuteChat (arguments decoded from JSON text, then
// Execute) against Execute on arguments already decoded, as Gemini's are.
func BenchmarkExecute(b *testing.B) {
	tool := benchTool("forecast")
	set := toolset.MustNew(tool)
	call := chatCall("forecast", `{"city":"Paris","days":3,"tags":["a","b"]}`)
	ctx := context.Background()
	b.Run("ExecuteChat", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if r := openaiadapter.ExecuteChat(ctx, set, call); r.IsError {
				b.Fatal(r.Output)
			}
		}
	})
	b.Run("StrictExecuteChat", func(b *testing.B) {
		strict := openaiadapter.Options{Strict: true}
		nulls := chatCall("forecast", `{"city":"Paris","days":3,"units":null,"tags":["a","b"]}`)
		b.ReportAllocs()
		for b.Loop() {
			if r := strict.ExecuteChat(ctx, set, nulls); r.IsError {
				b.Fatal(r.Output)
			}
		}
	})
	b.Run("toolset.Execute", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			args := map[string]any{"city": "Paris", "days": 3.0, "tags": []any{"a", "b"}}
			if r := tool.Execute(ctx, args); r.IsError {
				b.Fatal(r.Output)
			}
		}
	})
}

// Declaring ten tools.
func BenchmarkChatTools(b *testing.B) {
	var tools []*toolset.Tool
	for i := range 10 {
		tools = append(tools, benchTool(fmt.Sprintf("t%d", i)))
	}
	for _, strict := range []bool{false, true} {
		b.Run(fmt.Sprintf("strict=%v", strict), func(b *testing.B) {
			o := openaiadapter.Options{Strict: strict}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := o.ChatTools(tools...); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
