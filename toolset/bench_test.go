package toolset_test

import (
	"context"
	"testing"

	"github.com/toolnexus/toolnexus-go/toolset"
)

type benchIn struct {
	City  string   `json:"city"`
	Days  int      `json:"days,omitempty"`
	Units string   `json:"units,omitempty"`
	Tags  []string `json:"tags,omitempty"`
}

var benchTool = toolset.MustFunc("get_weather", "Current weather for a city",
	func(_ context.Context, in benchIn) (string, error) { return in.City, nil })

// benchArgs are arguments as Gemini's client decodes them.
var benchArgs = map[string]any{"city": "Paris", "days": 3.0, "units": "C", "tags": []any{"rain", "wind"}}

// BenchmarkExecuteFunc is one call of a typed tool: validation, decoding
// into the struct, the call and the result, with a context that cannot be
// cancelled (Run stays on the caller's goroutine).
func BenchmarkExecuteFunc(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if r := benchTool.Execute(ctx, benchArgs); r.IsError {
			b.Fatal(r.Output)
		}
	}
}

// BenchmarkExecuteFuncCancellable is the same call with a context that can
// be cancelled, as the agent loop gives: Run gets its own goroutine.
func BenchmarkExecuteFuncCancellable(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.ReportAllocs()
	for b.Loop() {
		if r := benchTool.Execute(ctx, benchArgs); r.IsError {
			b.Fatal(r.Output)
		}
	}
}

// BenchmarkExecuteDefine is a hand-written tool on the same schema shape:
// validation and the call, no decoding.
func BenchmarkExecuteDefine(b *testing.B) {
	tool := toolset.MustDefine(toolset.Tool{Name: "get_weather", InputSchema: benchTool.Schema(),
		Run: func(_ context.Context, args map[string]any) (any, error) { return args["city"], nil }})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if r := tool.Execute(ctx, benchArgs); r.IsError {
			b.Fatal(r.Output)
		}
	}
}

// TestExecuteAllocations pins the hot path's allocations: none for a
// hand-written tool, and for a typed tool only its In value, Tags' array
// and the boxed output, whether the context can be cancelled or not.
func TestExecuteAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("-race: sync.Pool drops calls at random")
	}
	define := toolset.MustDefine(toolset.Tool{Name: "get_weather", InputSchema: benchTool.Schema(),
		Run: func(_ context.Context, args map[string]any) (any, error) { return args["city"], nil }})
	cancellable, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, tc := range []struct {
		name string
		tool *toolset.Tool
		ctx  context.Context
		max  float64
	}{
		{"Define", define, context.Background(), 0},
		{"Define, cancellable", define, cancellable, 0},
		{"Func", benchTool, context.Background(), 3},
		{"Func, cancellable", benchTool, cancellable, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := testing.AllocsPerRun(200, func() {
				if r := tc.tool.Execute(tc.ctx, benchArgs); r.IsError {
					t.Fatal(r.Output)
				}
			})
			if n > tc.max {
				t.Errorf("Execute allocates %v times per call, want at most %v", n, tc.max)
			}
		})
	}
}
