package geminiadapter

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// ErrUnsupported is wrapped by the error [Schema] returns for a JSON Schema
// that a [genai.Schema] cannot express faithfully.
var ErrUnsupported = errors.New("cannot be expressed as a Gemini Schema")

// Schema converts a JSON Schema into the OpenAPI-subset [genai.Schema] that
// FunctionDeclaration.Parameters takes.
//
// It converts type (lowercase JSON Schema names become genai's uppercase
// [genai.Type]; a ["null", T] type array becomes T with Nullable), properties
// (with propertyOrdering from the schema's property order, where it has
// one), required, items, enum (strings only), format (the ones Gemini
// accepts: date-time and enum for strings, float and double for numbers,
// int32 and int64 for integers), description, title, default, examples (the
// first becomes Example), minimum, maximum, minLength, maxLength, minItems,
// maxItems, minProperties, maxProperties, pattern and anyOf, and inlines
// non-recursive references into the root's $defs or definitions.
//
// Keywords that only restrict or only identify (additionalProperties: false,
// $schema, $id, $comment) are dropped: [toolset.Tool.Execute] still enforces
// them. Anything else is an error wrapping [ErrUnsupported] that says where
// and what: a typed additionalProperties (a Go map), oneOf, allOf, not,
// const, patternProperties, prefixItems, if/then/else, exclusive bounds,
// multipleOf, uniqueItems, a recursive $ref, a non-string enum, a schema
// with no type (it accepts any value), required naming an undefined property,
// and any keyword not listed above. Schema never guesses.
//
// Inlining is bounded: a schema that, as written or with every $ref
// replaced by its target, is larger than [toolset.MaxSchemaSize] is an
// error wrapping [toolset.ErrSchemaTooLarge], found before any work
// proportional to its expansion is done; so is a schema that
// [toolset.MeasureSchema] cannot measure, as unsupported.
func Schema(s *jsonschema.Schema) (*genai.Schema, error) {
	if s == nil {
		return nil, nil
	}
	// Measured first: the conversion's work and output are the expanded
	// schema's.
	if _, err := toolset.MeasureSchema(s); err != nil {
		if errors.Is(err, toolset.ErrSchemaTooLarge) {
			return nil, fmt.Errorf("geminiadapter: %w", err)
		}
		return nil, unsupported("", "%v", err)
	}
	c := &converter{root: s}
	return c.convert(s, "")
}

// converter holds the state of one conversion: the root, whose $defs
// references resolve into, and the references being expanded, to refuse
// recursion.
type converter struct {
	root      *jsonschema.Schema
	expanding []string
}

// unsupported returns the error for what cannot be said at path.
func unsupported(path, format string, args ...any) error {
	if path == "" {
		path = "/"
	}
	return fmt.Errorf("geminiadapter: schema at %s: %s: %w", path, fmt.Sprintf(format, args...), ErrUnsupported)
}

var jsonToGeminiType = map[string]genai.Type{
	"string":  genai.TypeString,
	"number":  genai.TypeNumber,
	"integer": genai.TypeInteger,
	"boolean": genai.TypeBoolean,
	"array":   genai.TypeArray,
	"object":  genai.TypeObject,
	"null":    genai.TypeNULL,
}

// allowedFormats lists the formats the Gemini API accepts for each type;
// it answers 400 to any other ("only 'enum' and 'date-time' are supported
// for STRING type").
var allowedFormats = map[genai.Type][]string{
	genai.TypeString:  {"enum", "date-time"},
	genai.TypeNumber:  {"float", "double"},
	genai.TypeInteger: {"int32", "int64"},
}

func (c *converter) convert(s *jsonschema.Schema, path string) (*genai.Schema, error) {
	if s.Ref != "" {
		return c.convertRef(s, path)
	}
	rest := *s // what is left once every supported keyword is taken out
	out := &genai.Schema{Title: s.Title, Description: s.Description, Pattern: s.Pattern}
	rest.Title, rest.Description, rest.Pattern = "", "", ""
	// Keywords that only identify or only restrict, and containers of
	// definitions (their members are reached through $ref).
	rest.ID, rest.Schema, rest.Comment, rest.Defs, rest.Definitions = "", "", "", nil, nil
	if isFalse(s.AdditionalProperties) || isTrue(s.AdditionalProperties) {
		rest.AdditionalProperties = nil
	}

	// type
	rest.Type, rest.Types = "", nil
	types := s.Types
	if s.Type != "" {
		types = []string{s.Type}
	}
	var nonNull []string
	for _, t := range types {
		if t == "null" && len(types) > 1 {
			out.Nullable = genai.Ptr(true)
			continue
		}
		nonNull = append(nonNull, t)
	}
	switch {
	case len(nonNull) == 1:
		gt, ok := jsonToGeminiType[nonNull[0]]
		if !ok {
			return nil, unsupported(path, "unknown type %q", nonNull[0])
		}
		out.Type = gt
	case len(nonNull) > 1:
		return nil, unsupported(path, "several types %v", types)
	}

	// enum
	if s.Enum != nil {
		rest.Enum = nil
		if out.Type == "" {
			out.Type = genai.TypeString
		}
		if out.Type != genai.TypeString {
			return nil, unsupported(path, "enum on type %q (Gemini takes string enums only)", strings.ToLower(string(out.Type)))
		}
		if len(s.Enum) == 0 {
			return nil, unsupported(path, "empty enum")
		}
		out.Enum = make([]string, len(s.Enum))
		for i, v := range s.Enum {
			str, ok := v.(string)
			if !ok {
				return nil, unsupported(path, "enum value %v is not a string", v)
			}
			out.Enum[i] = str
		}
	}

	// format
	if s.Format != "" {
		rest.Format = ""
		if !slices.Contains(allowedFormats[out.Type], s.Format) {
			return nil, unsupported(path, "format %q on type %q (Gemini accepts %v)", s.Format, strings.ToLower(string(out.Type)), allowedFormats[out.Type])
		}
		out.Format = s.Format
	}

	// annotations
	if s.Default != nil {
		rest.Default = nil
		if err := json.Unmarshal(s.Default, &out.Default); err != nil {
			return nil, unsupported(path, "default is not valid JSON: %v", err)
		}
	}
	if len(s.Examples) > 0 {
		rest.Examples = nil
		out.Example = s.Examples[0]
	}

	// bounds
	out.Minimum, out.Maximum = s.Minimum, s.Maximum
	rest.Minimum, rest.Maximum = nil, nil
	out.MinLength, out.MaxLength = int64Ptr(s.MinLength), int64Ptr(s.MaxLength)
	out.MinItems, out.MaxItems = int64Ptr(s.MinItems), int64Ptr(s.MaxItems)
	out.MinProperties, out.MaxProperties = int64Ptr(s.MinProperties), int64Ptr(s.MaxProperties)
	rest.MinLength, rest.MaxLength, rest.MinItems, rest.MaxItems, rest.MinProperties, rest.MaxProperties = nil, nil, nil, nil, nil, nil

	// items
	if s.Items != nil {
		rest.Items = nil
		items, err := c.convert(s.Items, path+"/items")
		if err != nil {
			return nil, err
		}
		out.Items = items
	}

	// properties, in order
	if s.Properties != nil {
		rest.Properties, rest.PropertyOrder = nil, nil
		out.Properties = make(map[string]*genai.Schema, len(s.Properties))
		for name, ps := range s.Properties {
			if ps == nil {
				return nil, unsupported(path+"/properties/"+name, "nil schema")
			}
			gs, err := c.convert(ps, path+"/properties/"+name)
			if err != nil {
				return nil, err
			}
			out.Properties[name] = gs
		}
		out.PropertyOrdering = propertyOrdering(s)
	}
	if s.Required != nil {
		rest.Required = nil
		for _, name := range s.Required {
			if _, ok := s.Properties[name]; !ok {
				return nil, unsupported(path, "required property %q is not defined", name)
			}
		}
		out.Required = slices.Clone(s.Required)
	}

	// anyOf
	if s.AnyOf != nil {
		rest.AnyOf = nil
		out.AnyOf = make([]*genai.Schema, len(s.AnyOf))
		for i, sub := range s.AnyOf {
			gs, err := c.convert(sub, fmt.Sprintf("%s/anyOf/%d", path, i))
			if err != nil {
				return nil, err
			}
			out.AnyOf[i] = gs
		}
	}

	// Gemini extensions written as extra JSON keywords.
	if len(s.Extra) > 0 {
		extra := make(map[string]any, len(s.Extra))
		for k, v := range s.Extra {
			switch k {
			case "propertyOrdering": // taken by propertyOrdering
			case "example":
				out.Example = v
			case "nullable":
				if b, ok := v.(bool); ok {
					out.Nullable = genai.Ptr(b)
					continue
				}
				extra[k] = v
			default:
				extra[k] = v
			}
		}
		rest.Extra = extra
		if len(extra) == 0 {
			rest.Extra = nil
		}
	}

	if kw := firstKeyword(&rest); kw != "" {
		return nil, unsupported(path, "keyword %q", kw)
	}
	if out.Type == "" && out.AnyOf == nil {
		return nil, unsupported(path, "no type: the schema accepts any value")
	}
	return out, nil
}

// convertRef inlines a reference into the root's $defs or definitions.
func (c *converter) convertRef(s *jsonschema.Schema, path string) (*genai.Schema, error) {
	if slices.Contains(c.expanding, s.Ref) {
		return nil, unsupported(path, "recursive $ref %q", s.Ref)
	}
	// Next to $ref only annotations are allowed; they override the target's.
	rest := *s
	rest.Ref, rest.Title, rest.Description, rest.Comment = "", "", "", ""
	if kw := firstKeyword(&rest); kw != "" {
		return nil, unsupported(path, "keyword %q next to $ref", kw)
	}
	var target *jsonschema.Schema
	if name, ok := strings.CutPrefix(s.Ref, "#/$defs/"); ok {
		target = c.root.Defs[unescapePointer(name)]
	} else if name, ok := strings.CutPrefix(s.Ref, "#/definitions/"); ok {
		target = c.root.Definitions[unescapePointer(name)]
	}
	if target == nil {
		return nil, unsupported(path, "$ref %q does not point into the root's $defs", s.Ref)
	}
	c.expanding = append(c.expanding, s.Ref)
	out, err := c.convert(target, path)
	c.expanding = c.expanding[:len(c.expanding)-1]
	if err != nil {
		return nil, err
	}
	if s.Title != "" {
		out.Title = s.Title
	}
	if s.Description != "" {
		out.Description = s.Description
	}
	return out, nil
}

func unescapePointer(s string) string {
	return strings.NewReplacer("~1", "/", "~0", "~").Replace(s)
}

// propertyOrdering returns the order of s's properties where s has one: the
// PropertyOrder jsonschema.For records from struct fields, or a
// "propertyOrdering" keyword. Properties the order does not name follow, in
// name order; nil when s has no order.
func propertyOrdering(s *jsonschema.Schema) []string {
	order := s.PropertyOrder
	if order == nil {
		if list, ok := s.Extra["propertyOrdering"].([]any); ok {
			for _, v := range list {
				if name, ok := v.(string); ok {
					order = append(order, name)
				}
			}
		}
	}
	if order == nil {
		return nil
	}
	out := make([]string, 0, len(s.Properties))
	for _, name := range order {
		if _, ok := s.Properties[name]; ok && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	var others []string
	for name := range s.Properties {
		if !slices.Contains(out, name) {
			others = append(others, name)
		}
	}
	slices.Sort(others)
	return append(out, others...)
}

// isFalse reports whether s is the false schema, {"not": {}}, which
// jsonschema.For writes for additionalProperties: false.
func isFalse(s *jsonschema.Schema) bool {
	if s == nil || !isTrue(s.Not) {
		return false
	}
	rest := *s
	rest.Not = nil
	return firstKeyword(&rest) == ""
}

// isTrue reports whether s is the empty schema, which accepts anything.
func isTrue(s *jsonschema.Schema) bool {
	return s != nil && firstKeyword(s) == ""
}

// firstKeyword returns the JSON name of a keyword set in s, or "" when s is
// empty. Looking at every field, rather than a list of known ones, makes any
// keyword a future jsonschema-go adds count as unsupported.
func firstKeyword(s *jsonschema.Schema) string {
	v := reflect.ValueOf(s).Elem()
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() || v.Field(i).IsZero() {
			continue
		}
		switch f.Name {
		case "PropertyOrder": // not a keyword: how Properties are ordered
			continue
		case "Extra":
			for k := range v.Field(i).Interface().(map[string]any) {
				return k
			}
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			name = strings.ToLower(f.Name[:1]) + f.Name[1:]
		}
		return name
	}
	return ""
}

func int64Ptr(p *int) *int64 {
	if p == nil {
		return nil
	}
	v := int64(*p)
	return &v
}
