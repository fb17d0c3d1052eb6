package toolset

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// checkAgainstJSONSchema compares the fast path's verdict on instance with
// jsonschema-go's, the reference. It reports whether the fast path answered.
func checkAgainstJSONSchema(t *testing.T, fast *fastSchema, rs *jsonschema.Resolved, instance any) bool {
	t.Helper()
	got := fast.validate(instance)
	if got == unsure {
		return false
	}
	err := rs.Validate(instance)
	if (got == pass) != (err == nil) {
		schema, _ := json.Marshal(rs.Schema())
		inst, _ := json.Marshal(instance)
		t.Fatalf("schema %s\ninstance %s (%#v)\nfast path: %v; jsonschema-go: %v", schema, inst, instance, got == pass, err)
	}
	return true
}

func (v verdict) String() string { return [...]string{"pass", "fail", "unsure"}[v] }

func resolve(t *testing.T, s *jsonschema.Schema) *jsonschema.Resolved {
	t.Helper()
	rs, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func schemaFromJSON(t *testing.T, src string) *jsonschema.Schema {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(src), &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

func TestCompileSchemaSubset(t *testing.T) {
	type weather struct {
		City  string             `json:"city" jsonschema:"the city"`
		Days  int                `json:"days,omitempty"`
		Small uint8              `json:"small,omitempty"`
		Tags  []string           `json:"tags,omitempty"`
		Where *struct{ Lat int } `json:"where,omitempty"`
		Extra map[string]any     `json:"extra,omitempty"`
	}
	inferred, err := jsonschema.For[weather](nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		schema *jsonschema.Schema
		fast   bool
	}{
		{"inferred from a struct", inferred, true},
		{"empty object", &jsonschema.Schema{Type: "object"}, true},
		{"annotations and format", schemaFromJSON(t, `{"type":"object","title":"t","description":"d","$comment":"c",
			"properties":{"when":{"type":"string","format":"date-time","default":"x","examples":["y"],"deprecated":true,"x-extra":1}}}`), true},
		{"every keyword of the subset", schemaFromJSON(t, `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
			"properties":{"n":{"type":["null","number"],"minimum":0,"maximum":9,"exclusiveMinimum":-1,"exclusiveMaximum":10,"multipleOf":0.5},
			"s":{"type":"string","minLength":1,"maxLength":5,"pattern":"^a","enum":["a","ab"]},"c":{"const":3},
			"l":{"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":3,"uniqueItems":true},
			"o":{"type":"object","minProperties":1,"maxProperties":2,"additionalProperties":{"type":"string"}},
			"x":{"anyOf":[{"type":"string"},{"type":"null"}],"oneOf":[{"minLength":1},{"maxLength":0}],"allOf":[{}],"not":{"const":"z"}}},
			"required":["n"],"additionalProperties":false}`), true},
		{"draft 7", schemaFromJSON(t, `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"items":{"type":"string"}}}}`), true},
		{"$ref", schemaFromJSON(t, `{"type":"object","$defs":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/s"}}}`), false},
		{"$defs unused", schemaFromJSON(t, `{"type":"object","$defs":{"s":{"type":"string"}}}`), false},
		{"patternProperties", schemaFromJSON(t, `{"type":"object","patternProperties":{"^a":{"type":"string"}}}`), false},
		{"if", schemaFromJSON(t, `{"type":"object","if":{"required":["a"]},"then":{"required":["b"]}}`), false},
		{"prefixItems", schemaFromJSON(t, `{"type":"object","properties":{"a":{"prefixItems":[{"type":"string"}]}}}`), false},
		{"items array", schemaFromJSON(t, `{"type":"object","properties":{"a":{"items":[{"type":"string"}]}}}`), false},
		{"contains", schemaFromJSON(t, `{"type":"object","properties":{"a":{"contains":{"type":"string"}}}}`), false},
		{"dependentRequired", schemaFromJSON(t, `{"type":"object","dependentRequired":{"a":["b"]}}`), false},
		{"propertyNames", schemaFromJSON(t, `{"type":"object","propertyNames":{"maxLength":3}}`), false},
		{"unevaluatedProperties", schemaFromJSON(t, `{"type":"object","unevaluatedProperties":false}`), false},
		{"$id in a subschema", schemaFromJSON(t, `{"type":"object","properties":{"a":{"$id":"http://x/a"}}}`), false},
		{"enum of objects", schemaFromJSON(t, `{"type":"object","properties":{"a":{"enum":[{"b":1}]}}}`), false},
		{"enum of a json.Number", &jsonschema.Schema{Type: "object", Enum: []any{json.Number("1")}}, false},
		{"infinite maximum", &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"n": {Maximum: jsonschema.Ptr(math.Inf(1))}}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resolve(t, tc.schema)
			if got := compileSchema(tc.schema) != nil; got != tc.fast {
				t.Errorf("compileSchema() != nil is %v, want %v", got, tc.fast)
			}
		})
	}
}

// TestFastPathQuirks checks the corners where jsonschema-go's behaviour is
// easy to get wrong, against jsonschema-go itself.
func TestFastPathQuirks(t *testing.T) {
	for _, tc := range []struct {
		schema    string
		instances []any
	}{
		{`{"type":"integer"}`, []any{3.0, 3.5, math.Copysign(0, -1), 1e300, 3, int64(1 << 60), uint8(7), float32(2.5), "3", nil, math.NaN()}},
		{`{"type":"number"}`, []any{3.0, 3.5, 3, true}},
		{`{"type":["null","string"]}`, []any{nil, "a", 1.0, []any{}}},
		{`{"type":["integer"]}`, []any{1.0, 1.5}},
		{`{"type":[]}`, []any{nil, 1.0, "a"}},
		{`{"type":"foo"}`, []any{nil, 1.0}},
		{`{"enum":[1, "1", null, true]}`, []any{1.0, 1, "1", nil, true, false, 2.0, []any{}, map[string]any{}}},
		{`{"enum":[]}`, []any{nil, 1.0}},
		{`{"const":null}`, []any{nil, 0.0, ""}},
		{`{"const":-0.0}`, []any{0.0, math.Copysign(0, -1)}},
		{`{"minimum":1,"exclusiveMaximum":3}`, []any{1.0, 0.999, 3.0, 2.9999999999999996, "x", int8(2)}},
		{`{"multipleOf":0.1}`, []any{0.3, 0.2, 1.0, 3}},
		{`{"multipleOf":3}`, []any{9.0, 10.0, 1e308}},
		{`{"minLength":2,"maxLength":3}`, []any{"é", "éé", "ééé", "éééé", "\xff\xfe", 1.0}},
		{`{"pattern":"^[a-z]+$"}`, []any{"abc", "aBc", "", 1.0}},
		{`{"anyOf":[]}`, []any{nil}},
		{`{"oneOf":[]}`, []any{nil}},
		{`{"allOf":[]}`, []any{nil}},
		{`{"oneOf":[{"type":"number"},{"type":"integer"}]}`, []any{1.0, 1.5, "a"}},
		{`{"not":{}}`, []any{nil, 1.0}},
		{`{"not":{"type":"string"}}`, []any{"a", 1.0, []string{"a"}}},
		{`{"items":{"type":"string"},"minItems":1,"maxItems":2}`, []any{[]any{}, []any{"a"}, []any{"a", 1.0}, []any{"a", "b", "c"}, []any(nil), "a"}},
		{`{"uniqueItems":true}`, []any{
			[]any{1.0, 1}, []any{1.0, 2.0}, []any{[]any{1.0}, []any{1.0}}, []any{[]any{}, []any(nil)},
			[]any{map[string]any{"a": 1.0}, map[string]any{"a": 1}}, []any{map[string]any{}, map[string]any(nil)},
			[]any{nil, false}, []any{"a", "b", "a"}, []any{map[string]any{"a": 1.0}, map[string]any{"b": 1.0}},
		}},
		{`{"properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`, []any{
			map[string]any{"a": "x"}, map[string]any{"a": nil}, map[string]any{}, map[string]any{"a": "x", "b": 1.0},
			map[string]any(nil), "not an object",
		}},
		{`{"properties":{"a":{}},"additionalProperties":{"type":"number"},"minProperties":1,"maxProperties":2}`, []any{
			map[string]any{"a": "x"}, map[string]any{"a": "x", "b": 1.0}, map[string]any{"b": "y"}, map[string]any{}, map[string]any{"a": 1.0, "b": 1.0, "c": 1.0},
		}},
	} {
		s := schemaFromJSON(t, tc.schema)
		rs := resolve(t, s)
		fast := compileSchema(s)
		if fast == nil {
			t.Errorf("%s: not compiled", tc.schema)
			continue
		}
		for _, inst := range tc.instances {
			t.Run(fmt.Sprintf("%s/%#v", tc.schema, inst), func(t *testing.T) {
				checkAgainstJSONSchema(t, fast, rs, inst)
			})
		}
	}
}

func TestFastPathUnsure(t *testing.T) {
	fast := compileSchema(schemaFromJSON(t, `{"type":"object","properties":{"a":{"type":"string"},"l":{"uniqueItems":true}}}`))
	for _, inst := range []any{
		map[string]any{"a": []string{"x"}},
		map[string]any{"a": json.Number("1")},
		map[string]any{"a": math.Inf(1)},
		map[string]any{"a": int64(1) << 60},
		map[string]any{"a": struct{}{}},
		map[string]any{"l": make([]any, maxUniqueItems+1)},
		map[string]any{"l": []any{1.0, func() {}}},
		map[string]string{"a": "x"},
	} {
		if got := fast.validate(inst); got != unsure {
			t.Errorf("validate(%#v) = %v, want unsure", inst, got)
		}
	}
}

func TestFastPathDoesNotAllocate(t *testing.T) {
	s := schemaFromJSON(t, `{"type":"object","required":["city"],"additionalProperties":false,"properties":{
		"city":{"type":"string","minLength":1,"pattern":"^[A-Za-z ]+$"},
		"days":{"type":["null","integer"],"minimum":1,"maximum":7},
		"units":{"enum":["C","F"]},
		"tags":{"type":"array","items":{"type":"string"},"uniqueItems":true,"maxItems":5},
		"where":{"type":"object","properties":{"lat":{"type":"number"}},"additionalProperties":{"type":"number"}},
		"mode":{"anyOf":[{"const":"fast"},{"type":"null"}]}}}`)
	fast := compileSchema(s)
	if fast == nil {
		t.Fatal("not compiled")
	}
	args := map[string]any{"city": "Paris", "days": 3.0, "units": "C", "tags": []any{"a", "b"},
		"where": map[string]any{"lat": 1.5, "lon": 2.0}, "mode": nil}
	checkAgainstJSONSchema(t, fast, resolve(t, s), args)
	if got := fast.validate(args); got != pass {
		t.Fatalf("validate() = %v, want pass", got)
	}
	if n := testing.AllocsPerRun(100, func() { fast.validate(args) }); n != 0 {
		t.Errorf("validate allocates %v times per run, want 0", n)
	}
}

// TestSchemaCorpus runs every schema and instance pair of a small corpus
// of realistic tool schemas through both validators.
func TestSchemaCorpus(t *testing.T) {
	schemas := []string{
		`{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer","minimum":1},"units":{"type":"string","enum":["C","F"],"default":"C"},"tags":{"type":"array","items":{"type":"string"}},"where":{"type":"object","properties":{"lat":{"type":"number"}}}},"required":["city"],"additionalProperties":{"not":{}}}`,
		`{"type":"object","properties":{"q":{"type":"string","minLength":1,"pattern":"^[a-z]+$"},"n":{"type":"integer","minimum":0,"maximum":10,"default":5},"list":{"type":"array","items":{"type":"number"},"maxItems":3},"mode":{"enum":["a","b"]}},"required":["q"]}`,
		`{"type":"object","properties":{"id":{"type":["null","string"]},"ids":{"type":["null","array"],"items":{"type":"integer","minimum":0,"maximum":255}},"opts":{"type":"object","additionalProperties":{"type":"boolean"}}},"additionalProperties":false}`,
		`{"type":"object","properties":{"v":{"oneOf":[{"type":"string","maxLength":3},{"type":"number","multipleOf":0.5}]},"w":{"anyOf":[{"type":"null"},{"type":"array","uniqueItems":true}]},"x":{"allOf":[{"minimum":0},{"exclusiveMaximum":1}]},"y":{"not":{"enum":[1,"1"]}}},"minProperties":1,"maxProperties":3}`,
	}
	instances := []string{
		`{}`, `{"city":"Paris"}`, `{"city":"Paris","days":0}`, `{"city":"Paris","days":2.5}`, `{"city":"Paris","units":"K"}`,
		`{"city":"Paris","tags":["a",1]}`, `{"city":"Paris","where":{"lat":"north"}}`, `{"city":"Paris","extra":1}`,
		`{"q":"abc"}`, `{"q":""}`, `{"q":"ABC","n":11}`, `{"q":"a","list":[1,2,3,4]}`, `{"q":"a","mode":"c"}`,
		`{"id":null,"ids":[1,255,256]}`, `{"id":3}`, `{"ids":null}`, `{"opts":{"a":true,"b":"x"}}`, `{"other":1}`,
		`{"v":"abcd"}`, `{"v":1.5}`, `{"v":1.25}`, `{"w":[1,1.0]}`, `{"w":[[1],[2]]}`, `{"x":0.5}`, `{"x":1}`, `{"y":1.0}`, `{"y":"2"}`,
		`{"v":"a","w":null,"x":0,"y":2}`,
	}
	for i, src := range schemas {
		s := schemaFromJSON(t, src)
		rs := resolve(t, s)
		fast := compileSchema(s)
		if fast == nil {
			t.Fatalf("schema %d not compiled", i)
		}
		for _, inst := range instances {
			var v any
			if err := json.Unmarshal([]byte(inst), &v); err != nil {
				t.Fatal(err)
			}
			if !checkAgainstJSONSchema(t, fast, rs, v) {
				t.Errorf("schema %d, instance %s: fast path unsure", i, inst)
			}
		}
	}
}

// FuzzValidateFastPath generates a schema and instances from the fuzzer's
// bytes and checks that the fast path and jsonschema-go agree on each: the
// fast path is never unsure of a JSON value, says valid exactly when
// jsonschema-go does, and never panics. The seed corpus is in
// testdata/fuzz/FuzzValidateFastPath.
func FuzzValidateFastPath(f *testing.F) {
	f.Add([]byte{0xff, 0x07, 0x01, 0x02, 0x03, 0x10, 0x20, 0x30})
	f.Add([]byte("\x06\x80\x01\x00\x02\x05\x03object\x04\x05\x06\x07"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &schemaGen{data: data}
		s := g.schema(0)
		rs, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
		if err != nil {
			return
		}
		fast := compileSchema(s)
		if fast == nil {
			return
		}
		for range 4 {
			inst := g.instance(0)
			if !checkAgainstJSONSchema(t, fast, rs, inst) {
				t.Fatalf("fast path unsure of the JSON value %#v", inst)
			}
		}
	})
}

// A schemaGen makes schemas and instances out of bytes, from small pools
// of values chosen to meet each other: the numbers of the bounds and of
// the instances, the strings of the enums and of the patterns. Past the
// end of its bytes it reads zeros.
type schemaGen struct {
	data []byte
}

func (g *schemaGen) byte() byte {
	if len(g.data) == 0 {
		return 0
	}
	b := g.data[0]
	g.data = g.data[1:]
	return b
}

func pick[T any](g *schemaGen, pool []T) T { return pool[int(g.byte())%len(pool)] }

var (
	genTypes    = []string{"null", "boolean", "number", "integer", "string", "array", "object", "foo"}
	genNumbers  = []float64{0, 1, 2, 3, -1, 0.5, 1.5, 2.5, 0.1, 0.3, -0.5, 1e300, 1 << 53, 1<<53 + 2, math.Copysign(0, -1), 255, 256}
	genStrings  = []string{"", "a", "b", "ab", "ba", "é", "éé", "A", "aaaa", "1"}
	genPatterns = []string{"^a", "b$", "^[a-z]+$", ".", "é", "^$", "a|b"}
	genNames    = []string{"a", "b", "c"}
	genLengths  = []int{0, 1, 2, 3}
)

// schema makes a schema: a first byte of flags chooses the keywords
// (several flags open a second one), the following bytes their values.
func (g *schemaGen) schema(depth int) *jsonschema.Schema {
	s := &jsonschema.Schema{}
	flags := uint16(g.byte())
	if flags&0x80 != 0 {
		flags |= uint16(g.byte()) << 8
	}
	if depth > 2 {
		flags &= 0x7f // no more subschemas
	}
	if flags&0x01 != 0 {
		if n := int(g.byte() % 4); n == 0 {
			s.Type = pick(g, genTypes)
		} else {
			s.Types = []string{}
			for range n - 1 {
				s.Types = append(s.Types, pick(g, genTypes))
			}
			if len(s.Types) > 1 && s.Types[0] == s.Types[1] {
				s.Types = s.Types[:1] // duplicates are allowed, but make no difference
			}
		}
	}
	if flags&0x02 != 0 {
		s.Enum = []any{}
		for range g.byte() % 4 {
			s.Enum = append(s.Enum, g.scalar())
		}
	}
	if flags&0x04 != 0 {
		switch g.byte() % 8 {
		case 0:
			s.Minimum = jsonschema.Ptr(pick(g, genNumbers))
		case 1:
			s.Maximum = jsonschema.Ptr(pick(g, genNumbers))
		case 2:
			s.ExclusiveMinimum = jsonschema.Ptr(pick(g, genNumbers))
		case 3:
			s.ExclusiveMaximum = jsonschema.Ptr(pick(g, genNumbers))
		case 4:
			s.MultipleOf = jsonschema.Ptr(pick(g, genNumbers))
		case 5:
			s.Const = jsonschema.Ptr(g.scalar())
		case 6:
			s.Minimum, s.Maximum = jsonschema.Ptr(pick(g, genNumbers)), jsonschema.Ptr(pick(g, genNumbers))
		case 7:
			s.Const = jsonschema.Ptr(g.instance(1)) // an array or object const is left to jsonschema-go
		}
	}
	if flags&0x08 != 0 {
		switch g.byte() % 3 {
		case 0:
			s.MinLength = jsonschema.Ptr(pick(g, genLengths))
		case 1:
			s.MaxLength = jsonschema.Ptr(pick(g, genLengths))
		case 2:
			s.Pattern = pick(g, genPatterns)
		}
	}
	if flags&0x10 != 0 {
		switch g.byte() % 4 {
		case 0:
			s.MinItems = jsonschema.Ptr(pick(g, genLengths))
		case 1:
			s.MaxItems = jsonschema.Ptr(pick(g, genLengths))
		case 2:
			s.UniqueItems = true
		case 3:
			s.MinProperties, s.MaxProperties = jsonschema.Ptr(pick(g, genLengths)), jsonschema.Ptr(pick(g, genLengths))
		}
	}
	if flags&0x20 != 0 {
		s.Required = []string{}
		for range g.byte() % 3 {
			s.Required = append(s.Required, pick(g, genNames))
		}
	}
	if flags&0x40 != 0 {
		s.Description = "annotations do not count"
		s.Format = "date-time"
		s.Default = json.RawMessage(`null`) // checked against the schema: often refused
	}
	if flags&0x100 != 0 {
		s.Items = g.schema(depth + 1)
	}
	if flags&0x200 != 0 {
		s.Properties = map[string]*jsonschema.Schema{}
		for range 1 + g.byte()%3 {
			s.Properties[pick(g, genNames)] = g.schema(depth + 1)
		}
	}
	if flags&0x400 != 0 {
		switch g.byte() % 3 {
		case 0:
			s.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}} // false
		case 1:
			s.AdditionalProperties = &jsonschema.Schema{} // true
		case 2:
			s.AdditionalProperties = g.schema(depth + 1)
		}
	}
	if flags&0x800 != 0 {
		s.AnyOf = g.schemas(depth)
	}
	if flags&0x1000 != 0 {
		s.OneOf = g.schemas(depth)
	}
	if flags&0x2000 != 0 {
		s.AllOf = g.schemas(depth)
	}
	if flags&0x4000 != 0 {
		s.Not = g.schema(depth + 1)
	}
	if flags&0x8000 != 0 {
		// A keyword outside the fast path's subset.
		switch g.byte() % 3 {
		case 0:
			s.PatternProperties = map[string]*jsonschema.Schema{"^a": g.schema(depth + 1)}
		case 1:
			s.Contains = g.schema(depth + 1)
		case 2:
			s.DependentRequired = map[string][]string{"a": {"b"}}
		}
	}
	return s
}

func (g *schemaGen) schemas(depth int) []*jsonschema.Schema {
	ss := []*jsonschema.Schema{}
	for range g.byte() % 3 {
		ss = append(ss, g.schema(depth+1))
	}
	return ss
}

// scalar makes a JSON scalar.
func (g *schemaGen) scalar() any {
	switch g.byte() % 4 {
	case 0:
		return nil
	case 1:
		return g.byte()%2 == 0
	case 2:
		return pick(g, genNumbers)
	}
	return pick(g, genStrings)
}

// instance makes a JSON value as encoding/json decodes one.
func (g *schemaGen) instance(depth int) any {
	k := g.byte() % 6
	if depth > 2 {
		k %= 4
	}
	switch k {
	case 4:
		a := []any{}
		for range g.byte() % 4 {
			a = append(a, g.instance(depth+1))
		}
		return a
	case 5:
		m := map[string]any{}
		for range g.byte() % 4 {
			m[pick(g, genNames)] = g.instance(depth + 1)
		}
		return m
	}
	return g.scalar()
}
