package openapitools

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/jsonschema-go/jsonschema"
)

// maxSchemaDepth bounds how deep the schemas of a description nest, as
// written ($refs are not followed: they become references). Real schemas
// nest a dozen levels; a description nested deeper is hostile or broken.
const maxSchemaDepth = 128

// A converter turns the schemas of one description into JSON Schema
// (draft 2020-12) for requests. A schema reached through a $ref becomes a
// definition of its own, converted once for the whole description and
// shared by reference, so that recursion stays finite and shared
// definitions are written once per tool.
type converter struct {
	doc  *openapi3.T
	v31  bool
	defs map[defKey]*definition
	// names holds every definition name given, to keep them unique.
	names map[string]bool
	// subtypes maps a component that has a discriminator and no oneOf or
	// anyOf to the components that extend it (allOf: [$ref: it, ...]).
	subtypes map[string][]string
}

// A defKey names what a definition stands for: a component schema, the
// variants of a component with subtypes, or any other schema a $ref
// reaches (by its address).
type defKey struct {
	component string
	variants  bool
	ptr       *openapi3.Schema
}

// A definition is one converted schema, shared by reference.
type definition struct {
	name   string
	schema *jsonschema.Schema
	refs   []defKey // the definitions its schema refers to
	err    error
	done   bool
}

func newConverter(doc *openapi3.T) *converter {
	c := &converter{doc: doc, v31: doc.IsOpenAPI31OrLater(), defs: map[defKey]*definition{}, names: map[string]bool{}}
	c.findSubtypes()
	return c
}

// A conversion is the work on one tool's schema: it records the
// definitions the tool refers to, directly.
type conversion struct {
	c     *converter
	refs  []defKey
	depth int
}

// root converts a schema for one tool's arguments; defs then collects the
// definitions it needs.
func (c *converter) root() *conversion { return &conversion{c: c} }

// defs returns the definitions cv's schemas refer to, directly or not,
// by name; the error of any of them is returned.
func (cv *conversion) defs() (map[string]*jsonschema.Schema, error) {
	out := map[string]*jsonschema.Schema{}
	seen := map[defKey]bool{}
	queue := slices.Clone(cv.refs)
	for len(queue) > 0 {
		k := queue[0]
		queue = queue[1:]
		if seen[k] {
			continue
		}
		seen[k] = true
		d := cv.c.defs[k]
		if d.err != nil {
			return nil, d.err
		}
		out[d.name] = d.schema
		queue = append(queue, d.refs...)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// componentName returns X for "#/components/schemas/X".
func componentName(ref string) (string, bool) {
	name, ok := strings.CutPrefix(ref, "#/components/schemas/")
	if !ok || strings.Contains(name, "/") {
		return "", false
	}
	return unescapePointer(name), true
}

func unescapePointer(s string) string {
	return strings.NewReplacer("~1", "/", "~0", "~").Replace(s)
}

func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// defRef is the reference to a definition.
func defRef(name string) *jsonschema.Schema {
	return &jsonschema.Schema{Ref: "#/$defs/" + escapePointer(name)}
}

// errUnresolved is the error of a $ref kin-openapi left without a value:
// it points to nothing, or to a chain of $refs that comes back to itself.
func errUnresolved(ref string) error {
	return fmt.Errorf("%w: $ref %q does not resolve to a schema (it points to nothing, or to $refs that lead back to it)", ErrUnsupported, ref)
}

// schemaRef converts a schema where it is used. inAllOf says the use is
// a member of an allOf: a component with subtypes stands for itself
// there, and for any of its subtypes elsewhere.
func (cv *conversion) schemaRef(r *openapi3.SchemaRef, inAllOf bool) (*jsonschema.Schema, error) {
	if r == nil {
		return &jsonschema.Schema{}, nil
	}
	if r.Ref == "" {
		if r.Value == nil {
			return &jsonschema.Schema{}, nil
		}
		return cv.schema(r.Value)
	}
	if r.Value == nil {
		return nil, errUnresolved(r.Ref)
	}
	if name, ok := componentName(r.Ref); ok {
		if comp := cv.c.component(name); comp != nil && comp.Value == r.Value {
			if !inAllOf && len(cv.c.subtypes[name]) > 0 {
				return cv.use(defKey{component: name, variants: true}, name+"_variants")
			}
			return cv.use(defKey{component: name}, name)
		}
	}
	// Any other reference (into a path, into another file, or a 3.1 $ref
	// whose sibling keywords made a schema of their own) is shared by
	// the schema it reaches.
	hint := r.Ref
	if i := strings.LastIndexAny(hint, "/#"); i >= 0 && i < len(hint)-1 {
		hint = hint[i+1:]
	}
	return cv.use(defKey{ptr: r.Value}, hint)
}

func (c *converter) component(name string) *openapi3.SchemaRef {
	if c.doc.Components == nil {
		return nil
	}
	return c.doc.Components.Schemas[name]
}

// use returns a reference to the definition k, converting it the first
// time it is used in the description.
func (cv *conversion) use(k defKey, hint string) (*jsonschema.Schema, error) {
	c := cv.c
	cv.refs = append(cv.refs, k)
	d := c.defs[k]
	if d == nil {
		d = &definition{name: c.uniqueName(hint)}
		c.defs[k] = d
		sub := &conversion{c: c}
		var s *jsonschema.Schema
		var err error
		switch {
		case k.variants:
			s, err = sub.variants(k.component)
		case k.component != "":
			comp := c.component(k.component)
			if comp.Ref != "" {
				// An alias of another schema stays one: a chain of
				// $refs is kept as written.
				s, err = sub.schemaRef(comp, false)
			} else {
				s, err = sub.schema(comp.Value)
			}
		default:
			s, err = sub.schema(k.ptr)
		}
		d.schema, d.refs, d.err, d.done = s, sub.refs, err, true
	}
	if d.done && d.err != nil {
		return nil, d.err
	}
	return defRef(d.name), nil
}

var defNameChars = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// uniqueName returns a definition name made of hint, unused so far.
func (c *converter) uniqueName(hint string) string {
	base := defNameChars.ReplaceAllString(hint, "_")
	if base == "" {
		base = "schema"
	}
	if len(base) > 100 {
		base = base[:100]
	}
	name := base
	for i := 2; c.names[name]; i++ {
		name = fmt.Sprintf("%s_%d", base, i)
	}
	c.names[name] = true
	return name
}

// schema converts one schema as written.
func (cv *conversion) schema(s *openapi3.Schema) (*jsonschema.Schema, error) {
	if cv.depth++; cv.depth > maxSchemaDepth {
		return nil, fmt.Errorf("%w: a schema nests deeper than %d levels", ErrUnsupported, maxSchemaDepth)
	}
	defer func() { cv.depth-- }()
	if s.Always != nil {
		if *s.Always {
			return &jsonschema.Schema{}, nil
		}
		return &jsonschema.Schema{Not: &jsonschema.Schema{}}, nil
	}
	out := &jsonschema.Schema{
		Title:            s.Title,
		Description:      strings.TrimSpace(s.Description),
		Format:           s.Format,
		Deprecated:       s.Deprecated,
		ReadOnly:         s.ReadOnly && cv.c.v31,
		WriteOnly:        s.WriteOnly,
		MultipleOf:       s.MultipleOf,
		Minimum:          s.Min,
		Maximum:          s.Max,
		UniqueItems:      s.UniqueItems,
		ContentEncoding:  s.ContentEncoding,
		ContentMediaType: s.ContentMediaType,
	}
	var err error
	sub := func(r *openapi3.SchemaRef) *jsonschema.Schema {
		if r == nil || err != nil {
			return nil
		}
		var out *jsonschema.Schema
		out, err = cv.schemaRef(r, false)
		return out
	}
	subs := func(rs openapi3.SchemaRefs, inAllOf bool) []*jsonschema.Schema {
		if len(rs) == 0 || err != nil {
			return nil
		}
		out := make([]*jsonschema.Schema, 0, len(rs))
		for _, r := range rs {
			var o *jsonschema.Schema
			if o, err = cv.schemaRef(r, inAllOf); err != nil {
				return nil
			}
			out = append(out, o)
		}
		return out
	}
	subMap := func(m openapi3.Schemas) map[string]*jsonschema.Schema {
		if len(m) == 0 || err != nil {
			return nil
		}
		out := make(map[string]*jsonschema.Schema, len(m))
		for _, name := range sortedKeys(m) {
			if out[name] = sub(m[name]); err != nil {
				return nil
			}
		}
		return out
	}

	// type: OpenAPI 3.0's "file" (from Swagger 2.0) is binary content;
	// a type JSON Schema does not know accepts anything, as it says
	// nothing a validator could check.
	for _, t := range s.Type.Slice() {
		switch t {
		case "string", "number", "integer", "boolean", "array", "object", "null":
			out.Types = append(out.Types, t)
		case "file":
			out.Types, out.Format = append(out.Types, "string"), "binary"
		}
	}
	if len(out.Types) != len(s.Type.Slice()) && !slices.Contains(s.Type.Slice(), "file") {
		out.Types = nil
	}
	if len(out.Types) == 1 {
		out.Type, out.Types = out.Types[0], nil
	}

	if s.Enum != nil {
		out.Enum = slices.Clone(s.Enum)
	}
	if s.Const != nil {
		v := s.Const
		out.Const = &v
	}
	if s.Default != nil {
		if b, jerr := json.Marshal(s.Default); jerr == nil {
			out.Default = b
		}
	}
	if s.Examples != nil {
		out.Examples = slices.Clone(s.Examples)
	} else if s.Example != nil {
		out.Examples = []any{s.Example}
	}

	// OpenAPI 3.0's boolean exclusive bounds modify minimum and maximum;
	// 3.1's are bounds of their own, as in JSON Schema.
	switch {
	case s.ExclusiveMin.Value != nil:
		out.ExclusiveMinimum = s.ExclusiveMin.Value
	case s.ExclusiveMin.Bool != nil && *s.ExclusiveMin.Bool && s.Min != nil:
		out.ExclusiveMinimum, out.Minimum = s.Min, nil
	}
	switch {
	case s.ExclusiveMax.Value != nil:
		out.ExclusiveMaximum = s.ExclusiveMax.Value
	case s.ExclusiveMax.Bool != nil && *s.ExclusiveMax.Bool && s.Max != nil:
		out.ExclusiveMaximum, out.Maximum = s.Max, nil
	}

	if s.MinLength > 0 {
		out.MinLength = intPtr(s.MinLength)
	}
	out.MaxLength = uintPtr(s.MaxLength)
	if s.Pattern != "" {
		// OpenAPI's patterns are ECMA-262; one Go's regexp cannot
		// compile (a lookahead, a backreference) is left to the server,
		// and told to the model.
		if _, rerr := regexp.Compile(s.Pattern); rerr == nil {
			out.Pattern = s.Pattern
		} else {
			out.Description = joinText(out.Description, fmt.Sprintf("Must match the pattern %s.", s.Pattern))
		}
	}

	if s.MinItems > 0 {
		out.MinItems = intPtr(s.MinItems)
	}
	out.MaxItems = uintPtr(s.MaxItems)
	out.Items = sub(s.Items)
	out.PrefixItems = subs(s.PrefixItems, false)
	out.Contains = sub(s.Contains)
	out.MinContains, out.MaxContains = uintPtr(s.MinContains), uintPtr(s.MaxContains)
	out.UnevaluatedItems = cv.boolSchema(s.UnevaluatedItems, &err)

	// properties: OpenAPI 3.0 says a readOnly one is not sent in a
	// request, and its required applies to responses only. (3.1 makes
	// readOnly JSON Schema's annotation, which changes nothing.)
	readOnly := func(p *openapi3.SchemaRef) bool {
		return !cv.c.v31 && p != nil && p.Value != nil && p.Value.ReadOnly
	}
	if len(s.Properties) > 0 {
		props := make(openapi3.Schemas, len(s.Properties))
		for name, p := range s.Properties {
			if readOnly(p) {
				continue
			}
			props[name] = p
		}
		out.Properties = subMap(props)
		if out.Properties == nil && err == nil {
			out.Properties = map[string]*jsonschema.Schema{}
		}
	}
	for _, name := range s.Required {
		if readOnly(s.Properties[name]) {
			continue
		}
		if !slices.Contains(out.Required, name) {
			out.Required = append(out.Required, name)
		}
	}
	if s.MinProps > 0 {
		out.MinProperties = intPtr(s.MinProps)
	}
	out.MaxProperties = uintPtr(s.MaxProps)
	out.AdditionalProperties = cv.boolSchema(s.AdditionalProperties, &err)
	out.PatternProperties = subMap(s.PatternProperties)
	out.PropertyNames = sub(s.PropertyNames)
	out.UnevaluatedProperties = cv.boolSchema(s.UnevaluatedProperties, &err)
	if s.DependentRequired != nil {
		out.DependentRequired = maps.Clone(s.DependentRequired)
	}
	out.DependentSchemas = subMap(s.DependentSchemas)

	out.AllOf = subs(s.AllOf, true)
	out.AnyOf = subs(s.AnyOf, false)
	out.OneOf = subs(s.OneOf, false)
	out.Not = sub(s.Not)
	out.If, out.Then, out.Else = sub(s.If), sub(s.Then), sub(s.Else)
	out.ContentSchema = sub(s.ContentSchema)
	if err != nil {
		return nil, err
	}

	fixArrayEnum(out)
	if s.Discriminator != nil {
		cv.discriminate(s, out)
	}
	out = simplifyAllOf(out)
	// OpenAPI 3.0's nullable: null is one more value the schema allows.
	if s.Nullable && !cv.c.v31 {
		out = nullable(out)
	}
	return out, nil
}

// boolSchema converts additionalProperties, unevaluatedItems or
// unevaluatedProperties: a schema, or true or false.
func (cv *conversion) boolSchema(b openapi3.BoolSchema, err *error) *jsonschema.Schema {
	if *err != nil {
		return nil
	}
	switch {
	case b.Schema != nil:
		s, e := cv.schemaRef(b.Schema, false)
		*err = e
		return s
	case b.Has != nil && !*b.Has:
		return &jsonschema.Schema{Not: &jsonschema.Schema{}}
	}
	return nil
}

// fixArrayEnum repairs a mistake common in Swagger 2.0 descriptions: an
// enum of single values on an array (meant for its items), which no array
// can satisfy. The enum moves to the items when they have none.
func fixArrayEnum(s *jsonschema.Schema) {
	if len(s.Enum) == 0 || s.Type != "array" || s.Items == nil || s.Items.Enum != nil || s.Items.Ref != "" {
		return
	}
	for _, v := range s.Enum {
		switch v.(type) {
		case []any, map[string]any:
			return
		}
	}
	s.Items.Enum, s.Enum = s.Enum, nil
}

// simplifyAllOf replaces an allOf of one $ref, next to annotations only
// (the OpenAPI 3.0 way of describing a reference), by the reference with
// the annotations: the same schema, said in a way Gemini's own schema
// format can say too.
func simplifyAllOf(s *jsonschema.Schema) *jsonschema.Schema {
	// A member that says nothing (one that only had xml, say) changes
	// nothing.
	if len(s.AllOf) > 1 {
		s.AllOf = slices.DeleteFunc(s.AllOf, isEmpty)
	}
	if len(s.AllOf) != 1 || s.AllOf[0].Ref == "" {
		return s
	}
	rest := *s
	rest.AllOf, rest.Title, rest.Description, rest.Deprecated = nil, "", "", false
	if !isEmpty(&rest) {
		return s
	}
	return &jsonschema.Schema{Ref: s.AllOf[0].Ref, Title: s.Title, Description: s.Description, Deprecated: s.Deprecated}
}

// isEmpty reports whether s has no keyword at all.
func isEmpty(s *jsonschema.Schema) bool {
	b, err := json.Marshal(s)
	return err == nil && string(b) == "{}"
}

// nullable returns s allowing null too: "null" among its types (and in
// its enum), or, when it has no type, as one more alternative.
func nullable(s *jsonschema.Schema) *jsonschema.Schema {
	if s.Type != "" {
		s.Types, s.Type = []string{s.Type}, ""
	}
	if s.Types != nil {
		if !slices.Contains(s.Types, "null") {
			s.Types = append(s.Types, "null")
		}
		if s.Enum != nil && !slices.Contains(s.Enum, nil) {
			s.Enum = append(s.Enum, nil)
		}
		return s
	}
	if isEmpty(s) {
		return s
	}
	return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{s, {Type: "null"}}}
}

// discriminate makes a discriminator's choice part of the schema: each
// oneOf or anyOf alternative that is a reference requires the
// discriminating property to hold the values that select it (from the
// mapping, or the component's name), so that a value selects exactly the
// alternative OpenAPI says it does. The description says how to choose.
func (cv *conversion) discriminate(s *openapi3.Schema, out *jsonschema.Schema) {
	prop := s.Discriminator.PropertyName
	if prop == "" {
		return
	}
	alts, list := s.OneOf, out.OneOf
	if len(alts) == 0 {
		alts, list = s.AnyOf, out.AnyOf
	}
	var choices []string
	for i, alt := range alts {
		values := cv.c.discriminatorValues(s.Discriminator, alt.Ref)
		if len(values) == 0 {
			continue
		}
		enum := make([]any, len(values))
		for j, v := range values {
			enum[j] = v
		}
		list[i] = &jsonschema.Schema{
			AllOf:      []*jsonschema.Schema{list[i]},
			Properties: map[string]*jsonschema.Schema{prop: {Enum: enum}},
			Required:   []string{prop},
		}
		choices = append(choices, strings.Join(values, ", "))
	}
	if len(choices) > 0 {
		out.Description = joinText(out.Description, fmt.Sprintf("The property %q says which alternative this is: %s.", prop, strings.Join(choices, "; ")))
	} else if len(alts) == 0 {
		out.Description = joinText(out.Description, fmt.Sprintf("The property %q says which kind this is.", prop))
	}
}

// discriminatorValues returns the values of d's property that select the
// schema ref points to: those the mapping gives it, or else the
// component's name (or, in Azure's descriptions, its
// x-ms-discriminator-value).
func (c *converter) discriminatorValues(d *openapi3.Discriminator, ref string) []string {
	name, ok := componentName(ref)
	if !ok {
		return nil
	}
	var values []string
	for _, v := range sortedKeys(d.Mapping) {
		target := d.Mapping[v].Ref
		if target == ref || target == name {
			values = append(values, v)
		}
	}
	if len(values) > 0 {
		return values
	}
	if comp := c.component(name); comp != nil && comp.Value != nil {
		if v, ok := comp.Value.Extensions["x-ms-discriminator-value"].(string); ok && v != "" {
			return []string{v}
		}
	}
	return []string{name}
}

// findSubtypes finds, for each component with a discriminator and no
// oneOf or anyOf (a base in the allOf style of inheritance), the
// components that extend it.
func (c *converter) findSubtypes() {
	if c.doc.Components == nil {
		return
	}
	bases := map[string]bool{}
	for name, r := range c.doc.Components.Schemas {
		if r != nil && r.Ref == "" && r.Value != nil && r.Value.Discriminator != nil && r.Value.Discriminator.PropertyName != "" &&
			len(r.Value.OneOf) == 0 && len(r.Value.AnyOf) == 0 {
			bases[name] = true
		}
	}
	if len(bases) == 0 {
		return
	}
	c.subtypes = map[string][]string{}
	for _, name := range sortedKeys(c.doc.Components.Schemas) {
		r := c.doc.Components.Schemas[name]
		if r == nil || r.Ref != "" || r.Value == nil {
			continue
		}
		for _, member := range r.Value.AllOf {
			if base, ok := componentName(member.Ref); ok && bases[base] && base != name {
				c.subtypes[base] = append(c.subtypes[base], name)
			}
		}
	}
}

// variants is the schema a base with subtypes stands for where it is
// used: any of its subtypes, each with its discriminator value.
func (cv *conversion) variants(base string) (*jsonschema.Schema, error) {
	d := cv.c.component(base).Value.Discriminator
	out := &jsonschema.Schema{}
	var choices []string
	for _, name := range cv.c.subtypes[base] {
		ref, err := cv.use(defKey{component: name}, name)
		if err != nil {
			return nil, err
		}
		values := cv.c.discriminatorValues(d, "#/components/schemas/"+escapePointer(name))
		enum := make([]any, len(values))
		for j, v := range values {
			enum[j] = v
		}
		out.AnyOf = append(out.AnyOf, &jsonschema.Schema{
			AllOf:      []*jsonschema.Schema{ref},
			Properties: map[string]*jsonschema.Schema{d.PropertyName: {Enum: enum}},
			Required:   []string{d.PropertyName},
		})
		choices = append(choices, fmt.Sprintf("%s for %s", strings.Join(values, ", "), name))
	}
	desc := ""
	if b := cv.c.component(base).Value; b != nil {
		desc = strings.TrimSpace(b.Description)
	}
	out.Description = joinText(desc, fmt.Sprintf("One of the kinds of %s; the property %q says which: %s.", base, d.PropertyName, strings.Join(choices, "; ")))
	return out, nil
}

func joinText(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n\n" + b
}

func intPtr(v uint64) *int {
	n := int(min(v, 1<<31-1))
	return &n
}

func uintPtr(p *uint64) *int {
	if p == nil {
		return nil
	}
	return intPtr(*p)
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
