package openaiadapter

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// ErrNotStrict is wrapped by the error [StrictParameters] returns for a
// schema that OpenAI's strict mode cannot take faithfully.
var ErrNotStrict = errors.New("schema cannot be declared strict")

// The limits of strict mode's schemas (OpenAI, Structured Outputs,
// "Supported schemas").
const (
	maxStrictDepth      = 10      // levels of object nesting
	maxStrictProperties = 5000    // object properties in all
	maxStrictEnumValues = 1000    // enum values in all
	maxStrictStringLen  = 120_000 // property names, definition names, enum and const values
	bigEnum             = 250     // an enum of more string values than this...
	maxBigEnumLen       = 15_000  // ...has at most this many characters in all
)

// strictFormats are the string formats strict mode supports.
var strictFormats = map[string]bool{"date-time": true, "time": true, "date": true, "duration": true,
	"email": true, "hostname": true, "ipv4": true, "ipv6": true, "uuid": true}

// Parameters returns the parameters OpenAI is sent for t without strict
// mode: its JSON Schema as it is, property order kept, with one rewrite.
// OpenAI refuses an array schema without "items" ("array schema missing
// items"), even where JSON Schema lets it mean any items: such an array is
// sent with "items": true, which says the same. A tool without parameters
// gets {"type": "object", "properties": {}}, as OpenAI documents it.
func Parameters(t *toolset.Tool) (map[string]any, error) {
	if err := check(t); err != nil {
		return nil, err
	}
	s := t.Schema()
	missing := func(n *jsonschema.Schema) bool {
		return isType(n, "array") && n.Items == nil && n.ItemsArray == nil && n.PrefixItems == nil
	}
	for n := range walk(s) {
		if missing(n) {
			s = s.CloneSchemas() // the tool's schema is never changed
			for n := range walk(s) {
				if missing(n) {
					n.Items = &jsonschema.Schema{}
				}
			}
			break
		}
	}
	return params(s)
}

// StrictParameters returns the parameters OpenAI is sent for t in strict
// mode, or an error wrapping [ErrNotStrict] that says why t's schema cannot
// be strict. Strict mode takes a subset of JSON Schema (see the package
// doc); within it the schema is rewritten the way OpenAI asks, and only in
// ways that keep what the tool accepts:
//
//   - every object gets "additionalProperties": false, and every one of its
//     properties becomes required;
//   - a property that was optional becomes nullable (["string", "null"], or
//     anyOf with {"type": "null"}), and a null the model sends for it is
//     taken as its absence before the call is validated ([Options.ExecuteChat]);
//   - annotations strict mode refuses ("default", "examples", "$schema",
//     "$comment", "deprecated", "readOnly", "writeOnly") are dropped; the
//     tool still applies its defaults.
//
// Anything else outside the subset (oneOf, allOf, not, if/then/else,
// patternProperties, typed additionalProperties, a format or keyword strict
// mode does not list, a schema without a type…), an object with optional
// properties inside anyOf, and schemas past strict mode's size limits are
// refused.
func StrictParameters(t *toolset.Tool) (map[string]any, error) {
	if err := check(t); err != nil {
		return nil, err
	}
	root := t.Schema().CloneSchemas()
	st := &strictor{root: root, orig: t.Schema()}
	if root.AnyOf != nil {
		st.fail("", "the root schema must be an object, not anyOf")
	}
	st.rewrite(root, "", 1, false)
	for _, defs := range []map[string]*jsonschema.Schema{root.Defs, root.Definitions} {
		for _, name := range sortedKeys(defs) {
			st.strings += len(name)
			st.rewrite(defs[name], "/$defs/"+name, 1, false)
		}
	}
	switch {
	case st.err != nil:
	case st.properties > maxStrictProperties:
		st.fail("", "it has %d object properties; strict mode takes at most %d", st.properties, maxStrictProperties)
	case st.enumValues > maxStrictEnumValues:
		st.fail("", "it has %d enum values; strict mode takes at most %d", st.enumValues, maxStrictEnumValues)
	case st.strings > maxStrictStringLen:
		st.fail("", "its names, enum and const values have %d characters; strict mode takes at most %d", st.strings, maxStrictStringLen)
	}
	if st.err != nil {
		return nil, fmt.Errorf("openaiadapter: tool %s: %w", t.Name, st.err)
	}
	return params(root)
}

// strictor rewrites a schema for strict mode, counting what the limits
// count, and keeps the first reason it cannot.
type strictor struct {
	root       *jsonschema.Schema // the schema being rewritten
	orig       *jsonschema.Schema // the tool's schema, as it is
	err        error
	properties int
	enumValues int
	strings    int
}

func (st *strictor) fail(at, format string, args ...any) {
	if st.err == nil {
		if at == "" {
			at = "/"
		}
		st.err = fmt.Errorf("%w: at %s: %s", ErrNotStrict, at, fmt.Sprintf(format, args...))
	}
}

// rewrite rewrites s, found at the JSON pointer at, depth levels of objects
// deep; inAnyOf says s is within a branch of an anyOf that has more than
// one branch besides {"type": "null"}, where the nulls of optional
// properties could not be told apart when the call comes (see dropNulls).
func (st *strictor) rewrite(s *jsonschema.Schema, at string, depth int, inAnyOf bool) {
	if st.err != nil || s == nil {
		return
	}
	if kw := unsupported(s); kw != "" {
		st.fail(at, "keyword %q is not supported in strict mode", kw)
		return
	}
	if s.AdditionalProperties != nil && !isFalse(s.AdditionalProperties) {
		st.fail(at, "strict mode needs \"additionalProperties\": false")
		return
	}
	if s.Format != "" && !strictFormats[s.Format] {
		st.fail(at, "format %q is not supported in strict mode", s.Format)
		return
	}
	if s.Type == "" && len(s.Types) == 0 && s.AnyOf == nil && s.Ref == "" {
		st.fail(at, "strict mode needs a type")
		return
	}
	if s.Ref != "" && st.lookup(s.Ref) == nil {
		st.fail(at, "$ref %q does not name a definition ($defs or definitions) or the root", s.Ref)
		return
	}
	if inAnyOf && s.Ref != "" && hasOptional(st.orig, lookup(st.orig, s.Ref), map[*jsonschema.Schema]bool{}) {
		st.fail(at, "$ref %q inside anyOf has optional properties, which cannot be made required", s.Ref)
		return
	}
	// Annotations strict mode refuses; the tool keeps them.
	s.Schema, s.Comment, s.Default, s.Examples = "", "", nil, nil
	s.Deprecated, s.ReadOnly, s.WriteOnly = false, false, false
	if at != "" {
		s.Defs, s.Definitions = nil, nil // only the root's are kept (and rewritten)
	}

	st.enumValues += len(s.Enum)
	enumLen := 0
	for _, v := range s.Enum {
		if str, ok := v.(string); ok {
			enumLen += len(str)
		}
	}
	st.strings += enumLen
	if len(s.Enum) > bigEnum && enumLen > maxBigEnumLen {
		st.fail(at, "an enum of %d values has %d characters; strict mode takes at most %d past %d values",
			len(s.Enum), enumLen, maxBigEnumLen, bigEnum)
	}
	if s.Const != nil {
		if str, ok := (*s.Const).(string); ok {
			st.strings += len(str)
		}
	}

	if isType(s, "object") || s.Properties != nil {
		if depth > maxStrictDepth {
			st.fail(at, "objects nest more than %d levels deep", maxStrictDepth)
			return
		}
		if len(s.Properties) == 0 && at != "" {
			st.fail(at, "strict mode needs an object's properties")
			return
		}
		st.properties += len(s.Properties)
		names := propertyNames(s)
		required := make(map[string]bool, len(s.Required))
		for _, r := range s.Required {
			if _, ok := s.Properties[r]; !ok {
				st.fail(at, "required property %q is not among the properties", r)
				return
			}
			required[r] = true
		}
		props := make(map[string]*jsonschema.Schema, len(s.Properties))
		for _, name := range names {
			st.strings += len(name)
			p := s.Properties[name]
			st.rewrite(p, at+"/properties/"+name, depth+1, inAnyOf)
			if !required[name] && !st.acceptsNull(p, 0) {
				if inAnyOf {
					st.fail(at, "optional property %q inside anyOf cannot be made required", name)
				}
				p = nullable(p)
			}
			props[name] = p
		}
		s.Properties = props
		s.PropertyOrder = names
		s.Required = names
		s.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}}
	}
	st.rewrite(s.Items, at+"/items", depth, inAnyOf)
	_, single := soleBranch(s.AnyOf)
	for i, b := range s.AnyOf {
		st.rewrite(b, fmt.Sprintf("%s/anyOf/%d", at, i), depth, inAnyOf || !single)
	}
}

// unsupported returns a keyword of s that strict mode does not support,
// or "". Strict mode supports type, enum, const, anyOf, $ref and $defs,
// properties, required, additionalProperties: false, items, minItems and
// maxItems, the numeric bounds and multipleOf, pattern, format, minLength
// and maxLength, title and description.
func unsupported(s *jsonschema.Schema) string {
	for _, kw := range []struct {
		name string
		set  bool
	}{
		{"$id", s.ID != ""}, {"$anchor", s.Anchor != ""}, {"$dynamicAnchor", s.DynamicAnchor != ""},
		{"$dynamicRef", s.DynamicRef != ""}, {"$vocabulary", s.Vocabulary != nil},
		{"allOf", s.AllOf != nil}, {"oneOf", s.OneOf != nil}, {"not", s.Not != nil},
		{"if", s.If != nil}, {"then", s.Then != nil}, {"else", s.Else != nil},
		{"dependentRequired", s.DependentRequired != nil}, {"dependentSchemas", s.DependentSchemas != nil},
		{"dependencies", s.DependencySchemas != nil || s.DependencyStrings != nil},
		{"patternProperties", s.PatternProperties != nil}, {"propertyNames", s.PropertyNames != nil},
		{"unevaluatedProperties", s.UnevaluatedProperties != nil}, {"unevaluatedItems", s.UnevaluatedItems != nil},
		{"minProperties", s.MinProperties != nil}, {"maxProperties", s.MaxProperties != nil},
		{"prefixItems", s.PrefixItems != nil}, {"items", s.ItemsArray != nil}, {"additionalItems", s.AdditionalItems != nil},
		{"uniqueItems", s.UniqueItems}, {"contains", s.Contains != nil},
		{"minContains", s.MinContains != nil}, {"maxContains", s.MaxContains != nil},
		{"contentEncoding", s.ContentEncoding != ""}, {"contentMediaType", s.ContentMediaType != ""},
		{"contentSchema", s.ContentSchema != nil},
	} {
		if kw.set {
			return kw.name
		}
	}
	for _, k := range sortedKeys(s.Extra) {
		return k
	}
	return ""
}

// nullable returns p made to accept null as well: ["T", "null"] for a
// plain type, anyOf [p, {"type": "null"}] otherwise.
func nullable(p *jsonschema.Schema) *jsonschema.Schema {
	if p.Enum == nil && p.Const == nil && p.Ref == "" && p.AnyOf == nil {
		if p.Type != "" {
			p.Types, p.Type = []string{p.Type, "null"}, ""
			return p
		}
		if len(p.Types) > 0 {
			p.Types = append(slices.Clip(p.Types), "null")
			return p
		}
	}
	return &jsonschema.Schema{Description: p.Description, AnyOf: []*jsonschema.Schema{p, {Type: "null"}}}
}

// acceptsNull reports whether s accepts null, as far as strict mode's
// keywords tell; depth bounds the $ref chain.
func (st *strictor) acceptsNull(s *jsonschema.Schema, depth int) bool {
	return acceptsNull(st.root, s, depth)
}

func acceptsNull(root, s *jsonschema.Schema, depth int) bool {
	switch {
	case s == nil:
		return true
	case s.Type == "null" || slices.Contains(s.Types, "null"):
		return true
	case s.Const != nil:
		return *s.Const == nil
	case s.Enum != nil:
		return slices.Contains(s.Enum, nil) && s.Type == "" && len(s.Types) == 0
	case s.Ref != "":
		return depth < 32 && acceptsNull(root, lookup(root, s.Ref), depth+1)
	case s.AnyOf != nil:
		for _, b := range s.AnyOf {
			if acceptsNull(root, b, depth) {
				return true
			}
		}
		return false
	}
	return s.Type == "" && len(s.Types) == 0 && s.Not == nil && s.AllOf == nil && s.OneOf == nil
}

func (st *strictor) lookup(ref string) *jsonschema.Schema { return lookup(st.root, ref) }

// lookup resolves a local $ref: "#", "#/$defs/name" or "#/definitions/name".
func lookup(root *jsonschema.Schema, ref string) *jsonschema.Schema {
	switch {
	case ref == "#":
		return root
	case strings.HasPrefix(ref, "#/$defs/"):
		return root.Defs[strings.TrimPrefix(ref, "#/$defs/")]
	case strings.HasPrefix(ref, "#/definitions/"):
		return root.Definitions[strings.TrimPrefix(ref, "#/definitions/")]
	}
	return nil
}

// soleBranch returns the one branch of anyOf that is not {"type": "null"},
// if there is exactly one: anyOf [T, {"type": "null"}] is T or null, and
// an object value is T's.
func soleBranch(anyOf []*jsonschema.Schema) (*jsonschema.Schema, bool) {
	var sole *jsonschema.Schema
	for _, b := range anyOf {
		if b == nil || (b.Type == "null" || slices.Equal(b.Types, []string{"null"})) && b.Properties == nil && b.AnyOf == nil {
			continue
		}
		if sole != nil {
			return nil, false
		}
		sole = b
	}
	return sole, sole != nil
}

// hasOptional reports whether s, or a schema its properties, items, anyOf
// branches or $refs reach, has an optional property that does not accept
// null; root resolves the $refs.
func hasOptional(root, s *jsonschema.Schema, seen map[*jsonschema.Schema]bool) bool {
	if s == nil || seen[s] {
		return false
	}
	seen[s] = true
	for name, p := range s.Properties {
		if !slices.Contains(s.Required, name) && !acceptsNull(root, p, 0) || hasOptional(root, p, seen) {
			return true
		}
	}
	if hasOptional(root, s.Items, seen) || s.Ref != "" && hasOptional(root, lookup(root, s.Ref), seen) {
		return true
	}
	for _, b := range s.AnyOf {
		if hasOptional(root, b, seen) {
			return true
		}
	}
	return false
}

// dropNulls removes from args, at any depth the schema's properties and
// items reach, the nulls given for optional properties that do not accept
// null: the nulls strict mode makes the model write where it means "not
// given". args is changed in place.
func dropNulls(root, s *jsonschema.Schema, v any, depth int) {
	for s != nil && (s.Ref != "" || s.AnyOf != nil) && depth < 32 {
		if s.Ref != "" {
			s, depth = lookup(root, s.Ref), depth+1
			continue
		}
		sole, ok := soleBranch(s.AnyOf)
		if !ok {
			return // strict mode made no optional property nullable within
		}
		s, depth = sole, depth+1
	}
	if s == nil || depth >= 32 {
		return
	}
	switch v := v.(type) {
	case map[string]any:
		for k, val := range v {
			p, ok := s.Properties[k]
			if !ok {
				continue
			}
			if val == nil && !slices.Contains(s.Required, k) && !acceptsNull(root, p, 0) {
				delete(v, k)
				continue
			}
			dropNulls(root, p, val, depth+1)
		}
	case []any:
		for _, item := range v {
			dropNulls(root, s.Items, item, depth+1)
		}
	}
}

// params renders s as the SDK's parameters: its top-level keywords as
// keys, each value the JSON jsonschema-go writes, which keeps the order of
// properties (strict mode writes arguments in that order).
func params(s *jsonschema.Schema) (map[string]any, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("openaiadapter: encoding schema: %w", err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("openaiadapter: encoding schema: %w", err)
	}
	out := make(map[string]any, len(raw))
	for k, v := range raw {
		out[k] = v
	}
	if _, ok := out["properties"]; !ok && isType(s, "object") {
		out["properties"] = json.RawMessage("{}") // jsonschema-go leaves out empty properties
	}
	return out, nil
}

// propertyNames returns s's property names in the order jsonschema-go
// writes them: PropertyOrder first, then the rest sorted.
func propertyNames(s *jsonschema.Schema) []string {
	names := make([]string, 0, len(s.Properties))
	seen := make(map[string]bool, len(s.Properties))
	for _, n := range s.PropertyOrder {
		if _, ok := s.Properties[n]; ok && !seen[n] {
			names, seen[n] = append(names, n), true
		}
	}
	for _, n := range sortedKeys(s.Properties) {
		if !seen[n] {
			names = append(names, n)
		}
	}
	return names
}

func isType(s *jsonschema.Schema, t string) bool {
	return s.Type == t || slices.Contains(s.Types, t)
}

// isFalse reports whether s is the false schema, {"not": {}}.
func isFalse(s *jsonschema.Schema) bool {
	if s.Not == nil {
		return false
	}
	b, err := json.Marshal(s)
	return err == nil && string(b) == "false"
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// walk yields s and every schema within it.
func walk(s *jsonschema.Schema) func(yield func(*jsonschema.Schema) bool) {
	return func(yield func(*jsonschema.Schema) bool) {
		var visit func(*jsonschema.Schema) bool
		visit = func(s *jsonschema.Schema) bool {
			if s == nil {
				return true
			}
			if !yield(s) {
				return false
			}
			for _, c := range children(s) {
				if !visit(c) {
					return false
				}
			}
			return true
		}
		visit(s)
	}
}

// children returns the schemas directly within s.
func children(s *jsonschema.Schema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	out = append(out, s.Items, s.AdditionalItems, s.Contains, s.UnevaluatedItems, s.AdditionalProperties,
		s.PropertyNames, s.UnevaluatedProperties, s.Not, s.If, s.Then, s.Else, s.ContentSchema)
	out = append(out, s.PrefixItems...)
	out = append(out, s.ItemsArray...)
	out = append(out, s.AllOf...)
	out = append(out, s.AnyOf...)
	out = append(out, s.OneOf...)
	for _, m := range []map[string]*jsonschema.Schema{s.Defs, s.Definitions, s.Properties,
		s.PatternProperties, s.DependentSchemas, s.DependencySchemas} {
		for _, k := range sortedKeys(m) {
			out = append(out, m[k])
		}
	}
	return out
}
