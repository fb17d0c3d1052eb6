// Package schemajson decodes JSON Schemas that come from outside the
// process (a browser's tool declarations, a run's journal, an MCP
// server's tools) in time and memory linear in their size, their nesting
// bounded.
//
// jsonschema-go's own decoder (Schema.UnmarshalJSON, v0.4.3) decodes a
// schema's whole subtree again at each of its levels: it tries the bytes
// as a boolean, decodes them into a struct (whose schema-valued fields
// run the same method on their own subtrees), then into a map[string]any
// to find the keywords it does not know. A schema n levels deep costs n
// passes over, and n generic copies of, what lies below: quadratic, 2.9 s
// and 235 MB for 25 KB nested 1,000 deep. Decode checks the nesting in
// one pass over the bytes first (MaxDepth), then decodes the whole value
// once, generically, and hands jsonschema-go each schema's own keywords
// only, without its subschemas, which it puts in place itself: every
// byte is decoded a bounded number of times.
package schemajson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode"

	"github.com/google/jsonschema-go/jsonschema"
)

// MaxDepth bounds how deeply a schema's JSON nests, objects and arrays
// counted alike: a property of an object schema is two levels
// ("properties", then the property's schema), an array's items one. Real
// tools' schemas nest a handful of levels; 64 leaves room for 30 levels
// of nested objects.
const MaxDepth = 64

// ErrTooDeep is wrapped by the error of a schema that nests deeper than
// MaxDepth.
var ErrTooDeep = errors.New("the schema nests too deeply")

// CheckDepth returns an error wrapping ErrTooDeep when the JSON value
// data nests objects and arrays more than max deep. It reads data once,
// skipping strings, and allocates nothing; it does not check that data
// is well-formed (a decoder does that after it).
func CheckDepth(data []byte, max int) error {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			// Skip the string: to its closing quote, past escapes.
			for i++; i < len(data); i++ {
				j := bytes.IndexAny(data[i:], `"\`)
				if j < 0 {
					return nil
				}
				i += j
				if data[i] == '"' {
					break
				}
				i++ // the escaped character
			}
		case '{', '[':
			if depth++; depth > max {
				return fmt.Errorf("%w: more than %d levels of objects and arrays", ErrTooDeep, max)
			}
		case '}', ']':
			depth--
		}
	}
	return nil
}

// Decode decodes the JSON Schema data: nil for no bytes or null, and an
// error wrapping ErrTooDeep for one that nests deeper than MaxDepth. The
// schema is what jsonschema-go's own decoding makes of data.
func Decode(data []byte) (*jsonschema.Schema, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || string(data) == "null" {
		return nil, nil
	}
	if err := CheckDepth(data, MaxDepth); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // numbers are handed on as written
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("the schema is followed by more JSON")
	}
	return convert(v)
}

// A field is a schema-valued field of jsonschema.Schema.
type field struct {
	name   string // its JSON name
	folded string
	index  []int
	kind   reflect.Type // *Schema, []*Schema or map[string]*Schema
}

var (
	schemaType      = reflect.TypeFor[*jsonschema.Schema]()
	schemaSliceType = reflect.TypeFor[[]*jsonschema.Schema]()
	schemaMapType   = reflect.TypeFor[map[string]*jsonschema.Schema]()
)

// fields are jsonschema.Schema's schema-valued fields that encoding/json
// fills by their JSON names; items and dependencies, which Schema decodes
// by hand (a schema or an array, a schema or strings), are handled apart.
var fields = func() []field {
	var fs []field
	t := reflect.TypeFor[jsonschema.Schema]()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "" || name == "-" {
			continue
		}
		if f.Type == schemaType || f.Type == schemaSliceType || f.Type == schemaMapType {
			fs = append(fs, field{name: name, folded: fold(name), index: f.Index, kind: f.Type})
		}
	}
	return fs
}()

// Keywords jsonschema.Schema decodes by hand.
const (
	keyItems        = "items"
	keyDependencies = "dependencies"
)

// fold returns s as encoding/json compares names that may differ in case
// (each letter upper-cased after lower-casing): a keyword written in
// another case fills the same field, so it must be found the same way.
func fold(s string) string {
	return strings.Map(func(r rune) rune { return unicode.ToUpper(unicode.ToLower(r)) }, s)
}

// is reports whether the object key k (fk, folded) names the keyword
// name (folded, folded), in any case.
func is(k, fk, name, folded string) bool {
	return k == name || fk == folded || strings.EqualFold(k, name)
}

var (
	foldedItems        = fold(keyItems)
	foldedDependencies = fold(keyDependencies)
)

// convert makes a schema of v, a JSON value decoded with UseNumber.
func convert(v any) (*jsonschema.Schema, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil // as encoding/json leaves a *Schema of null
	case bool:
		var s jsonschema.Schema
		err := json.Unmarshal([]byte(fmt.Sprint(v)), &s) // true and false, as jsonschema-go makes them
		return &s, err
	case map[string]any:
		return convertObject(v)
	}
	return nil, errors.New("a schema is an object or a boolean")
}

func convertObject(m map[string]any) (*jsonschema.Schema, error) {
	// The schema's own keywords go to jsonschema-go as they are; its
	// subschemas are converted here, and put in place after.
	own := make(map[string]any, len(m))
	type sub struct {
		f *field
		v any
	}
	var subs []sub
	var items, deps any
	var hasItems, hasDeps bool
	for k, x := range m {
		fk := fold(k)
		switch {
		case is(k, fk, keyItems, foldedItems):
			items, hasItems = x, true
			continue
		case is(k, fk, keyDependencies, foldedDependencies):
			deps, hasDeps = x, true
			continue
		}
		f := lookup(k, fk)
		if f == nil {
			own[k] = x
			continue
		}
		subs = append(subs, sub{f, x})
	}
	// Dependencies: a list of property names stays (jsonschema-go reads
	// it), a schema is converted.
	var depSchemas map[string]*jsonschema.Schema
	if hasDeps && deps != nil {
		dm, ok := deps.(map[string]any)
		if !ok {
			return nil, errors.New("dependencies is not an object")
		}
		names := map[string]any{}
		for k, x := range dm {
			if _, ok := x.([]any); ok {
				names[k] = x
				continue
			}
			s, err := convert(orFalse(x))
			if err != nil {
				return nil, fmt.Errorf("dependencies %q: %w", k, err)
			}
			if depSchemas == nil {
				depSchemas = map[string]*jsonschema.Schema{}
			}
			depSchemas[k] = s
		}
		if len(names) > 0 {
			own[keyDependencies] = names
		}
	}
	b, err := json.Marshal(own)
	if err != nil {
		return nil, err
	}
	s := new(jsonschema.Schema)
	if err := json.Unmarshal(b, s); err != nil {
		return nil, err
	}
	if depSchemas != nil {
		s.DependencySchemas = depSchemas
	}
	if hasItems {
		switch x := items.(type) {
		case []any:
			list, err := convertList(keyItems, x)
			if err != nil {
				return nil, err
			}
			s.ItemsArray = list
		default:
			c, err := convert(orFalse(x))
			if err != nil {
				return nil, fmt.Errorf("items: %w", err)
			}
			s.Items = c
		}
	}
	sv := reflect.ValueOf(s).Elem()
	for _, sb := range subs {
		val, err := convertField(sb.f, sb.v)
		if err != nil {
			return nil, err
		}
		sv.FieldByIndex(sb.f.index).Set(val)
	}
	return s, nil
}

// orFalse returns v, or false for null: jsonschema-go decodes a null it
// meets where it decodes items and dependencies by hand as the schema
// false (its decoder reads null as the boolean false).
func orFalse(v any) any {
	if v == nil {
		return false
	}
	return v
}

// lookup returns the schema-valued field the object key k (fk, folded)
// names, in any case; nil for another keyword.
func lookup(k, fk string) *field {
	for i := range fields {
		if is(k, fk, fields[i].name, fields[i].folded) {
			return &fields[i]
		}
	}
	return nil
}

// convertField converts v, the value of f's keyword, to f's type.
func convertField(f *field, v any) (reflect.Value, error) {
	switch f.kind {
	case schemaType:
		s, err := convert(v)
		if err != nil {
			return reflect.Value{}, fmt.Errorf("%s: %w", f.name, err)
		}
		return reflect.ValueOf(s), nil
	case schemaSliceType:
		if v == nil {
			return reflect.Zero(f.kind), nil
		}
		x, ok := v.([]any)
		if !ok {
			return reflect.Value{}, fmt.Errorf("%s is not an array", f.name)
		}
		list, err := convertList(f.name, x)
		return reflect.ValueOf(list), err
	}
	if v == nil {
		return reflect.Zero(f.kind), nil
	}
	x, ok := v.(map[string]any)
	if !ok {
		return reflect.Value{}, fmt.Errorf("%s is not an object", f.name)
	}
	out := make(map[string]*jsonschema.Schema, len(x))
	for k, e := range x {
		s, err := convert(e)
		if err != nil {
			return reflect.Value{}, fmt.Errorf("%s %q: %w", f.name, k, err)
		}
		out[k] = s
	}
	return reflect.ValueOf(out), nil
}

func convertList(name string, x []any) ([]*jsonschema.Schema, error) {
	out := make([]*jsonschema.Schema, len(x))
	for i, e := range x {
		s, err := convert(e)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", name, i, err)
		}
		out[i] = s
	}
	return out, nil
}
