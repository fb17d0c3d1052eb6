package schemajson

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

func TestCheckDepth(t *testing.T) {
	for _, tc := range []struct {
		json string
		max  int
		ok   bool
	}{
		{`{}`, 1, true},
		{`{"a":[1]}`, 1, false},
		{`{"a":[1]}`, 2, true},
		{`"[[[[{{{{"`, 1, true},              // brackets in a string
		{`{"a\"[[[":"\\"}`, 1, true},         // an escaped quote, an escaped backslash
		{`["\\\"[[[",{"b":"]]]"}]`, 2, true}, // escapes before a quote
		{`["\\",[[["x"]]]]`, 3, false},       // a string ending in an escaped backslash
		{`[[[],[],[]],[[],[]]]`, 3, true},    // siblings do not add up
		{`"unterminated [[[[`, 1, true},      // not well-formed: the decoder's to say
		{strings.Repeat("[", 65) + strings.Repeat("]", 65), MaxDepth, false},
		{strings.Repeat("[", 64) + strings.Repeat("]", 64), MaxDepth, true},
	} {
		err := CheckDepth([]byte(tc.json), tc.max)
		if (err == nil) != tc.ok || err != nil && !errors.Is(err, ErrTooDeep) {
			t.Errorf("CheckDepth(%.40s, %d) = %v, want ok=%v", tc.json, tc.max, err, tc.ok)
		}
	}
}

// theirs decodes data as jsonschema-go does.
func theirs(data []byte) (*jsonschema.Schema, error) {
	var s *jsonschema.Schema
	err := json.Unmarshal(data, &s)
	return s, err
}

// corpus returns schemas written for the purpose, with every keyword and
// the forms jsonschema-go decodes by hand, and the schemas of the JSON
// Schema test suite jsonschema-go ships, when the module cache has it.
func corpus(t testing.TB) []string {
	schemas := []string{
		`true`, `false`, `{}`, `null`,
		`{"type":"string","minLength":1,"maxLength":2.0,"pattern":"^a","format":"email","description":"<b>&"}`,
		`{"type":["string","null"],"enum":["a",1,2.5,null,{"x":[1]}],"const":null,"default":{"a":1e3}}`,
		`{"const":12345678901234567890,"examples":[1,"x"],"deprecated":true,"readOnly":true,"writeOnly":true}`,
		`{"type":"array","items":{"type":"integer","minimum":0,"maximum":10,"exclusiveMinimum":-1,"multipleOf":0.5},"minItems":1,"maxItems":3,"uniqueItems":true}`,
		`{"items":[{"type":"string"},true,false,null],"additionalItems":{"type":"number"}}`,
		`{"items":null}`, `{"items":false}`, `{"prefixItems":[{},{"type":"null"}],"contains":{"const":1},"minContains":1,"maxContains":2,"unevaluatedItems":false}`,
		`{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"$ref":"#/$defs/x"}},"required":["b"]}},"$defs":{"x":{"type":"string"}},"definitions":{"y":true}}`,
		`{"properties":{},"patternProperties":{"^x-":{"type":"string"}},"additionalProperties":false,"propertyNames":{"maxLength":3},"unevaluatedProperties":{"type":"null"},"minProperties":0,"maxProperties":4}`,
		`{"properties":{"a":null},"allOf":[{},null],"anyOf":[],"oneOf":[{"type":"string"},{"type":"number"}],"not":{"type":"null"}}`,
		`{"if":{"properties":{"k":{"const":"a"}}},"then":{"required":["a"]},"else":{"required":["b"]},"dependentSchemas":{"a":{"required":["b"]}},"dependentRequired":{"a":["b","c"]}}`,
		`{"dependencies":{"a":["b"],"c":{"required":["d"]},"e":null,"f":[]}}`, `{"dependencies":null}`,
		`{"contentEncoding":"base64","contentMediaType":"application/json","contentSchema":{"type":"object"}}`,
		`{"$id":"https://example.com/s","$schema":"https://json-schema.org/draft/2020-12/schema","$anchor":"a","$dynamicAnchor":"d","$dynamicRef":"#d","$comment":"c","$vocabulary":{"v":true},"title":"t"}`,
		`{"x-extension":{"deep":[{"a":[1,2,{"b":null}]}]},"propertyOrdering":["a","b"],"nullable":true,"unknown":12.50}`,
		`{"not":{"not":{"not":{"items":{"items":[{"properties":{"a":{"anyOf":[{"$ref":"#"}]}}}]}}}}}`,
		`{"type":"string","minLength":1.5}`,         // refused: not an integer
		`{"type":"string","maxLength":99999999999}`, // refused: out of range
		`{"type":5}`, `{"properties":[]}`, `{"allOf":{}}`, `{"not":"x"}`, `{"items":"x"}`, `{"dependencies":{"a":"x"}}`, `[]`, `"s"`, `3`,
	}
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/google/jsonschema-go").Output()
	if err != nil {
		t.Logf("no JSON Schema test suite from jsonschema-go's module (%v): the written schemas only", err)
		return schemas
	}
	files, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(dir)), "jsonschema", "testdata", "*", "*.json"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var groups []struct {
			Schema json.RawMessage `json:"schema"`
		}
		if json.Unmarshal(b, &groups) != nil {
			continue
		}
		for _, g := range groups {
			schemas = append(schemas, string(g.Schema))
		}
	}
	if len(files) == 0 {
		t.Logf("jsonschema-go's module has no testdata: the written schemas only")
	}
	return schemas
}

// Decode makes of every schema what jsonschema-go's decoding makes of it,
// and refuses what it refuses.
func TestDecodeAsJSONSchemaGo(t *testing.T) {
	schemas := corpus(t)
	t.Logf("%d schemas", len(schemas))
	for _, s := range schemas {
		same(t, []byte(s))
	}
}

func same(t *testing.T, data []byte) {
	t.Helper()
	want, werr := theirs(data)
	got, gerr := Decode(data)
	switch {
	case werr != nil && gerr != nil:
	case werr != nil || gerr != nil:
		t.Errorf("%s:\njsonschema-go: %v\nDecode:        %v", data, werr, gerr)
	case !reflect.DeepEqual(got, want):
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		t.Errorf("%s:\njsonschema-go: %s\nDecode:        %s", data, wb, gb)
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range corpus(f) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if CheckDepth(data, MaxDepth) != nil || !json.Valid(data) || foldedKeyword(data) || duplicateKey(data) {
			t.Skip()
		}
		same(t, data)
	})
}

// foldedKeyword reports whether data has an object key that names a
// schema-valued keyword in another case: jsonschema-go decodes the
// keyword and keeps the key among the unknown ones (Extra) too, Decode
// only decodes the keyword.
func foldedKeyword(data []byte) bool {
	var keys func(v any) bool
	keys = func(v any) bool {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				fk := fold(k)
				if lookup(k, fk) != nil && lookup(k, fk).name != k ||
					is(k, fk, keyItems, foldedItems) && k != keyItems || is(k, fk, keyDependencies, foldedDependencies) && k != keyDependencies || keys(x) {
					return true
				}
			}
		case []any:
			for _, x := range v {
				if keys(x) {
					return true
				}
			}
		}
		return false
	}
	var v any
	json.Unmarshal(data, &v)
	return keys(v)
}

// duplicateKey reports whether an object of data has a key twice:
// jsonschema-go reports the first value's error, if any, Decode takes the
// last value (as a map does).
func duplicateKey(data []byte) bool {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	type frame struct {
		obj  bool
		key  bool // the next string of an object is a key
		seen map[string]bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch tok := tok.(type) {
		case json.Delim:
			switch tok {
			case '{', '[':
				if top != nil && top.obj {
					top.key = true
				}
				stack = append(stack, &frame{obj: tok == '{', key: tok == '{', seen: map[string]bool{}})
			default:
				stack = stack[:len(stack)-1]
			}
			continue
		case string:
			if top != nil && top.obj && top.key {
				if top.seen[tok] {
					return true
				}
				top.seen[tok], top.key = true, false
				continue
			}
		}
		if top != nil && top.obj {
			top.key = true
		}
	}
}

// A keyword in another case is decoded as encoding/json decodes it (into
// its field), here rather than by jsonschema-go: none reaches its decoder
// with a subschema under it.
func TestDecodeFoldedKeywords(t *testing.T) {
	s, err := Decode([]byte(`{"PROPERTIES":{"a":{"type":"string"}},"Items":{"type":"number"},"ıtems":true,"AnyOf":[{}],"$DEFS":{"d":{}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Properties["a"] == nil || s.Properties["a"].Type != "string" || s.Items == nil || len(s.AnyOf) != 1 || s.Defs["d"] == nil {
		t.Errorf("got %+v", s)
	}
	// A deep subschema under such a key costs what it weighs: see
	// TestDecodeLinear.
}

func TestDecodeTooDeep(t *testing.T) {
	deep := strings.Repeat(`{"items":`, 65) + `{}` + strings.Repeat(`}`, 65)
	if _, err := Decode([]byte(deep)); !errors.Is(err, ErrTooDeep) {
		t.Errorf("65 levels: %v, want ErrTooDeep", err)
	}
	ok := strings.Repeat(`{"items":`, 63) + `{}` + strings.Repeat(`}`, 63)
	if _, err := Decode([]byte(ok)); err != nil {
		t.Errorf("64 levels: %v", err)
	}
}

// chain returns a schema depth levels deep, each an array of the next,
// whose last level's description is leaf bytes long: what costs
// jsonschema-go's decoder most for its size.
func chain(depth, leaf int) []byte {
	var b strings.Builder
	for range depth {
		b.WriteString(`{"type":"array","items":`)
	}
	b.WriteString(`{"type":"string","description":"` + strings.Repeat("x", leaf) + `"}`)
	b.WriteString(strings.Repeat("}", depth))
	return []byte(b.String())
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Decode allocates a bounded multiple of a schema's size, however deep it
// is within MaxDepth; jsonschema-go's decoder allocates a multiple of the
// size times the depth.
func TestDecodeLinear(t *testing.T) {
	flat, deep := chain(1, 64<<10), chain(63, 64<<10)
	for _, tc := range []struct {
		name string
		data []byte
	}{{"1 level", flat}, {"63 levels", deep}, {"folded keywords", []byte(strings.ReplaceAll(string(deep), `"items"`, `"ITEMS"`))}} {
		n := allocated(func() {
			if _, err := Decode(tc.data); err != nil {
				t.Fatal(err)
			}
		})
		if n > uint64(20*len(tc.data)) {
			t.Errorf("%s: Decode allocated %d bytes for a schema of %d", tc.name, n, len(tc.data))
		}
		theirs := allocated(func() { theirs(tc.data) })
		t.Logf("%s (%d bytes): Decode allocated %d bytes, jsonschema-go %d", tc.name, len(tc.data), n, theirs)
	}
}

func BenchmarkDecode(b *testing.B) {
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"depth=1/64KiB", chain(1, 64<<10)},
		{"depth=63/64KiB", chain(63, 64<<10)},
		{"depth=63/256KiB", chain(63, 256<<10)},
	} {
		b.Run("Decode/"+tc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(tc.data)))
			for b.Loop() {
				if _, err := Decode(tc.data); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("jsonschema-go/"+tc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(tc.data)))
			for b.Loop() {
				if _, err := theirs(tc.data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkCheckDepth(b *testing.B) {
	data := chain(63, 256<<10)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if err := CheckDepth(data, MaxDepth); err != nil {
			b.Fatal(err)
		}
	}
}
