package toolset_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// weatherSchema is the seed's get_weather schema, with a few more keywords.
func weatherSchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"city":  {Type: "string"},
			"days":  {Type: "integer", Minimum: ptr(1.0)},
			"units": {Type: "string", Enum: []any{"C", "F"}, Default: []byte(`"C"`)},
			"tags":  {Type: "array", Items: &jsonschema.Schema{Type: "string"}},
			"where": {Type: "object", Properties: map[string]*jsonschema.Schema{"lat": {Type: "number"}}},
		},
		Required:             []string{"city"},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}
}

func ptr[T any](v T) *T { return &v }

func TestExecuteFailures(t *testing.T) {
	echoArgs := func(_ context.Context, a map[string]any) (any, error) { return a, nil }
	for _, tc := range []struct {
		name    string
		run     func(context.Context, map[string]any) (any, error)
		args    map[string]any
		ctx     func() context.Context
		wantMsg string // exact model-facing message
		wantErr error  // matched with errors.Is against Result.Err; nil: not checked
	}{
		{name: "wrong type", args: map[string]any{"city": 3.0},
			wantMsg: `invalid arguments for get_weather: argument "city": 3 has type "integer", want "string"`, wantErr: toolset.ErrInvalidArguments},
		{name: "fractional integer", args: map[string]any{"city": "Paris", "days": 2.5},
			wantMsg: `invalid arguments for get_weather: argument "days": 2.5 has type "number", want "integer"`, wantErr: toolset.ErrInvalidArguments},
		{name: "below minimum", args: map[string]any{"city": "Paris", "days": 0.0},
			wantMsg: `invalid arguments for get_weather: argument "days": minimum: 0 is less than 1`, wantErr: toolset.ErrInvalidArguments},
		{name: "missing required", args: map[string]any{"days": 2.0},
			wantMsg: `invalid arguments for get_weather: required: missing properties: ["city"]`, wantErr: toolset.ErrInvalidArguments},
		{name: "nil args lack required", args: nil,
			wantMsg: `invalid arguments for get_weather: required: missing properties: ["city"]`, wantErr: toolset.ErrInvalidArguments},
		{name: "extra property", args: map[string]any{"city": "Paris", "country": "FR"},
			wantMsg: `invalid arguments for get_weather: unexpected additional properties ["country"]`, wantErr: toolset.ErrInvalidArguments},
		{name: "enum", args: map[string]any{"city": "Paris", "units": "K"},
			wantMsg: `invalid arguments for get_weather: argument "units": enum: K does not equal any of: [C F]`, wantErr: toolset.ErrInvalidArguments},
		{name: "array item", args: map[string]any{"city": "Paris", "tags": []any{"a", 1.0}},
			wantMsg: `invalid arguments for get_weather: argument "tags[]": 1 has type "integer", want "string"`, wantErr: toolset.ErrInvalidArguments},
		{name: "nested property", args: map[string]any{"city": "Paris", "where": map[string]any{"lat": "north"}},
			wantMsg: `invalid arguments for get_weather: argument "where.lat": north has type "string", want "number"`, wantErr: toolset.ErrInvalidArguments},
		{name: "run error", args: map[string]any{"city": "Atlantis"},
			run:     func(context.Context, map[string]any) (any, error) { return nil, errors.New("unknown city: Atlantis") },
			wantMsg: "unknown city: Atlantis"},
		{name: "panic", args: map[string]any{"city": "Paris"},
			run:     func(context.Context, map[string]any) (any, error) { panic("boom") },
			wantMsg: "tool get_weather failed: it panicked: boom"},
		{name: "runtime error panic", args: map[string]any{"city": "Paris"},
			run: func(_ context.Context, a map[string]any) (any, error) {
				var list []string
				return list[len(a)], nil
			},
			wantMsg: "tool get_weather failed: it panicked: runtime error: index out of range [2] with length 0"},
		{name: "context already done", args: map[string]any{"city": "Paris"}, run: echoArgs,
			ctx: func() context.Context {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx
			},
			wantMsg: "tool get_weather was not run: context canceled", wantErr: context.Canceled},
		{name: "context cause is quoted", args: map[string]any{"city": "Paris"}, run: echoArgs,
			ctx: func() context.Context {
				ctx, cancel := context.WithCancelCause(context.Background())
				cancel(errors.New("the user left"))
				return ctx
			},
			wantMsg: "tool get_weather was not run: the user left"},
		{name: "output not JSON", args: map[string]any{"city": "Paris"},
			run:     func(context.Context, map[string]any) (any, error) { return map[string]any{"c": make(chan int)}, nil },
			wantMsg: "tool get_weather failed: its output cannot be encoded as JSON: json: unsupported type: chan int", wantErr: toolset.ErrOutputNotJSON},
		{name: "output NaN", args: map[string]any{"city": "Paris"},
			run:     func(context.Context, map[string]any) (any, error) { return math.NaN(), nil },
			wantMsg: "tool get_weather failed: its output cannot be encoded as JSON: unsupported value: NaN", wantErr: toolset.ErrOutputNotJSON},
		{name: "output func", args: map[string]any{"city": "Paris"},
			run:     func(context.Context, map[string]any) (any, error) { return func() {}, nil },
			wantMsg: "tool get_weather failed: its output cannot be encoded as JSON: json: unsupported type: func()", wantErr: toolset.ErrOutputNotJSON},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := tc.run
			if run == nil {
				run = func(context.Context, map[string]any) (any, error) {
					t.Error("Run called despite invalid arguments")
					return nil, nil
				}
			}
			tool := toolset.MustDefine(toolset.Tool{Name: "get_weather", InputSchema: weatherSchema(), Run: run})
			ctx := context.Background()
			if tc.ctx != nil {
				ctx = tc.ctx()
			}
			r := tool.Execute(ctx, tc.args)
			if !r.IsError {
				t.Fatalf("Execute() = %+v, want IsError", r)
			}
			if r.Output != tc.wantMsg {
				t.Errorf("Execute().Output = %q\nwant %q", r.Output, tc.wantMsg)
			}
			if r.Err == nil {
				t.Errorf("Execute().Err = nil, want the Go error")
			}
			if tc.wantErr != nil && !errors.Is(r.Err, tc.wantErr) {
				t.Errorf("errors.Is(%v, %v) = false", r.Err, tc.wantErr)
			}
		})
	}
}

func TestExecutePanicKeepsStackOutOfMessage(t *testing.T) {
	tool := toolset.MustDefine(toolset.Tool{Name: "p", Run: func(context.Context, map[string]any) (any, error) { panic(errors.New("kaput")) }})
	r := tool.Execute(context.Background(), nil)
	var pe *toolset.PanicError
	if !errors.As(r.Err, &pe) {
		t.Fatalf("Err = %v, want *PanicError", r.Err)
	}
	if pe.Tool != "p" || len(pe.Stack) == 0 || !strings.Contains(string(pe.Stack), "goroutine") {
		t.Errorf("PanicError = {Tool: %q, Stack: %d bytes}, want the tool name and a stack", pe.Tool, len(pe.Stack))
	}
	if msg := r.Output.(string); strings.Contains(msg, "goroutine") || strings.Contains(msg, ".go:") {
		t.Errorf("Output leaks the stack: %q", msg)
	}
}

func TestExecuteSuccess(t *testing.T) {
	var got map[string]any
	tool := toolset.MustDefine(toolset.Tool{Name: "get_weather", InputSchema: weatherSchema(),
		Run: func(_ context.Context, a map[string]any) (any, error) { got = a; return "sunny", nil }})
	args := map[string]any{"city": "Paris", "days": 3.0}
	r := tool.Execute(context.Background(), args)
	if r.IsError || r.Output != "sunny" || r.Err != nil {
		t.Fatalf("Execute() = %+v, want sunny", r)
	}
	if got["units"] != "C" {
		t.Errorf("Run saw units = %v, want the default C", got["units"])
	}
	if _, ok := args["units"]; ok {
		t.Errorf("Execute modified the caller's args: %v", args)
	}
}

func TestExecuteNilArgsForNoParameters(t *testing.T) {
	var got map[string]any
	tool := toolset.MustDefine(toolset.Tool{Name: "ping", Run: func(_ context.Context, a map[string]any) (any, error) { got = a; return "pong", nil }})
	if r := tool.Execute(context.Background(), nil); r.IsError || r.Output != "pong" {
		t.Fatalf("Execute(nil) = %+v", r)
	}
	if got == nil {
		t.Error("Run received nil args, want an empty map")
	}
}

func TestExecuteReturnsWhenContextEndsEvenIfRunIgnoresIt(t *testing.T) {
	release := make(chan struct{})
	finished := make(chan struct{})
	tool := toolset.MustDefine(toolset.Tool{Name: "stubborn", Run: func(context.Context, map[string]any) (any, error) {
		defer close(finished)
		<-release // ignores ctx
		return "late", nil
	}})
	ctx, cancel := context.WithTimeoutCause(context.Background(), 20*time.Millisecond, errors.New("stubborn timed out after 20ms"))
	defer cancel()
	r := tool.Execute(ctx, nil)
	if !r.IsError || r.Output != "tool stubborn was stopped: stubborn timed out after 20ms" {
		t.Fatalf("Execute() = %+v, want the timeout cause", r)
	}
	close(release)
	<-finished // the abandoned goroutine ends once Run returns
}

func TestExecuteRunReturningContextError(t *testing.T) {
	// The context ends once Run has started: cancelled before, the call
	// would not run at all ("was not run").
	ctx, cancel := context.WithCancel(context.Background())
	tool := toolset.MustDefine(toolset.Tool{Name: "polite", Run: func(ctx context.Context, _ map[string]any) (any, error) {
		cancel()
		<-ctx.Done()
		return nil, ctx.Err()
	}})
	r := tool.Execute(ctx, nil)
	if !r.IsError || r.Output != "tool polite was stopped: context canceled" || !errors.Is(r.Err, context.Canceled) {
		t.Fatalf("Execute() = %+v", r)
	}
}

func TestExecuteNilTool(t *testing.T) {
	var tool *toolset.Tool
	if r := tool.Execute(context.Background(), nil); !r.IsError {
		t.Fatalf("nil tool Execute() = %+v, want error", r)
	}
}

func TestExecuteConcurrent(t *testing.T) {
	tool := toolset.MustDefine(toolset.Tool{Name: "get_weather", InputSchema: weatherSchema(),
		Run: func(_ context.Context, a map[string]any) (any, error) { return a["city"], nil }})
	literal := &toolset.Tool{Name: "lit", Run: noop}
	done := make(chan bool)
	for i := 0; i < 16; i++ {
		go func() {
			ok := true
			for j := 0; j < 50; j++ {
				r := tool.Execute(context.Background(), map[string]any{"city": "Paris"})
				ok = ok && !r.IsError && r.Output == "Paris"
				ok = ok && !literal.Execute(context.Background(), nil).IsError
			}
			done <- ok
		}()
	}
	for i := 0; i < 16; i++ {
		if !<-done {
			t.Error("a concurrent Execute failed")
		}
	}
}

// Values that no JSON decoding produces can make jsonschema-go panic; that
// is a failed check, not a crash.
func TestExecuteValidationPanicIsAnError(t *testing.T) {
	tool := toolset.MustDefine(toolset.Tool{Name: "uniq", Run: noop, InputSchema: &jsonschema.Schema{
		Type: "object", Properties: map[string]*jsonschema.Schema{"xs": {Type: "array", UniqueItems: true}}}})
	r := tool.Execute(context.Background(), map[string]any{"xs": []any{func() {}, func() {}}})
	if !r.IsError || !strings.HasPrefix(r.Output.(string), "invalid arguments for uniq: they could not be checked: ") || !errors.Is(r.Err, toolset.ErrInvalidArguments) {
		t.Errorf("Execute() = %+v", r)
	}
}

// TestExecuteNestedDefaultsLeaveArgsIntact: defaults inside nested objects
// are applied to copies; the caller's arguments are never written, so
// reading them concurrently (an observer encoding the model's call) is
// safe. Under -race, the concurrent encoding catches any write.
func TestExecuteNestedDefaultsLeaveArgsIntact(t *testing.T) {
	schema := &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"city": {Type: "string"},
			"opts": {Type: "object", Properties: map[string]*jsonschema.Schema{
				"unit":  {Type: "string", Default: []byte(`"celsius"`)},
				"inner": {Type: "object", Properties: map[string]*jsonschema.Schema{"depth": {Type: "integer", Default: []byte(`2`)}}},
			}},
		},
	}
	var seen map[string]any
	tool := toolset.MustDefine(toolset.Tool{Name: "weather", InputSchema: schema,
		Run: func(_ context.Context, a map[string]any) (any, error) { seen = a; return "ok", nil }})
	args := map[string]any{"city": "Paris", "opts": map[string]any{"inner": map[string]any{}}}
	before, _ := json.Marshal(args)

	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				_, _ = json.Marshal(args)
			}
		}
	}()
	for range 50 {
		if r := tool.Execute(context.Background(), args); r.IsError {
			t.Fatalf("Execute() = %+v", r)
		}
	}
	close(stop)
	<-done

	if after, _ := json.Marshal(args); string(after) != string(before) {
		t.Errorf("Execute modified the caller's args:\n got %s\nwant %s", after, before)
	}
	got, _ := json.Marshal(seen)
	if want := `{"city":"Paris","opts":{"inner":{"depth":2},"unit":"celsius"}}`; string(got) != want {
		t.Errorf("Run saw %s, want %s", got, want)
	}
}
