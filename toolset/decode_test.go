package toolset

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"math/big"
	"reflect"
	"testing"
	"time"
)

type decodeWeather struct {
	City  string   `json:"city"`
	Days  int      `json:"days,omitempty"`
	Units string   `json:"units,omitempty"`
	Tags  []string `json:"tags,omitempty"`
}

type decodeNumbers struct {
	I   int     `json:"i"`
	I8  int8    `json:"i8"`
	I16 int16   `json:"i16"`
	I32 int32   `json:"i32"`
	I64 int64   `json:"i64"`
	U   uint    `json:"u"`
	U8  uint8   `json:"u8"`
	U16 uint16  `json:"u16"`
	U32 uint32  `json:"u32"`
	U64 uint64  `json:"u64"`
	F32 float32 `json:"f32"`
	F64 float64 `json:"f64"`
	B   bool    `json:"b"`
	S   string  `json:"s"`
}

type decodeUnit string

type decodeKid struct {
	Name string `json:"name"`
	Age  *int   `json:"age"`
}

type decodeNested struct {
	Any   any                  `json:"any"`
	P     *int                 `json:"p"`
	PP    **string             `json:"pp"`
	PS    *struct{ X int }     `json:"ps"`
	Arr   [2]int               `json:"arr"`
	M     map[string]int       `json:"m"`
	MA    map[string]any       `json:"ma"`
	MS    map[string][]string  `json:"ms"`
	MU    map[decodeUnit]uint8 `json:"mu"`
	Kids  []decodeKid          `json:"kids"`
	KidPs []*decodeKid         `json:"kidps"`
	Unit  decodeUnit           `json:"unit"`
	Anys  []any                `json:"anys"`
	Grid  [][]float64          `json:"grid"`
	NoTag string
	Dash  string `json:"-"`
	//lint:ignore SA5008 a field named "-", as encoding/json reads the tag
	Comma string `json:"-,"`
	//lint:ignore SA5008 not a valid tag name: the field name counts
	Bad    string `json:"a\\b"`
	hidden string //lint:ignore U1000 encoding/json ignores it, and so must the plan
}

type DecodeBase struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
	Deep int    `json:"deep"`
}

type DecodeExtra struct {
	ID    string `json:"id"` // collides with DecodeBase.ID at the same depth: both hidden
	Note  string `json:"note"`
	Inner struct {
		Deep string `json:"deep"`
	}
}

type decodeLower struct {
	Low string `json:"low"`
}

type decodeEmbedded struct {
	DecodeBase
	*DecodeExtra
	decodeLower
	Name  string `json:"name"` // shallower: hides DecodeBase.Name
	Title string
}

// decodeTypes are the In types the differential tests decode into.
var decodeTypes = []reflect.Type{
	reflect.TypeFor[decodeWeather](),
	reflect.TypeFor[decodeNumbers](),
	reflect.TypeFor[decodeNested](),
	reflect.TypeFor[decodeEmbedded](),
	reflect.TypeFor[map[string]any](),
	reflect.TypeFor[map[string]float32](),
}

// compareWithRoundTrip decodes args into a new t with the plan and with
// json.Unmarshal(json.Marshal(args)) and checks that they agree. It
// returns the plan's answer.
func compareWithRoundTrip(t *testing.T, typ reflect.Type, args map[string]any) decodeResult {
	t.Helper()
	dec := newDecoder(typ)
	if dec == nil {
		t.Fatalf("%v: no plan", typ)
	}
	got := reflect.New(typ)
	r := dec.decode(args, got.Elem())
	want := reflect.New(typ)
	err := decodeArgs(args, want.Interface())
	switch {
	case r == decoded && err != nil:
		t.Fatalf("%v: plan decoded %#v, round trip failed: %v", typ, args, err)
	case r == decoded && !reflect.DeepEqual(got.Elem().Interface(), want.Elem().Interface()):
		t.Fatalf("%v: args %#v\nplan:       %#v\nround trip: %#v", typ, args, got.Elem().Interface(), want.Elem().Interface())
	case r == mismatch && err == nil:
		t.Fatalf("%v: plan refused %#v, round trip made %#v", typ, args, want.Elem().Interface())
	}
	return r
}

func TestNewDecoderFallsBack(t *testing.T) {
	type tagged struct {
		N int `json:"n,string"`
	}
	type node struct {
		Next *node `json:"next"`
	}
	type unexportedPtr struct {
		*decodeLower
	}
	for _, typ := range []reflect.Type{
		reflect.TypeFor[time.Time](),
		reflect.TypeFor[struct{ T time.Time }](),
		reflect.TypeFor[struct{ N *big.Int }](),
		reflect.TypeFor[struct{ L slog.Level }](),
		reflect.TypeFor[struct{ R json.RawMessage }](),
		reflect.TypeFor[struct{ N json.Number }](),
		reflect.TypeFor[struct{ B []byte }](),
		reflect.TypeFor[struct{ C chan int }](),
		reflect.TypeFor[struct{ C complex128 }](),
		reflect.TypeFor[struct{ E error }](),
		reflect.TypeFor[map[int]string](),
		reflect.TypeFor[tagged](),
		reflect.TypeFor[node](),
		reflect.TypeFor[unexportedPtr](),
	} {
		if newDecoder(typ) != nil {
			t.Errorf("newDecoder(%v) made a plan, want none", typ)
		}
	}
	for _, typ := range decodeTypes {
		if newDecoder(typ) == nil {
			t.Errorf("newDecoder(%v) made no plan", typ)
		}
	}
}

func TestDecodeMatchesRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		typ  reflect.Type
		args string
		want decodeResult
	}{
		{decodeTypes[0], `{"city":"Paris","days":3,"units":"C","tags":["a","b"]}`, decoded},
		{decodeTypes[0], `{"city":"Paris","tags":[]}`, decoded},
		{decodeTypes[0], `{"city":"Paris","tags":null,"days":null}`, decoded},
		{decodeTypes[0], `{"city":"Paris","days":3.5}`, mismatch},
		{decodeTypes[0], `{"city":"Paris","days":1e300}`, mismatch},
		{decodeTypes[0], `{"city":3}`, mismatch},
		{decodeTypes[0], `{"city":"Paris","tags":[1]}`, mismatch},
		{decodeTypes[0], `{"city":"Paris","tags":"a"}`, mismatch},
		{decodeTypes[0], `{"City":"Paris"}`, unknown},
		{decodeTypes[0], `{"city":"Paris","country":"FR"}`, unknown},
		{decodeTypes[1], `{"i":-3,"i8":-128,"i16":32767,"i32":-2147483648,"i64":-9007199254740992,"u":0,"u8":255,"u16":65535,"u32":4294967295,"u64":9007199254740993,"f32":0.1,"f64":1e-7,"b":true,"s":"é"}`, decoded},
		{decodeTypes[1], `{"i64":1152921504606846976}`, decoded}, // 2^60: the round trip makes 1152921504606847000
		{decodeTypes[1], `{"i64":9223372036854775807}`, mismatch},
		{decodeTypes[1], `{"u64":18446744073709551615}`, mismatch},
		{decodeTypes[1], `{"u64":1e19}`, decoded},
		{decodeTypes[1], `{"i8":128}`, mismatch},
		{decodeTypes[1], `{"u8":-1}`, mismatch},
		{decodeTypes[1], `{"u":-0}`, mismatch}, // "-0" does not parse as a uint
		{decodeTypes[1], `{"i":-0}`, decoded},
		{decodeTypes[1], `{"f32":3.4028235e38}`, decoded},
		{decodeTypes[1], `{"f32":3.5e38}`, mismatch},
		{decodeTypes[1], `{"f32":1e-46}`, decoded},
		{decodeTypes[1], `{"f32":16777217}`, decoded},
		{decodeTypes[1], `{"b":1}`, mismatch},
		{decodeTypes[1], `{"s":true}`, mismatch},
		{decodeTypes[1], `{"i":{}}`, mismatch},
		{decodeTypes[2], `{"any":{"a":[1,"x",null,{"b":false}]},"p":3,"pp":"s","ps":{"X":1},"arr":[1,2,3],"m":{"a":1},"ma":{"a":[1]},"ms":{"a":["x"],"b":null},"mu":{"x":1},"kids":[{"name":"a","age":3},{"name":"b"},null],"kidps":[{"name":"a"},null],"unit":"C","anys":[1,"a",null,[]],"grid":[[1,2],[]],"NoTag":"n","-":"c","Bad":"b"}`, decoded},
		{decodeTypes[2], `{"arr":[1]}`, decoded},
		{decodeTypes[2], `{"arr":[1,2,"x"]}`, decoded}, // the extra item is skipped
		{decodeTypes[2], `{"p":null,"pp":null,"ps":null,"m":null,"kids":null,"any":null}`, decoded},
		{decodeTypes[2], `{"ps":{"X":1.5}}`, mismatch},
		{decodeTypes[2], `{"mu":{"x":256}}`, mismatch},
		{decodeTypes[2], `{"kids":[{"name":"a","extra":1}]}`, unknown},
		{decodeTypes[2], `{"Dash":"d"}`, unknown},
		{decodeTypes[2], `{"a\\b":"d"}`, unknown},
		{decodeTypes[3], `{"name":"top","Title":"t","note":"n","deep":1,"low":"l","Inner":{"deep":"x"}}`, decoded},
		{decodeTypes[3], `{"id":1}`, unknown}, // hidden by the collision: ignored
		{decodeTypes[3], `{"deep":1}`, decoded},
		{decodeTypes[3], `{"note":"n"}`, decoded}, // allocates the embedded *DecodeExtra
		{decodeTypes[4], `{"a":1,"b":[1,{"c":null}],"é":"x"}`, decoded},
		{decodeTypes[4], `{}`, decoded},
		{decodeTypes[5], `{"a":1.5,"b":null,"c":1e39}`, mismatch},
		{decodeTypes[5], `{"a":1.5,"b":null}`, decoded},
	} {
		t.Run(tc.typ.String()+tc.args, func(t *testing.T) {
			var args map[string]any
			if err := json.Unmarshal([]byte(tc.args), &args); err != nil {
				t.Fatal(err)
			}
			if got := compareWithRoundTrip(t, tc.typ, args); got != tc.want {
				t.Errorf("decode() = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestDecodeGoValues gives the plan Go values no JSON decoder makes:
// either it decodes them as the round trip would, or it is unsure.
func TestDecodeGoValues(t *testing.T) {
	for _, args := range []map[string]any{
		{"city": "Paris", "days": 3},
		{"city": "Paris", "tags": []string{"a"}},
		{"city": "Paris\xff"},
		{"city": "Paris", "days": math.NaN()},
		{"city": "Paris", "tags": []any(nil)},
		{"city": "Paris", "tags": []any{"a", nil}},
		nil,
	} {
		compareWithRoundTrip(t, decodeTypes[0], args)
	}
	for _, args := range []map[string]any{
		{"any": []any(nil)},
		{"any": map[string]any{"a": 1}},
		{"any": []any{math.Inf(1)}},
		{"ma": map[string]any{"\xff": 1.0}},
		{"p": int64(3)},
		{"kids": []any{map[string]any(nil)}},
	} {
		compareWithRoundTrip(t, decodeTypes[2], args)
	}
}

func (r decodeResult) String() string { return [...]string{"decoded", "mismatch", "unknown"}[r] }

func TestDecodeAllocations(t *testing.T) {
	dec := newDecoder(reflect.TypeFor[decodeWeather]())
	args := map[string]any{"city": "Paris", "days": 3.0, "units": "C", "tags": []any{"a", "b"}}
	var in decodeWeather
	dst := reflect.ValueOf(&in).Elem()
	// The only allocation is the result's: Tags' array.
	if n := testing.AllocsPerRun(100, func() {
		in = decodeWeather{}
		if dec.decode(args, dst) != decoded {
			t.Fatal("not decoded")
		}
	}); n != 1 {
		t.Errorf("decode allocates %v times per run, want 1", n)
	}
	if in.City != "Paris" || in.Days != 3 || in.Units != "C" || len(in.Tags) != 2 {
		t.Errorf("decoded %+v", in)
	}
}

// FuzzDecodeArgs makes arguments as Gemini's client decodes them (nil,
// bool, float64, string, []any, map[string]any) out of the fuzzer's bytes,
// with the keys of the fields of a few representative In types, and
// decodes them into each type with the plan and with the JSON round trip:
// when the plan decodes, the values are deeply equal; when it refuses, the
// round trip fails. The seed corpus is in testdata/fuzz/FuzzDecodeArgs.
func FuzzDecodeArgs(f *testing.F) {
	f.Add([]byte{3, 5, 0, 2, 1, 2, 7, 3, 6, 0, 4, 2, 2, 4, 4, 3})
	f.Add([]byte("\x05\x11\x02\x12\x02\x1a\x03\x05\x14\x02\xff\x15\x02\x0e"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &argsGen{data: data}
		args := g.object(0)
		for _, typ := range decodeTypes {
			compareWithRoundTrip(t, typ, args)
		}
	})
}

// An argsGen makes JSON values out of bytes, from pools chosen to meet the
// fields of decodeTypes and the edges of Go's number types. Past the end
// of its bytes it reads zeros.
type argsGen struct {
	data []byte
}

func (g *argsGen) byte() byte {
	if len(g.data) == 0 {
		return 0
	}
	b := g.data[0]
	g.data = g.data[1:]
	return b
}

var (
	argsKeys = []string{"city", "days", "units", "tags", "i", "i8", "i16", "i32", "i64", "u", "u8", "u16", "u32", "u64",
		"f32", "f64", "b", "s", "any", "p", "pp", "ps", "X", "arr", "m", "ma", "ms", "mu", "kids", "kidps", "name", "age",
		"unit", "anys", "grid", "NoTag", "Dash", "-", "Bad", "id", "note", "deep", "low", "Inner", "Title", "CITY", "zz"}
	argsNumbers = []float64{0, math.Copysign(0, -1), 1, -1, 3, 3.5, -2.5, 127, 128, -128, -129, 255, 256, 65535, 65536,
		1<<31 - 1, 1 << 31, -1 << 31, 1<<32 - 1, 1 << 32, 1 << 53, 1<<53 + 2, -1 << 53, 1 << 60, 1 << 63, -1 << 63, 1 << 64,
		1e19, 1e20, 1e21, 1e300, 1e-7, 1e-6, 0.1, math.MaxFloat32, 3.5e38, 1e-46, 16777217, math.MaxFloat64, 5e-324}
	argsStrings = []string{"", "a", "Paris", "é", "C", "1", "true"}
)

func (g *argsGen) value(depth int) any {
	k := g.byte() % 8
	if depth > 3 {
		k %= 5
	}
	switch k {
	case 0:
		return nil
	case 1:
		return g.byte()%2 == 0
	case 2:
		return argsNumbers[int(g.byte())%len(argsNumbers)]
	case 3:
		// Any finite float64, from eight bytes.
		var bits uint64
		for range 8 {
			bits = bits<<8 | uint64(g.byte())
		}
		if f := math.Float64frombits(bits); !math.IsNaN(f) && !math.IsInf(f, 0) {
			return f
		}
		return float64(bits >> 12) // a whole number
	case 4:
		return argsStrings[int(g.byte())%len(argsStrings)]
	case 5, 6:
		a := []any{}
		for range g.byte() % 4 {
			a = append(a, g.value(depth+1))
		}
		return a
	}
	return g.object(depth + 1)
}

func (g *argsGen) object(depth int) map[string]any {
	m := map[string]any{}
	for range g.byte() % 6 {
		m[argsKeys[int(g.byte())%len(argsKeys)]] = g.value(depth)
	}
	return m
}

// TestFuncFallbackMessages checks that a call the plan does not decode
// gets the round trip's result, and its error message word for word.
func TestFuncFallbackMessages(t *testing.T) {
	var got decodeWeather
	tool := MustFunc("forecast", "", func(_ context.Context, in decodeWeather) (string, error) {
		got = in
		return "ok", nil
	})
	if newDecoder(reflect.TypeFor[decodeWeather]()) == nil {
		t.Fatal("no plan for decodeWeather")
	}
	for _, tc := range []struct {
		args map[string]any
		want decodeWeather
	}{
		{map[string]any{"city": "Paris", "days": 3}, decodeWeather{City: "Paris", Days: 3}},                         // an int: unknown to the plan
		{map[string]any{"city": "Paris", "tags": []string{"a"}}, decodeWeather{City: "Paris", Tags: []string{"a"}}}, // likewise
	} {
		got = decodeWeather{}
		if r := tool.Execute(context.Background(), tc.args); r.IsError || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Execute(%v) = %+v, decoded %+v; want %+v", tc.args, r, got, tc.want)
		}
	}
	for _, args := range []map[string]any{
		{"city": "Paris", "days": 1e300},
		{"city": "Paris", "days": float64(1 << 63)},
	} {
		var in decodeWeather
		want := fmt.Sprintf("invalid arguments for forecast: %v", decodeArgs(args, &in))
		if r := tool.Execute(context.Background(), args); !r.IsError || r.Output != want {
			t.Errorf("Execute(%v) = %+v, want the message %q", args, r, want)
		}
	}
}
