package geminiadapter_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolnexus/toolnexus-go/geminiadapter"
	"google.golang.org/genai"
)

// parse unmarshals a JSON Schema written in a test.
func parse(t *testing.T, src string) *jsonschema.Schema {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(src), &s); err != nil {
		t.Fatalf("unmarshal %s: %v", src, err)
	}
	return &s
}

func TestSchemaConversion(t *testing.T) {
	p := genai.Ptr[float64]
	i := genai.Ptr[int64]
	for _, tc := range []struct {
		name string
		in   string
		want *genai.Schema
	}{
		{"string", `{"type":"string"}`, &genai.Schema{Type: genai.TypeString}},
		{"number", `{"type":"number"}`, &genai.Schema{Type: genai.TypeNumber}},
		{"integer", `{"type":"integer"}`, &genai.Schema{Type: genai.TypeInteger}},
		{"boolean", `{"type":"boolean"}`, &genai.Schema{Type: genai.TypeBoolean}},
		{"null", `{"type":"null"}`, &genai.Schema{Type: genai.TypeNULL}},
		{"type array of one", `{"type":["string"]}`, &genai.Schema{Type: genai.TypeString}},
		{"nullable", `{"type":["null","integer"]}`, &genai.Schema{Type: genai.TypeInteger, Nullable: genai.Ptr(true)}},
		{"nullable, null last", `{"type":["array","null"],"items":{"type":"string"}}`,
			&genai.Schema{Type: genai.TypeArray, Nullable: genai.Ptr(true), Items: &genai.Schema{Type: genai.TypeString}}},
		{"nullable keyword (OpenAPI style)", `{"type":"string","nullable":true}`, &genai.Schema{Type: genai.TypeString, Nullable: genai.Ptr(true)}},
		{"description and title", `{"type":"string","description":"the city","title":"City"}`,
			&genai.Schema{Type: genai.TypeString, Description: "the city", Title: "City"}},
		{"enum", `{"type":"string","enum":["C","F"]}`, &genai.Schema{Type: genai.TypeString, Enum: []string{"C", "F"}}},
		{"enum without type", `{"enum":["a","b"]}`, &genai.Schema{Type: genai.TypeString, Enum: []string{"a", "b"}}},
		{"format date-time", `{"type":"string","format":"date-time"}`, &genai.Schema{Type: genai.TypeString, Format: "date-time"}},
		{"format int64", `{"type":"integer","format":"int64"}`, &genai.Schema{Type: genai.TypeInteger, Format: "int64"}},
		{"format double", `{"type":"number","format":"double"}`, &genai.Schema{Type: genai.TypeNumber, Format: "double"}},
		{"default", `{"type":"integer","default":3}`, &genai.Schema{Type: genai.TypeInteger, Default: 3.0}},
		{"examples", `{"type":"string","examples":["Paris","Tokyo"]}`, &genai.Schema{Type: genai.TypeString, Example: "Paris"}},
		{"example (OpenAPI style)", `{"type":"string","example":"Oslo"}`, &genai.Schema{Type: genai.TypeString, Example: "Oslo"}},
		{"minimum maximum", `{"type":"number","minimum":-1.5,"maximum":99}`, &genai.Schema{Type: genai.TypeNumber, Minimum: p(-1.5), Maximum: p(99)}},
		{"string lengths and pattern", `{"type":"string","minLength":1,"maxLength":10,"pattern":"^[a-z]+$"}`,
			&genai.Schema{Type: genai.TypeString, MinLength: i(1), MaxLength: i(10), Pattern: "^[a-z]+$"}},
		{"array bounds", `{"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":3}`,
			&genai.Schema{Type: genai.TypeArray, Items: &genai.Schema{Type: genai.TypeInteger}, MinItems: i(1), MaxItems: i(3)}},
		{"object", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"number"}},"required":["a"],"minProperties":1,"maxProperties":2}`,
			&genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{"a": {Type: genai.TypeString}, "b": {Type: genai.TypeNumber}},
				Required: []string{"a"}, MinProperties: i(1), MaxProperties: i(2)}},
		{"propertyOrdering keyword", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"},"c":{"type":"string"}},"propertyOrdering":["c","a"]}`,
			&genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{"a": {Type: genai.TypeString}, "b": {Type: genai.TypeString}, "c": {Type: genai.TypeString}},
				PropertyOrdering: []string{"c", "a", "b"}}},
		{"additionalProperties false is dropped", `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`,
			&genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{"a": {Type: genai.TypeString}}}},
		{"additionalProperties true is dropped", `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":true}`,
			&genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{"a": {Type: genai.TypeString}}}},
		{"$schema $id $comment are dropped", `{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"urn:x","$comment":"c","type":"object","properties":{"a":{"type":"string"}}}`,
			&genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{"a": {Type: genai.TypeString}}}},
		{"anyOf", `{"anyOf":[{"type":"string"},{"type":"integer","minimum":0}]}`,
			&genai.Schema{AnyOf: []*genai.Schema{{Type: genai.TypeString}, {Type: genai.TypeInteger, Minimum: p(0)}}}},
		{"$ref into $defs", `{"type":"object","properties":{"home":{"$ref":"#/$defs/addr","description":"where you live"},"work":{"$ref":"#/$defs/addr"}},"$defs":{"addr":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}`,
			&genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{
				"home": {Type: genai.TypeObject, Description: "where you live", Properties: map[string]*genai.Schema{"city": {Type: genai.TypeString}}, Required: []string{"city"}},
				"work": {Type: genai.TypeObject, Properties: map[string]*genai.Schema{"city": {Type: genai.TypeString}}, Required: []string{"city"}},
			}}},
		{"$ref into definitions (draft-07)", `{"type":"object","properties":{"n":{"$ref":"#/definitions/n"}},"definitions":{"n":{"type":"integer"}}}`,
			&genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{"n": {Type: genai.TypeInteger}}}},
		{"nested $ref chain", `{"type":"object","properties":{"a":{"$ref":"#/$defs/A"}},"$defs":{"A":{"type":"array","items":{"$ref":"#/$defs/B"}},"B":{"type":"string"}}}`,
			&genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{"a": {Type: genai.TypeArray, Items: &genai.Schema{Type: genai.TypeString}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := geminiadapter.Schema(parse(t, tc.in))
			if err != nil {
				t.Fatalf("Schema(%s) = %v", tc.in, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Schema(%s) mismatch (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestSchemaUnsupported(t *testing.T) {
	for _, tc := range []struct {
		name, in, wantErr string
	}{
		{"typed additionalProperties", `{"type":"object","additionalProperties":{"type":"integer"}}`, `schema at /: keyword "additionalProperties"`},
		{"oneOf", `{"oneOf":[{"type":"string"},{"type":"number"}]}`, `keyword "oneOf"`},
		{"allOf", `{"type":"object","allOf":[{"required":["a"]}]}`, `keyword "allOf"`},
		{"not", `{"type":"string","not":{"enum":["x"]}}`, `keyword "not"`},
		{"const", `{"type":"string","const":"x"}`, `keyword "const"`},
		{"patternProperties", `{"type":"object","patternProperties":{"^x":{"type":"string"}}}`, `keyword "patternProperties"`},
		{"prefixItems", `{"type":"array","prefixItems":[{"type":"string"}]}`, `keyword "prefixItems"`},
		{"if then else", `{"type":"object","if":{"required":["a"]},"then":{"required":["b"]}}`, `keyword "if"`},
		{"exclusiveMinimum", `{"type":"number","exclusiveMinimum":0}`, `keyword "exclusiveMinimum"`},
		{"multipleOf", `{"type":"integer","multipleOf":5}`, `keyword "multipleOf"`},
		{"uniqueItems", `{"type":"array","items":{"type":"string"},"uniqueItems":true}`, `keyword "uniqueItems"`},
		{"unknown keyword", `{"type":"string","x-secret":1}`, `keyword "x-secret"`},
		{"non-string enum", `{"type":"integer","enum":[1,2]}`, `enum on type "integer" (Gemini takes string enums only)`},
		{"mixed enum", `{"enum":["a",1]}`, `enum value 1 is not a string`},
		{"empty enum", `{"type":"string","enum":[]}`, `empty enum`},
		{"several types", `{"type":["string","number"]}`, `several types [string number]`},
		{"no type", `{"type":"object","properties":{"any":{}}}`, `schema at /properties/any: no type: the schema accepts any value`},
		{"unknown type", `{"type":"strin"}`, `unknown type "strin"`},
		{"format Gemini refuses", `{"type":"object","properties":{"u":{"type":"string","format":"uri"}}}`,
			`schema at /properties/u: format "uri" on type "string" (Gemini accepts [enum date-time])`},
		{"required not defined", `{"type":"object","properties":{"a":{"type":"string"}},"required":["b"]}`, `required property "b" is not defined`},
		{"recursive $ref", `{"type":"object","properties":{"n":{"$ref":"#/$defs/node"}},"$defs":{"node":{"type":"object","properties":{"next":{"$ref":"#/$defs/node"}}}}}`,
			`schema at /properties/n/properties/next: recursive $ref "#/$defs/node"`},
		{"root $ref", `{"type":"object","properties":{"self":{"$ref":"#"}}}`, `$ref "#" does not point into the root's $defs`},
		{"remote $ref", `{"type":"object","properties":{"a":{"$ref":"https://example.com/a.json"}}}`, `does not point inside the schema`},
		{"dangling $ref", `{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`, `$ref "#/$defs/missing" does not point`},
		{"keyword next to $ref", `{"type":"object","properties":{"a":{"$ref":"#/$defs/s","minLength":2}},"$defs":{"s":{"type":"string"}}}`, `keyword "minLength" next to $ref`},
		{"deep in items", `{"type":"array","items":{"type":"object","properties":{"x":{"const":1}}}}`, `schema at /items/properties/x: keyword "const"`},
		{"deep in anyOf", `{"anyOf":[{"type":"string"},{"oneOf":[]}]}`, `schema at /anyOf/1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := geminiadapter.Schema(parse(t, tc.in))
			if err == nil {
				t.Fatalf("Schema(%s) = %+v, want error containing %q", tc.in, got, tc.wantErr)
			}
			if !errors.Is(err, geminiadapter.ErrUnsupported) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Schema(%s) error = %q\nwant ErrUnsupported containing %q", tc.in, err, tc.wantErr)
			}
		})
	}
}

func TestSchemaNil(t *testing.T) {
	if got, err := geminiadapter.Schema(nil); got != nil || err != nil {
		t.Errorf("Schema(nil) = %v, %v; want nil, nil", got, err)
	}
}

// Schemas inferred by jsonschema.For from ordinary structs convert to
// Parameters: additionalProperties:false (the false schema) is dropped and
// ["null", T] slices and pointers become nullable.
func TestSchemaFromFor(t *testing.T) {
	type Address struct {
		Street string `json:"street"`
		City   string `json:"city" jsonschema:"the city"`
	}
	type Input struct {
		Query   string    `json:"query" jsonschema:"what to look for"`
		Limit   int       `json:"limit,omitempty"`
		Score   float64   `json:"score,omitempty"`
		Exact   bool      `json:"exact,omitempty"`
		Tags    []string  `json:"tags,omitempty"`
		Home    *Address  `json:"home,omitempty"`
		Work    Address   `json:"work"`
		Small   int8      `json:"small,omitempty"`
		Since   time.Time `json:"since,omitzero"`
		Ratings []float64 `json:"ratings"`
	}
	s, err := jsonschema.For[Input](nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := geminiadapter.Schema(s)
	if err != nil {
		t.Fatalf("Schema(For[Input]) = %v", err)
	}
	addr := &genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{
		"street": {Type: genai.TypeString}, "city": {Type: genai.TypeString, Description: "the city"}},
		Required: []string{"street", "city"}, PropertyOrdering: []string{"street", "city"}}
	home := *addr
	home.Nullable = genai.Ptr(true)
	want := &genai.Schema{
		Type: genai.TypeObject,
		Properties: map[string]*genai.Schema{
			"query":   {Type: genai.TypeString, Description: "what to look for"},
			"limit":   {Type: genai.TypeInteger},
			"score":   {Type: genai.TypeNumber},
			"exact":   {Type: genai.TypeBoolean},
			"tags":    {Type: genai.TypeArray, Nullable: genai.Ptr(true), Items: &genai.Schema{Type: genai.TypeString}},
			"home":    &home,
			"work":    addr,
			"small":   {Type: genai.TypeInteger, Minimum: genai.Ptr(-128.0), Maximum: genai.Ptr(127.0)},
			"since":   {Type: genai.TypeString},
			"ratings": {Type: genai.TypeArray, Nullable: genai.Ptr(true), Items: &genai.Schema{Type: genai.TypeNumber}},
		},
		Required:         []string{"query", "work", "ratings"},
		PropertyOrdering: []string{"query", "limit", "score", "exact", "tags", "home", "work", "small", "since", "ratings"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Schema(For[Input]) mismatch (-want +got):\n%s", diff)
	}
}

// A Go map field becomes a typed additionalProperties, which genai.Schema
// cannot say.
func TestSchemaFromForWithMap(t *testing.T) {
	type Input struct {
		Labels map[string]string `json:"labels"`
	}
	s, err := jsonschema.For[Input](nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := geminiadapter.Schema(s); !errors.Is(err, geminiadapter.ErrUnsupported) {
		t.Errorf("Schema(map field) = %v, want ErrUnsupported", err)
	}
}

// Converting never changes the input schema.
func TestSchemaDoesNotModifyInput(t *testing.T) {
	src := `{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"string","enum":["p"]}},"required":["a"],"additionalProperties":false}`
	s := parse(t, src)
	if _, err := geminiadapter.Schema(s); err != nil {
		t.Fatal(err)
	}
	after, _ := json.Marshal(s)
	before, _ := json.Marshal(parse(t, src))
	if string(after) != string(before) {
		t.Errorf("schema changed:\n%s\nwas\n%s", after, before)
	}
}
