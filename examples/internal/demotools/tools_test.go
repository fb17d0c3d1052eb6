package demotools

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/geminiadapter"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// callTool runs the named tool of set with args, as the chat does with a
// model's call.
func callTool(t *testing.T, set *toolset.Set, name string, args map[string]any) toolset.Result {
	t.Helper()
	tool, ok := set.Lookup(name)
	if !ok {
		t.Fatalf("the set has no tool %q; it has %v", name, set.Names())
	}
	return tool.Execute(context.Background(), args)
}

// toolErrorMessage returns the message of a failed call, failing the test when
// the call succeeded.
func toolErrorMessage(t *testing.T, r toolset.Result) string {
	t.Helper()
	if !r.IsError {
		t.Fatalf("call succeeded with %#v, want an error", r.Output)
	}
	msg, ok := r.Output.(string)
	if !ok {
		t.Fatalf("error output is %T, want string", r.Output)
	}
	return msg
}

func TestDemoTools(t *testing.T) {
	set := Set()
	if got, want := set.Names(), []string{"get_weather", "current_time", "calculate", "count_primes"}; !slices.Equal(got, want) {
		t.Fatalf("Set().Names() = %v, want %v", got, want)
	}
	for _, tool := range set.Tools() {
		if tool.Description == "" {
			t.Errorf("tool %s has no description", tool.Name)
		}
		if !tool.ReadOnly || tool.Idempotent {
			// Each looks something up or computes it, and changes
			// nothing: a call may be made again.
			t.Errorf("tool %s: ReadOnly %v, Idempotent %v; want read-only", tool.Name, tool.ReadOnly, tool.Idempotent)
		}
		for name, prop := range tool.Schema().Properties {
			if prop.Description == "" {
				t.Errorf("tool %s: property %q has no description", tool.Name, name)
			}
		}
	}
}

func TestWeatherSchema(t *testing.T) {
	tool, _ := Set().Lookup("get_weather")
	schema := tool.Schema()
	if got, want := schema.Required, []string{"city"}; !slices.Equal(got, want) {
		t.Errorf("get_weather required = %v, want %v", got, want)
	}
	units := schema.Properties["units"]
	if diff := cmp.Diff([]any{"celsius", "fahrenheit"}, units.Enum); diff != "" {
		t.Errorf("get_weather units enum mismatch (-want +got):\n%s", diff)
	}
	if got, want := string(units.Default), `"celsius"`; got != want {
		t.Errorf("get_weather units default = %s, want %s", got, want)
	}
}

// TestGeminiDeclarations checks that every tool's schema converts to a
// genai.Schema, so that the model is sent typed parameters (with the units
// enum) rather than the raw JSON Schema fallback.
func TestGeminiDeclarations(t *testing.T) {
	for _, tool := range Set().Tools() {
		params, err := geminiadapter.Schema(tool.Schema())
		if err != nil {
			t.Errorf("geminiadapter.Schema(%s) error = %v, want nil", tool.Name, err)
			continue
		}
		if tool.Name != "get_weather" {
			continue
		}
		units := params.Properties["units"]
		if units == nil || !slices.Equal(units.Enum, []string{"celsius", "fahrenheit"}) || units.Default != "celsius" {
			t.Errorf("Gemini schema of get_weather units = %+v, want enum [celsius fahrenheit] with default celsius", units)
		}
	}
}

func TestGetWeather(t *testing.T) {
	set := Set()
	weather := func(t *testing.T, args map[string]any) weatherReport {
		t.Helper()
		r := callTool(t, set, "get_weather", args)
		if r.IsError {
			t.Fatalf("get_weather(%v) failed: %v", args, r.Output)
		}
		return r.Output.(weatherReport)
	}

	t.Run("pinned", func(t *testing.T) {
		// The values come from a hash of the city: pin one, so that a
		// change of algorithm is noticed.
		got := weather(t, map[string]any{"city": "Paris"})
		want := weatherReport{City: "Paris", Condition: "heavy rain", Temperature: 3, Units: "celsius",
			Humidity: 53, WindKPH: 45, Note: "demo data: deterministic, not a real forecast"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("get_weather(Paris) mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("deterministic", func(t *testing.T) {
		first := weather(t, map[string]any{"city": "Paris"})
		// Case and spacing do not change the weather; City echoes the
		// name with its spaces collapsed.
		for _, city := range []string{"Paris", "paris", "  PARIS  "} {
			got := weather(t, map[string]any{"city": city})
			got.City = first.City
			if diff := cmp.Diff(first, got); diff != "" {
				t.Errorf("get_weather(%q) differs from get_weather(%q) (-first +got):\n%s", city, "Paris", diff)
			}
		}
		if got := weather(t, map[string]any{"city": " New   York "}).City; got != "New York" {
			t.Errorf("get_weather(%q).City = %q, want %q", " New   York ", got, "New York")
		}
	})

	t.Run("cities differ", func(t *testing.T) {
		seen := map[weatherReport]string{}
		for _, city := range []string{"Paris", "London", "Tokyo", "New York", "Sydney", "Cairo"} {
			r := weather(t, map[string]any{"city": city})
			r.City = ""
			if other, dup := seen[r]; dup {
				t.Errorf("get_weather(%q) = get_weather(%q) = %+v, want different weather", city, other, r)
			}
			seen[r] = city
		}
	})

	t.Run("plausible values", func(t *testing.T) {
		for _, city := range []string{"Paris", "London", "Tokyo", "Oslo", "Lima", "Reykjavik", "Nairobi", "Quito"} {
			r := weather(t, map[string]any{"city": city})
			if r.Note != weatherNote {
				t.Errorf("get_weather(%q).Note = %q, want %q", city, r.Note, weatherNote)
			}
			if !slices.Contains(weatherConditions, r.Condition) {
				t.Errorf("get_weather(%q).Condition = %q, want one of %v", city, r.Condition, weatherConditions)
			}
			if r.Temperature < -6 || r.Temperature > 35 {
				t.Errorf("get_weather(%q).Temperature = %d °C, want -6..35", city, r.Temperature)
			}
			if r.Condition == "snow" && r.Temperature > 1 {
				t.Errorf("get_weather(%q) = snow at %d °C, want at most 1 °C", city, r.Temperature)
			}
			if r.Humidity < 20 || r.Humidity > 99 {
				t.Errorf("get_weather(%q).Humidity = %d, want 20..99", city, r.Humidity)
			}
			if r.WindKPH < 0 || r.WindKPH > 59 {
				t.Errorf("get_weather(%q).WindKPH = %d, want 0..59", city, r.WindKPH)
			}
		}
	})

	t.Run("demo label in JSON", func(t *testing.T) {
		data, err := json.Marshal(weather(t, map[string]any{"city": "Paris"}))
		if err != nil {
			t.Fatal(err)
		}
		if want := `"note":"demo data: deterministic, not a real forecast"`; !strings.Contains(string(data), want) {
			t.Errorf("get_weather(Paris) encodes as %s, want it to contain %s", data, want)
		}
	})

	t.Run("units", func(t *testing.T) {
		for _, city := range []string{"Paris", "London", "Tokyo", "Oslo"} {
			c := weather(t, map[string]any{"city": city})
			explicit := weather(t, map[string]any{"city": city, "units": "celsius"})
			if diff := cmp.Diff(c, explicit); diff != "" {
				t.Errorf("get_weather(%q) without units differs from celsius (-default +celsius):\n%s", city, diff)
			}
			f := weather(t, map[string]any{"city": city, "units": "fahrenheit"})
			want := int(math.Round(float64(c.Temperature)*9/5 + 32))
			if f.Units != "fahrenheit" || f.Temperature != want {
				t.Errorf("get_weather(%q, fahrenheit) = %d %s, want %d fahrenheit (%d celsius)",
					city, f.Temperature, f.Units, want, c.Temperature)
			}
			f.Temperature, f.Units = c.Temperature, c.Units
			if diff := cmp.Diff(c, f); diff != "" {
				t.Errorf("get_weather(%q) differs between units beyond the temperature (-celsius +fahrenheit):\n%s", city, diff)
			}
		}
	})

	errorTests := []struct {
		name string
		args map[string]any
		want []string // substrings of the message
	}{
		{"blank city", map[string]any{"city": "   "}, []string{"city is empty: give a city name, e.g. Paris"}},
		{"empty city", map[string]any{"city": ""}, []string{"city is empty: give a city name, e.g. Paris"}},
		{"missing city", map[string]any{"units": "celsius"}, []string{"invalid arguments for get_weather", `"city"`}},
		{"kelvin", map[string]any{"city": "Paris", "units": "kelvin"}, []string{`argument "units"`, "kelvin", "celsius", "fahrenheit"}},
		{"capitalised units", map[string]any{"city": "Paris", "units": "Celsius"}, []string{`argument "units"`, "Celsius"}},
		{"number city", map[string]any{"city": 42.0}, []string{`argument "city"`}},
		{"unknown argument", map[string]any{"city": "Paris", "days": 3.0}, []string{`"days"`}},
	}
	for _, tt := range errorTests {
		t.Run(tt.name, func(t *testing.T) {
			msg := toolErrorMessage(t, callTool(t, set, "get_weather", tt.args))
			for _, want := range tt.want {
				if !strings.Contains(msg, want) {
					t.Errorf("get_weather(%v) error = %q, want it to contain %q", tt.args, msg, want)
				}
			}
		})
	}

	t.Run("bad units without the schema", func(t *testing.T) {
		// makeUpWeather checks units itself too, should it ever be called
		// without the schema's validation.
		_, err := makeUpWeather(context.Background(), weatherInput{City: "Paris", Units: "kelvin"})
		want := `units "kelvin" is not supported: use "celsius" or "fahrenheit"`
		if err == nil || err.Error() != want {
			t.Errorf("makeUpWeather(Paris, kelvin) error = %v, want %q", err, want)
		}
	})
}

func TestCurrentTime(t *testing.T) {
	summer := time.Date(2025, time.June, 15, 12, 30, 0, 0, time.UTC)
	winter := time.Date(2025, time.January, 15, 9, 30, 45, 123456789, time.UTC)

	tests := []struct {
		now  time.Time
		zone string
		want timeReport
	}{
		{summer, "UTC", timeReport{"UTC", "2025-06-15T12:30:00Z", "Sunday, 15 June 2025 12:30 UTC", "+00:00"}},
		{summer, "Europe/Paris", timeReport{"Europe/Paris", "2025-06-15T14:30:00+02:00", "Sunday, 15 June 2025 14:30 CEST", "+02:00"}},
		{winter, "Europe/Paris", timeReport{"Europe/Paris", "2025-01-15T10:30:45+01:00", "Wednesday, 15 January 2025 10:30 CET", "+01:00"}},
		{summer, "Asia/Tokyo", timeReport{"Asia/Tokyo", "2025-06-15T21:30:00+09:00", "Sunday, 15 June 2025 21:30 JST", "+09:00"}},
		{summer, "America/New_York", timeReport{"America/New_York", "2025-06-15T08:30:00-04:00", "Sunday, 15 June 2025 08:30 EDT", "-04:00"}},
		{winter, "America/New_York", timeReport{"America/New_York", "2025-01-15T04:30:45-05:00", "Wednesday, 15 January 2025 04:30 EST", "-05:00"}},
		{summer, "Asia/Kolkata", timeReport{"Asia/Kolkata", "2025-06-15T18:00:00+05:30", "Sunday, 15 June 2025 18:00 IST", "+05:30"}},
		{summer, " Asia/Tokyo ", timeReport{"Asia/Tokyo", "2025-06-15T21:30:00+09:00", "Sunday, 15 June 2025 21:30 JST", "+09:00"}},
		// The clock's own zone does not matter.
		{summer.In(time.FixedZone("X", -7*3600)), "UTC", timeReport{"UTC", "2025-06-15T12:30:00Z", "Sunday, 15 June 2025 12:30 UTC", "+00:00"}},
	}
	for _, tt := range tests {
		t.Run(tt.zone+" "+tt.now.Format(time.DateOnly), func(t *testing.T) {
			set := New(func() time.Time { return tt.now })
			r := callTool(t, set, "current_time", map[string]any{"timezone": tt.zone})
			if r.IsError {
				t.Fatalf("current_time(%q) failed: %v", tt.zone, r.Output)
			}
			if diff := cmp.Diff(tt.want, r.Output); diff != "" {
				t.Errorf("current_time(%q) at %v mismatch (-want +got):\n%s", tt.zone, tt.now, diff)
			}
		})
	}

	t.Run("real clock", func(t *testing.T) {
		before := time.Now()
		r := callTool(t, Set(), "current_time", map[string]any{"timezone": "UTC"})
		if r.IsError {
			t.Fatalf("current_time(UTC) failed: %v", r.Output)
		}
		got, err := time.Parse(time.RFC3339, r.Output.(timeReport).Time)
		if err != nil {
			t.Fatal(err)
		}
		if d := got.Sub(before.Truncate(time.Second)); d < 0 || d > time.Minute {
			t.Errorf("current_time(UTC) = %v, want about %v", got, before)
		}
	})

	const hint = "use an IANA name such as Europe/Paris, America/New_York or UTC"
	errorTests := []struct {
		zone any
		want string
	}{
		{"Mars/Olympus_Mons", `time zone "Mars/Olympus_Mons" is unknown: ` + hint},
		{"Paris", `time zone "Paris" is unknown: ` + hint},
		{"", `time zone "" is unknown: ` + hint},
		{"   ", `time zone "" is unknown: ` + hint},
		{"Local", `time zone "Local" is unknown: ` + hint},
		{"../../etc/passwd", `time zone "../../etc/passwd" is unknown: ` + hint},
		{1.0, `invalid arguments for current_time: argument "timezone"`},
	}
	for _, tt := range errorTests {
		t.Run(fmt.Sprintf("error %v", tt.zone), func(t *testing.T) {
			r := callTool(t, New(func() time.Time { return summer }), "current_time", map[string]any{"timezone": tt.zone})
			if msg := toolErrorMessage(t, r); !strings.HasPrefix(msg, tt.want) {
				t.Errorf("current_time(%v) error = %q, want %q", tt.zone, msg, tt.want)
			}
		})
	}
}

func TestCalculate(t *testing.T) {
	set := Set()
	calculate := func(expr any) toolset.Result {
		return callTool(t, set, "calculate", map[string]any{"expression": expr})
	}

	tests := []struct {
		expr string
		want string
	}{
		{"(12+7)*3", "57"},
		{"7/2", "3.5"},
		{"-3+10%4", "-1"},
		{"1/3", "0.333333333333"},
		{"2/3", "0.666666666667"},
		{"-1/3", "-0.333333333333"},
		{"(1/3)*3", "1"}, // exact: no rounding error
		{"0.1+0.2", "0.3"},
		{"2.5/4", "0.625"},
		{"2*(3+4)*5", "70"},
		{"((2+3)*(4-(1+1)))/((5))", "2"},
		{"((((((((1))))))))", "1"},
		{"-(-5)", "5"},
		{"+5", "5"},
		{"-7%3", "-1"},  // the remainder has the dividend's sign, as in Go
		{"10%4.0", "2"}, // whole numbers written as decimals are fine
		{"(9/3)%2", "1"},
		{"  1 + 1  ", "2"},
		{"1_000*3", "3000"},
		{"1e3/8", "125"},
		{"1/10000000", "1e-07"},
		{"99999999999*99999999999", "9999999999800000000001"},
		{"1e150", "1" + strings.Repeat("0", 150)},
		{"1e150/1e150", "1"},
		{strings.Repeat("1+", 99) + "11", "110"}, // exactly 200 characters
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			r := calculate(tt.expr)
			if r.IsError {
				t.Fatalf("calculate(%q) failed: %v", tt.expr, r.Output)
			}
			want := calcResult{Expression: strings.TrimSpace(tt.expr), Result: tt.want}
			if r.Output != want {
				t.Errorf("calculate(%q) = %+v, want %+v", tt.expr, r.Output, want)
			}
		})
	}

	const allowed = ": use numbers and + - * / % ( ) only"
	errorTests := []struct {
		expr any
		want string // the message, or its start when it ends in "..."
	}{
		{"1/0", `division by zero in "1/0"`},
		{"1/(2-2)", `division by zero in "1/(2-2)"`},
		{"1/0.0", `division by zero in "1/0.0"`},
		{"5%0", `division by zero in "5%0"`},
		{"5%2.5", `% needs whole numbers, but 2.5 is not one (in "5%2.5"): use / instead`},
		{"7/2%2", `% needs whole numbers, but 3.5 is not one (in "7/2%2"): use / instead`},
		{"x+1", `"x" is not allowed` + allowed},
		{"pi*2", `"pi" is not allowed` + allowed},
		{`len("a")`, "`len(\"a\")` is not allowed" + allowed},
		{"math.Sqrt(4)", `"math.Sqrt(4)" is not allowed` + allowed},
		{`"a"+"b"`, "`\"a\"` is not allowed" + allowed},
		{"'a'", `"'a'" is not allowed` + allowed},
		{"2i", `"2i" is not allowed` + allowed},
		{"^3", `"^" is not allowed` + allowed},
		{"!1", `"!" is not allowed` + allowed},
		{"2^3", `"^" is not allowed (there is no power operator: write 2*2*2 for 2^3)` + allowed},
		{"2**3", `"*3" is not allowed (there is no power operator **: write 2*2*2 for 2 to the power 3)` + allowed},
		{"1<<3", `"<<" is not allowed` + allowed},
		{"8>>1", `">>" is not allowed` + allowed},
		{"6&3", `"&" is not allowed` + allowed},
		{"6|3", `"|" is not allowed` + allowed},
		{"1<2", `"<" is not allowed` + allowed},
		{"1==1", `"==" is not allowed` + allowed},
		{"1&&1", `"&&" is not allowed` + allowed},
		{"a[0]", `"a[0]" is not allowed` + allowed},
		{"func() int { return 1 }()", `"func() int { return 1 }()" is not allowed` + allowed},
		{"", "expression is empty: give an arithmetic expression, e.g. (12+7)*3"},
		{"   ", "expression is empty: give an arithmetic expression, e.g. (12+7)*3"},
		{strings.Repeat("1+", 100) + "1", "expression is 201 characters long; at most 200 are allowed"},
		{"2+", `"2+" is not a valid arithmetic expression (...`},
		{"1 2", `"1 2" is not a valid arithmetic expression (...`},
		{"(1+2", `"(1+2" is not a valid arithmetic expression (...`},
		{"--5", `"--5" is not a valid arithmetic expression (...`},
		{"1e200", `"1e200" is too large or too precise: numbers are limited to about 150 digits`},
		{"1e-200", `"1e-200" is too large or too precise: numbers are limited to about 150 digits`},
		{"1e150*1e10", `"1e150*1e10" is too large or too precise: numbers are limited to about 150 digits`},
		{"1e99999", `"1e99999" is too large or too precise: numbers are limited to about 150 digits`},
		{"1e99999999999999999999", `"1e99999999999999999999" is too large or too precise: numbers are limited to about 150 digits`},
		{strings.Repeat("9", 100) + "*" + strings.Repeat("9", 90), `"` + strings.Repeat("9", 100) + "*" + strings.Repeat("9", 90) + `" is too large or too precise: numbers are limited to about 150 digits`},
		{57.0, `invalid arguments for calculate: argument "expression"...`}, // a number, not a string
	}
	for _, tt := range errorTests {
		t.Run(fmt.Sprintf("error %v", tt.expr), func(t *testing.T) {
			msg := toolErrorMessage(t, calculate(tt.expr))
			if prefix, ok := strings.CutSuffix(tt.want, "..."); ok {
				if !strings.HasPrefix(msg, prefix) {
					t.Errorf("calculate(%q) = %q, want it to start with %q", tt.expr, msg, prefix)
				}
			} else if msg != tt.want {
				t.Errorf("calculate(%q) = %q, want %q", tt.expr, msg, tt.want)
			}
		})
	}

	t.Run("missing expression", func(t *testing.T) {
		msg := toolErrorMessage(t, callTool(t, set, "calculate", map[string]any{}))
		if !strings.Contains(msg, `"expression"`) {
			t.Errorf("calculate() error = %q, want it to name %q", msg, "expression")
		}
	})
}

// TestToolsConcurrent runs every tool from many goroutines at once, for the
// race detector.
func TestToolsConcurrent(t *testing.T) {
	set := Set()
	calls := []struct {
		name string
		args map[string]any
	}{
		{"get_weather", map[string]any{"city": "Paris"}},
		{"current_time", map[string]any{"timezone": "Europe/Paris"}},
		{"calculate", map[string]any{"expression": "(12+7)*3"}},
	}
	var wg sync.WaitGroup
	for range 8 {
		for _, c := range calls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tool, _ := set.Lookup(c.name)
				if r := tool.Execute(context.Background(), c.args); r.IsError {
					t.Errorf("%s(%v) failed: %v", c.name, c.args, r.Output)
				}
			}()
		}
	}
	wg.Wait()
}

func TestCountPrimes(t *testing.T) {
	set := Set()
	for _, c := range []struct {
		below, primes, largest int
	}{
		{2, 0, 0}, {3, 1, 2}, {4, 2, 3}, {10, 4, 7}, {11, 4, 7}, {12, 5, 11}, {100, 25, 97},
		{primesSegment*2 + 3, 43390, 524287}, // one segment and a number more; 2^19-1 is prime
		{1_000_000, 78498, 999983}, {10_000_000, 664579, 9999991},
	} {
		r := callTool(t, set, "count_primes", map[string]any{"below": float64(c.below)})
		if want := (primesReport{Below: c.below, Primes: c.primes, Largest: c.largest}); r.IsError || r.Output != want {
			t.Errorf("count_primes(%d) = %+v; want %+v", c.below, r.Output, want)
		}
	}
	for _, below := range []float64{1, 0, -5, maxPrimesBelow + 1} {
		msg := toolErrorMessage(t, callTool(t, set, "count_primes", map[string]any{"below": below}))
		if !strings.Contains(msg, "give a number from 2 to 2000000000") {
			t.Errorf("count_primes(%v): %q", below, msg)
		}
	}
}

// count_primes reports its progress after each segment, in order, the
// last at the number given, and stops when its context is done.
func TestCountPrimesProgress(t *testing.T) {
	tool, _ := Set().Lookup("count_primes")
	var got []toolset.Progress
	ctx := toolset.WithProgress(context.Background(), toolset.ProgressFunc(func(p toolset.Progress) { got = append(got, p) }))
	const below = 3_000_000
	if r := tool.Execute(ctx, map[string]any{"below": float64(below)}); r.IsError {
		t.Fatal(r.Output)
	}
	if want := below/(2*primesSegment) + 1; len(got) != want {
		t.Errorf("%d reports; want %d, one per segment", len(got), want)
	}
	for i, p := range got {
		if p.Total != below || (i > 0 && p.Done <= got[i-1].Done) {
			t.Errorf("report %d = %+v, after %+v", i, p, got[max(i-1, 0)])
		}
	}
	if last := got[len(got)-1]; last.Done != below || last.Message != "sieved up to 3,000,000: 216,816 primes so far" {
		t.Errorf("last report = %+v", last)
	}

	ctx, cancel := context.WithCancel(toolset.WithProgress(context.Background(), toolset.ProgressFunc(func(toolset.Progress) {})))
	stopped := toolset.WithProgress(ctx, toolset.ProgressFunc(func(toolset.Progress) { cancel() }))
	r := tool.Execute(stopped, map[string]any{"below": float64(maxPrimesBelow)})
	if !r.IsError {
		t.Errorf("a cancelled count answered %v", r.Output)
	}
}
