package toolset_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/toolset"
)

type forecastIn struct {
	City  string    `json:"city" jsonschema:"the city, e.g. Paris"`
	Days  int       `json:"days,omitempty" jsonschema:"days of forecast, 1 to 7"`
	Tags  []string  `json:"tags,omitempty"`
	Since time.Time `json:"since,omitzero"`
	Where *struct {
		Lat float64 `json:"lat"`
		Lon float64 `json:"lon"`
	} `json:"where,omitempty"`
}

type forecastOut struct {
	City string  `json:"city"`
	Days int     `json:"days"`
	Temp float64 `json:"temp_c"`
}

func forecastTool(t *testing.T) *toolset.Tool {
	t.Helper()
	tool, err := toolset.Func("forecast", "Weather forecast", func(_ context.Context, in forecastIn) (forecastOut, error) {
		if in.City == "Atlantis" {
			return forecastOut{}, errors.New("no weather under the sea")
		}
		return forecastOut{City: in.City, Days: in.Days, Temp: 21.5}, nil
	})
	if err != nil {
		t.Fatalf("Func() = %v", err)
	}
	return tool
}

func TestFuncInfersSchema(t *testing.T) {
	s := forecastTool(t).Schema()
	if s.Type != "object" {
		t.Fatalf("schema type = %q, want object", s.Type)
	}
	if got := s.Properties["city"].Description; got != "the city, e.g. Paris" {
		t.Errorf("city description = %q, want the jsonschema tag", got)
	}
	if got := s.Properties["days"].Type; got != "integer" {
		t.Errorf("days type = %q, want integer", got)
	}
	if strings.Join(s.Required, ",") != "city" {
		t.Errorf("required = %v, want [city]", s.Required)
	}
}

func TestFuncDecodesGeminiNumbers(t *testing.T) {
	// Gemini sends every number as a float64.
	r := forecastTool(t).Execute(context.Background(), map[string]any{
		"city": "Paris", "days": 3.0, "where": map[string]any{"lat": 48.85, "lon": 2.35},
		"since": "2026-01-02T15:04:05Z",
	})
	if r.IsError {
		t.Fatalf("Execute() = %+v", r)
	}
	want := forecastOut{City: "Paris", Days: 3, Temp: 21.5}
	if r.Output != want {
		t.Errorf("Output = %#v, want %#v", r.Output, want)
	}
}

func TestFuncErrors(t *testing.T) {
	tool := forecastTool(t)
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"fractional days", map[string]any{"city": "Paris", "days": 3.5},
			`invalid arguments for forecast: argument "days": 3.5 has type "number", want "integer"`},
		{"unknown property", map[string]any{"city": "Paris", "country": "FR"},
			`invalid arguments for forecast: unexpected additional properties ["country"]`},
		{"missing city", map[string]any{},
			`invalid arguments for forecast: required: missing properties: ["city"]`},
		{"bad nested", map[string]any{"city": "Paris", "where": map[string]any{"lat": "x", "lon": 1.0}},
			`invalid arguments for forecast: argument "where.lat": x has type "string", want "number"`},
		{"time that does not parse", map[string]any{"city": "Paris", "since": "yesterday"},
			`invalid arguments for forecast: parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"`},
		{"fn error", map[string]any{"city": "Atlantis"}, "no weather under the sea"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tool.Execute(context.Background(), tc.args)
			if !r.IsError || r.Output != tc.want {
				t.Errorf("Execute() = %+v\nwant error %q", r, tc.want)
			}
		})
	}
}

func TestFuncDefinitionErrors(t *testing.T) {
	_, err := toolset.Func("echo", "", func(_ context.Context, s string) (string, error) { return s, nil })
	if err == nil || !errors.Is(err, toolset.ErrInvalidTool) || !strings.Contains(err.Error(), `input schema must have "type": "object", not "string"`) {
		t.Errorf("Func[string] = %v, want an object-schema error", err)
	}
	_, err = toolset.Func("chan", "", func(_ context.Context, in struct{ C chan int }) (string, error) { return "", nil })
	if err == nil || !strings.Contains(err.Error(), `invalid tool "chan": cannot infer the input schema`) {
		t.Errorf("Func[chan field] = %v, want an inference error", err)
	}
	_, err = toolset.Func[struct{}, string]("nil", "", nil)
	if err == nil || !strings.Contains(err.Error(), "function is nil") {
		t.Errorf("Func(nil fn) = %v", err)
	}
	_, err = toolset.Func("bad name", "", func(context.Context, struct{}) (string, error) { return "", nil })
	if err == nil || !strings.Contains(err.Error(), `invalid tool "bad name": name contains ' '`) {
		t.Errorf("Func(bad name) = %v", err)
	}
}

func TestFuncNoParameters(t *testing.T) {
	tool := toolset.MustFunc("now", "The time", func(context.Context, struct{}) (string, error) { return "noon", nil })
	if r := tool.Execute(context.Background(), nil); r.IsError || r.Output != "noon" {
		t.Errorf("Execute(nil) = %+v", r)
	}
	if r := tool.Execute(context.Background(), map[string]any{"x": 1.0}); !r.IsError {
		t.Errorf("Execute({x}) = %+v, want unexpected property error", r)
	}
}

func TestFuncOutputEncodesAsJSON(t *testing.T) {
	r := forecastTool(t).Execute(context.Background(), map[string]any{"city": "Oslo", "days": 1.0})
	b, err := json.Marshal(map[string]any{"result": r.Output})
	if err != nil || string(b) != `{"result":{"city":"Oslo","days":1,"temp_c":21.5}}` {
		t.Errorf("marshal = %s, %v", b, err)
	}
}

// Func's tool says nothing of its effects until told; the hints set on the
// returned Tool are what it says, and it runs the same.
func TestFuncHints(t *testing.T) {
	tool := forecastTool(t)
	if tool.ReadOnly || tool.Idempotent || tool.SafeToRepeat() {
		t.Fatalf("Func's tool: ReadOnly %v, Idempotent %v; want neither", tool.ReadOnly, tool.Idempotent)
	}
	tool.ReadOnly = true
	if !tool.SafeToRepeat() {
		t.Error("SafeToRepeat() = false after ReadOnly was set")
	}
	set := toolset.MustNew(tool)
	if got, _ := set.Lookup("forecast"); !got.ReadOnly {
		t.Error("the set's tool lost ReadOnly")
	}
	if res := tool.Execute(context.Background(), map[string]any{"city": "Paris"}); res.IsError {
		t.Errorf("Execute() = %+v, want a result", res)
	}
}
