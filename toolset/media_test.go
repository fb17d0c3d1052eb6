package toolset_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/toolset"
)

func TestExecuteMedia(t *testing.T) {
	png := toolset.Media{MIMEType: "image/png", Data: []byte("\x89PNG")}
	wav := toolset.Media{MIMEType: "audio/wav", Data: []byte("RIFF")}
	for _, tc := range []struct {
		name string
		out  any
		want toolset.Result
	}{
		{"value", toolset.MediaOutput{Output: "a chart", Media: []toolset.Media{png, wav}},
			toolset.Result{Output: "a chart", Media: []toolset.Media{png, wav}}},
		{"pointer", &toolset.MediaOutput{Output: map[string]any{"n": 1.0}, Media: []toolset.Media{png}},
			toolset.Result{Output: map[string]any{"n": 1.0}, Media: []toolset.Media{png}}},
		{"media only", toolset.MediaOutput{Media: []toolset.Media{wav}},
			toolset.Result{Media: []toolset.Media{wav}}},
		{"by reference", toolset.MediaOutput{Media: []toolset.Media{{MIMEType: "image/png", URI: "artifact:chart.png?version=1", Name: "chart.png"}}},
			toolset.Result{Media: []toolset.Media{{MIMEType: "image/png", URI: "artifact:chart.png?version=1", Name: "chart.png"}}}},
		{"nil pointer", (*toolset.MediaOutput)(nil), toolset.Result{}},
		{"no media", "plain", toolset.Result{Output: "plain"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool := toolset.MustDefine(toolset.Tool{Name: "draw",
				Run: func(context.Context, map[string]any) (any, error) { return tc.out, nil }})
			got := tool.Execute(context.Background(), nil)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Execute() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExecuteInvalidMedia(t *testing.T) {
	for _, tc := range []struct {
		name    string
		out     toolset.MediaOutput
		wantMsg string
	}{
		{"no MIME type", toolset.MediaOutput{Media: []toolset.Media{{Data: []byte("x")}}},
			"tool draw failed: medium 1 of its output has no MIME type"},
		{"no data", toolset.MediaOutput{Media: []toolset.Media{{MIMEType: "image/png", Data: []byte("x")}, {MIMEType: "image/png"}}},
			"tool draw failed: medium 2 of its output is empty"},
		{"output not JSON", toolset.MediaOutput{Output: make(chan int)},
			"tool draw failed: its output cannot be encoded as JSON: json: unsupported type: chan int"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool := toolset.MustDefine(toolset.Tool{Name: "draw",
				Run: func(context.Context, map[string]any) (any, error) { return tc.out, nil }})
			r := tool.Execute(context.Background(), nil)
			if !r.IsError || r.Output != tc.wantMsg || r.Media != nil {
				t.Fatalf("Execute() = %+v; want an error result %q without media", r, tc.wantMsg)
			}
			if tc.name != "output not JSON" && !errors.Is(r.Err, toolset.ErrInvalidMedia) {
				t.Errorf("Err = %v; want it to wrap ErrInvalidMedia", r.Err)
			}
		})
	}
}
