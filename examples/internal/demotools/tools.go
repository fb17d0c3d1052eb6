package demotools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"hash/fnv"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // embed the zone database: current_time works without /usr/share/zoneinfo

	"github.com/toolnexus/toolnexus-go/toolset"
	"go.opentelemetry.io/otel/trace"
)

// Set returns the demo tools: get_weather, current_time, calculate,
// count_primes.
func Set() *toolset.Set {
	return New(time.Now)
}

// New is Set with current_time reading the given clock, so that tests can
// fix the time without touching shared state.
func New(clock func() time.Time) *toolset.Set {
	return toolset.MustNew(weatherTool(), currentTimeTool(clock), calculateTool(), countPrimesTool())
}

// readOnly marks t, which changes nothing, as read-only: a runtime that
// lost track of one of its calls may call it again.
func readOnly(t *toolset.Tool) *toolset.Tool {
	t.ReadOnly = true
	return t
}

// ---- get_weather ----

// weatherUnits are the values get_weather's units argument accepts; the
// first is the default.
var weatherUnits = []string{"celsius", "fahrenheit"}

// weatherConditions are the skies get_weather picks from.
var weatherConditions = []string{
	"sunny", "partly cloudy", "cloudy", "light rain", "heavy rain",
	"thunderstorms", "fog", "windy", "snow",
}

// weatherNote labels every get_weather answer as made up.
const weatherNote = "demo data: deterministic, not a real forecast"

// weatherInput is get_weather's input.
type weatherInput struct {
	City  string `json:"city" jsonschema:"the city to report on, e.g. Paris or New York"`
	Units string `json:"units,omitempty" jsonschema:"temperature units: celsius (the default) or fahrenheit; use fahrenheit when the user asks for it or is in the United States"`
}

// weatherReport is get_weather's output.
type weatherReport struct {
	City        string `json:"city"`
	Condition   string `json:"condition"`
	Temperature int    `json:"temperature"`
	Units       string `json:"units"`
	Humidity    int    `json:"humidity"` // percent
	WindKPH     int    `json:"wind_kph"`
	Note        string `json:"note"`
}

// weatherTool defines get_weather. Its schema is inferred from weatherInput,
// then units gets a real enum and default, which Gemini enforces when it
// writes the call and Execute enforces when it validates it.
func weatherTool() *toolset.Tool {
	t := toolset.MustFunc("get_weather",
		"Get the current weather for a city: condition, temperature, humidity and wind. "+
			"This is a demo: the data is made up (the same city always gets the same weather), "+
			"so tell the user it is not a real forecast.",
		makeUpWeather)
	schema := t.InputSchema.CloneSchemas()
	units := schema.Properties["units"]
	units.Enum = make([]any, len(weatherUnits))
	for i, u := range weatherUnits {
		units.Enum[i] = u
	}
	units.Default = json.RawMessage(strconv.Quote(weatherUnits[0]))
	return toolset.MustDefine(toolset.Tool{Name: t.Name, Description: t.Description, InputSchema: schema, Run: t.Run,
		ReadOnly: true}) // it looks the weather up, and changes nothing
}

// makeUpWeather makes up the weather for in.City from an FNV-1a hash of its
// normalised name (lower case, spaces collapsed), so that it is the same on
// every call.
func makeUpWeather(ctx context.Context, in weatherInput) (weatherReport, error) {
	city := strings.Join(strings.Fields(in.City), " ")
	if city == "" {
		return weatherReport{}, errors.New("city is empty: give a city name, e.g. Paris")
	}
	units := in.Units
	if units == "" {
		units = weatherUnits[0]
	}
	if !slices.Contains(weatherUnits, units) {
		return weatherReport{}, fmt.Errorf("units %q is not supported: use %q or %q", units, weatherUnits[0], weatherUnits[1])
	}

	// The forecast is a span of its own (a real tool would call a service
	// here), started with the tracer provider of the span in ctx: with
	// -trace, it nests under the tool call's span; without, it costs
	// nothing.
	_, span := trace.SpanFromContext(ctx).TracerProvider().Tracer("toolnexus-chat").Start(ctx, "forecast "+city)
	defer span.End()

	h := fnv.New64a()
	h.Write([]byte(strings.ToLower(city)))
	sum := h.Sum64()

	condition := weatherConditions[sum%uint64(len(weatherConditions))]
	celsius := int((sum>>8)%41) - 5 // -5..35 °C
	if condition == "snow" {
		celsius = int((sum>>8)%8) - 6 // -6..1 °C
	}
	temperature := celsius
	if units == "fahrenheit" {
		temperature = int(math.Round(float64(celsius)*9/5 + 32))
	}
	return weatherReport{
		City:        city,
		Condition:   condition,
		Temperature: temperature,
		Units:       units,
		Humidity:    int((sum>>24)%80) + 20, // 20..99 %
		WindKPH:     int((sum >> 40) % 60),  // 0..59 km/h
		Note:        weatherNote,
	}, nil
}

// ---- current_time ----

// timeInput is current_time's input.
type timeInput struct {
	Timezone string `json:"timezone" jsonschema:"IANA time zone name, e.g. Europe/Paris, America/New_York or UTC; pick the zone of the place the user asks about"`
}

// timeReport is current_time's output.
type timeReport struct {
	Timezone  string `json:"timezone"`
	Time      string `json:"time"`       // RFC 3339
	Local     string `json:"local"`      // e.g. "Monday, 2 January 2006 15:04 MST"
	UTCOffset string `json:"utc_offset"` // e.g. "+02:00"
}

// timeReportLayout is the human-readable form of current_time's answer.
const timeReportLayout = "Monday, 2 January 2006 15:04 MST"

// currentTimeTool defines current_time, reading the time from clock.
func currentTimeTool(clock func() time.Time) *toolset.Tool {
	return readOnly(toolset.MustFunc("current_time",
		"Get the current date and time in a time zone. Use it whenever the user asks "+
			"what time or day it is somewhere; do not guess the time.",
		func(_ context.Context, in timeInput) (timeReport, error) {
			return timeInZone(clock(), in.Timezone)
		}))
}

// timeInZone reports the instant now in the IANA zone named zone.
func timeInZone(now time.Time, zone string) (timeReport, error) {
	zone = strings.TrimSpace(zone)
	// LoadLocation takes "" for UTC and "Local" for this machine's zone;
	// neither is an IANA name the model should rely on.
	loc, err := time.LoadLocation(zone)
	if err != nil || zone == "" || zone == "Local" {
		return timeReport{}, fmt.Errorf("time zone %q is unknown: use an IANA name such as Europe/Paris, America/New_York or UTC", zone)
	}
	t := now.In(loc)
	return timeReport{
		Timezone:  loc.String(),
		Time:      t.Format(time.RFC3339),
		Local:     t.Format(timeReportLayout),
		UTCOffset: t.Format("-07:00"),
	}, nil
}

// ---- calculate ----

// Limits on calculate: the expression's length in bytes, and the size in
// bits of the numerator and denominator of every number it meets (512 bits
// is about 154 decimal digits). With only + - * / % the values stay small
// anyway; the bit limit turns 1e300-style input into a clear error.
const (
	maxExpressionLen = 200
	maxNumberBits    = 512
)

// calcAllowed ends the message for anything calculate refuses.
const calcAllowed = "use numbers and + - * / % ( ) only"

// calcInput is calculate's input.
type calcInput struct {
	Expression string `json:"expression" jsonschema:"an arithmetic expression, e.g. (12+7)*3 or 2.5/4; only numbers, + - * / % and parentheses are allowed (no variables, functions or powers)"`
}

// calcResult is calculate's output.
type calcResult struct {
	Expression string `json:"expression"`
	Result     string `json:"result"`
}

// calculateTool defines calculate.
func calculateTool() *toolset.Tool {
	return readOnly(toolset.MustFunc("calculate",
		"Evaluate an arithmetic expression exactly and return the result. Use it for any "+
			"arithmetic instead of working it out yourself. Supports + - * / %, unary minus "+
			"and parentheses; division is exact (7/2 = 3.5); % needs whole numbers.",
		func(_ context.Context, in calcInput) (calcResult, error) {
			expr := strings.TrimSpace(in.Expression)
			v, err := evalArithmetic(expr)
			if err != nil {
				return calcResult{}, err
			}
			return calcResult{Expression: expr, Result: formatResult(v)}, nil
		}))
}

// evalArithmetic computes the arithmetic expression src exactly. It parses
// src as a Go expression and walks the tree, accepting only number literals,
// parentheses, unary + and -, and binary + - * / % (the remainder takes the
// dividend's sign, as in Go: -7%3 is -1).
func evalArithmetic(src string) (constant.Value, error) {
	if src == "" {
		return nil, errors.New("expression is empty: give an arithmetic expression, e.g. (12+7)*3")
	}
	if len(src) > maxExpressionLen {
		return nil, fmt.Errorf("expression is %d characters long; at most %d are allowed", len(src), maxExpressionLen)
	}
	fset := token.NewFileSet()
	tree, err := parser.ParseExprFrom(fset, "", src, 0)
	if err != nil {
		return nil, fmt.Errorf("%s is not a valid arithmetic expression (%v): %s", quoteArithmetic(src), err, calcAllowed)
	}
	e := arithWalker{fset: fset, src: src}
	return e.eval(tree)
}

// An arithWalker walks one parsed expression.
type arithWalker struct {
	fset *token.FileSet
	src  string
}

// text returns the source text of n, for messages.
func (e arithWalker) text(n ast.Node) string {
	return e.src[e.fset.Position(n.Pos()).Offset:e.fset.Position(n.End()).Offset]
}

// eval computes n, refusing anything but the allowed arithmetic.
func (e arithWalker) eval(n ast.Expr) (constant.Value, error) {
	switch n := n.(type) {
	case *ast.BasicLit:
		if n.Kind != token.INT && n.Kind != token.FLOAT {
			return nil, e.notAllowed(n)
		}
		return e.check(constant.MakeFromLiteral(n.Value, n.Kind, 0), n)

	case *ast.ParenExpr:
		return e.eval(n.X)

	case *ast.UnaryExpr:
		if n.Op != token.ADD && n.Op != token.SUB {
			return nil, fmt.Errorf("%q is not allowed: %s", n.Op.String(), calcAllowed)
		}
		x, err := e.eval(n.X)
		if err != nil {
			return nil, err
		}
		return constant.UnaryOp(n.Op, x, 0), nil

	case *ast.BinaryExpr:
		switch n.Op {
		case token.ADD, token.SUB, token.MUL, token.QUO, token.REM:
		case token.XOR:
			return nil, fmt.Errorf(`"^" is not allowed (there is no power operator: write 2*2*2 for 2^3): %s`, calcAllowed)
		default:
			return nil, fmt.Errorf("%q is not allowed: %s", n.Op.String(), calcAllowed)
		}
		x, err := e.eval(n.X)
		if err != nil {
			return nil, err
		}
		y, err := e.eval(n.Y)
		if err != nil {
			return nil, err
		}
		if (n.Op == token.QUO || n.Op == token.REM) && constant.Sign(y) == 0 {
			return nil, fmt.Errorf("division by zero in %s", quoteArithmetic(e.text(n)))
		}
		if n.Op == token.REM {
			// go/constant's % works on integers only; a whole float
			// such as 4.0 is converted, anything else is refused.
			for _, v := range []constant.Value{x, y} {
				if constant.ToInt(v).Kind() != constant.Int {
					return nil, fmt.Errorf("%% needs whole numbers, but %s is not one (in %s): use / instead", formatResult(v), quoteArithmetic(e.text(n)))
				}
			}
			x, y = constant.ToInt(x), constant.ToInt(y)
		}
		// QUO on integers is exact: 7/2 is the fraction 7/2, not 3 (only
		// QUO_ASSIGN would truncate).
		return e.check(constant.BinaryOp(x, n.Op, y), n)

	case *ast.StarExpr:
		return nil, fmt.Errorf("%s is not allowed (there is no power operator **: write 2*2*2 for 2 to the power 3): %s", quoteArithmetic(e.text(n)), calcAllowed)
	}
	return nil, e.notAllowed(n)
}

// notAllowed is the error for a node calculate refuses.
func (e arithWalker) notAllowed(n ast.Node) error {
	return fmt.Errorf("%s is not allowed: %s", quoteArithmetic(e.text(n)), calcAllowed)
}

// check returns v, computed at n, unless it is not an exact number with a
// numerator and denominator of at most maxNumberBits bits.
func (e arithWalker) check(v constant.Value, n ast.Node) (constant.Value, error) {
	// Num is Unknown for a value go/constant could not keep as an exact
	// fraction (a literal such as 1e5000): it is too large as well.
	num := constant.Num(v)
	if num.Kind() == constant.Unknown || constant.BitLen(num) > maxNumberBits ||
		constant.BitLen(constant.Denom(v)) > maxNumberBits {
		return nil, fmt.Errorf("%s is too large or too precise: numbers are limited to about 150 digits", quoteArithmetic(e.text(n)))
	}
	return v, nil
}

// quoteArithmetic quotes a piece of an expression for a message: in double
// quotes, or in backquotes when it holds a double quote, so that the model
// reads it without escapes.
func quoteArithmetic(s string) string {
	if strings.ContainsRune(s, '"') {
		return "`" + s + "`"
	}
	return `"` + s + `"`
}

// formatResult prints an integer exactly ("57") and any other value as a
// decimal with at most 12 significant digits ("3.5", "0.333333333333"),
// switching to an exponent for very large or small values ("1e-07").
func formatResult(v constant.Value) string {
	if i := constant.ToInt(v); i.Kind() == constant.Int {
		return i.ExactString()
	}
	// Values within maxNumberBits always fit a float64.
	f, _ := constant.Float64Val(v)
	return strconv.FormatFloat(f, 'g', 12, 64)
}

// ---- count_primes ----

// maxPrimesBelow bounds count_primes' argument: below it, a count takes a
// few seconds on one core.
const maxPrimesBelow = 2_000_000_000

// primesSegment is how many odd numbers count_primes sieves at a time:
// it reports its progress after each segment.
const primesSegment = 1 << 18

// primesInput is count_primes' input.
type primesInput struct {
	Below int `json:"below" jsonschema:"count the prime numbers below this number, from 2 to 2000000000 (two billion)"`
}

// primesReport is count_primes' output.
type primesReport struct {
	Below   int `json:"below"`
	Primes  int `json:"primes"`            // how many primes are below Below
	Largest int `json:"largest,omitempty"` // the largest of them
}

// countPrimesTool defines count_primes, which takes a while for large
// numbers and reports its progress as it goes.
func countPrimesTool() *toolset.Tool {
	return readOnly(toolset.MustFunc("count_primes",
		"Count the prime numbers below a number (up to two billion), exactly, with a sieve. "+
			"Large numbers take a few seconds; the user sees its progress meanwhile.",
		func(ctx context.Context, in primesInput) (primesReport, error) {
			if in.Below < 2 || in.Below > maxPrimesBelow {
				return primesReport{}, fmt.Errorf("below is %d: give a number from 2 to %d", in.Below, maxPrimesBelow)
			}
			return countPrimes(ctx, in.Below)
		}))
}

// countPrimes counts the primes below n with a segmented sieve of
// Eratosthenes over the odd numbers, reporting its progress after each
// segment, and stops when ctx is done.
func countPrimes(ctx context.Context, n int) (primesReport, error) {
	report := primesReport{Below: n}
	if n > 2 {
		report.Primes, report.Largest = 1, 2
	}
	// The odd primes up to √n strike out the composites of every segment.
	root := int(math.Sqrt(float64(n))) + 1
	small := make([]bool, root+1) // small[i]: i is composite
	var base []int
	for i := 3; i <= root; i += 2 {
		if !small[i] {
			base = append(base, i)
			for j := i * i; j <= root; j += 2 * i {
				small[j] = true
			}
		}
	}
	composite := make([]bool, primesSegment) // composite[k]: lo+2k is composite
	for lo := 3; lo < n; lo += 2 * primesSegment {
		if err := ctx.Err(); err != nil {
			return primesReport{}, err
		}
		size := min(primesSegment, (n-lo+1)/2) // the odd numbers lo, lo+2, … below n
		clear(composite[:size])
		for _, p := range base {
			if p*p >= lo+2*size {
				break
			}
			start := max(p*p, (lo+p-1)/p*p)
			if start%2 == 0 {
				start += p // odd multiples only
			}
			for j := (start - lo) / 2; j < size; j += p {
				composite[j] = true
			}
		}
		for k := range size {
			if !composite[k] {
				report.Primes++
				report.Largest = lo + 2*k
			}
		}
		if toolset.WantsProgress(ctx) {
			done := min(lo+2*size, n)
			toolset.ReportProgress(ctx, float64(done), float64(n),
				fmt.Sprintf("sieved up to %s: %s primes so far", groupDigits(done), groupDigits(report.Primes)))
		}
	}
	return report, nil
}

// groupDigits writes n with thousands separators: 1,234,567.
func groupDigits(n int) string {
	s := strconv.Itoa(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
