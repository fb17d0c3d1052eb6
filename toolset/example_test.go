package toolset_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolnexus/toolnexus-go/toolset"
)

func ExampleDefine() {
	weather, err := toolset.Define(toolset.Tool{
		Name:        "get_weather",
		Description: "Current weather for a city",
		InputSchema: &jsonschema.Schema{
			Type:       "object",
			Properties: map[string]*jsonschema.Schema{"city": {Type: "string"}},
			Required:   []string{"city"},
		},
		Run: func(_ context.Context, args map[string]any) (any, error) {
			return fmt.Sprintf("sunny in %s", args["city"]), nil
		},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(weather.Execute(context.Background(), map[string]any{"city": "Chennai"}).Output)

	_, err = toolset.Define(toolset.Tool{Name: "get weather", Run: weather.Run})
	fmt.Println(err)
	// Output:
	// sunny in Chennai
	// toolset: invalid tool "get weather": name contains ' '; only letters, digits and _ . : - are allowed
}

func ExampleFunc() {
	type forecastIn struct {
		City string `json:"city" jsonschema:"the city, e.g. Paris"`
		Days int    `json:"days,omitempty" jsonschema:"days of forecast, 1 to 7"`
	}
	forecast, err := toolset.Func("forecast", "Weather forecast for a city",
		func(_ context.Context, in forecastIn) (string, error) {
			return fmt.Sprintf("%d days of sun in %s", in.Days, in.City), nil
		})
	if err != nil {
		panic(err)
	}
	fmt.Println(forecast.Schema().Properties["city"].Description)

	// Gemini sends numbers as float64: 3.0 decodes into the int field.
	r := forecast.Execute(context.Background(), map[string]any{"city": "Paris", "days": 3.0})
	fmt.Println(r.Output)
	// Output:
	// the city, e.g. Paris
	// 3 days of sun in Paris
}

// Every failure is a result the model can read, never a panic or a Go error.
func ExampleTool_Execute() {
	type in struct {
		City string `json:"city"`
	}
	tool := toolset.MustFunc("get_weather", "Current weather", func(_ context.Context, in in) (string, error) {
		switch in.City {
		case "Atlantis":
			return "", errors.New("unknown city: Atlantis")
		case "Nowhere":
			panic("the map ran out")
		}
		return "sunny in " + in.City, nil
	})
	ctx := context.Background()
	for _, args := range []map[string]any{
		{"city": "Paris"},
		{"city": 42.0},
		{"town": "Paris"},
		{"city": "Atlantis"},
		{"city": "Nowhere"},
	} {
		r := tool.Execute(ctx, args)
		fmt.Printf("%v: %v\n", r.IsError, r.Output)
	}
	// Output:
	// false: sunny in Paris
	// true: invalid arguments for get_weather: argument "city": 42 has type "integer", want "string"
	// true: invalid arguments for get_weather: unexpected additional properties ["town"]
	// true: unknown city: Atlantis
	// true: tool get_weather failed: it panicked: the map ran out
}

func ExampleSet_Lookup() {
	ping := toolset.MustDefine(toolset.Tool{Name: "ping", Description: "Health check",
		Run: func(context.Context, map[string]any) (any, error) { return "pong", nil }})
	set := toolset.MustNew(ping)

	if tool, ok := set.Lookup("ping"); ok {
		fmt.Println(tool.Execute(context.Background(), nil).Output)
	}
	_, ok := set.Lookup("pong")
	fmt.Println(ok)
	// Output:
	// pong
	// false
}
