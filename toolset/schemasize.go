package toolset

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// MaxSchemaSize is the budget of an input schema, in bytes of JSON
// (approximately: every keyword and value counted once, as they would be
// written): 256 KiB, both as written and with every $ref replaced by the
// schema it points to. [Define] refuses a schema over it, and validating one
// argument value costs at most about this much work, which is what keeps
// a schema whose definitions refer to each other many times, a few
// kilobytes that would expand to gigabytes, from taking a server down.
const MaxSchemaSize = 256 << 10

// ErrSchemaTooLarge is wrapped by the errors that refuse a schema whose
// expansion exceeds [MaxSchemaSize]: [Define]'s, which also wraps
// [ErrInvalidTool], [MeasureSchema]'s, and the Gemini adapter's. A call
// whose arguments nest too deep to be checked against a recursive schema
// within the budget fails with a [Result.Err] wrapping it and
// [ErrInvalidArguments].
var ErrSchemaTooLarge = errors.New("schema too large")

// A SchemaSize is how large a schema is, in approximate bytes of JSON.
type SchemaSize struct {
	// Bytes is the schema as written, $defs included, each definition
	// counted once.
	Bytes int
	// Expanded is the schema with every $ref replaced by the schema it
	// points to, and without $defs: what a target that cannot say $ref
	// would be sent. A recursive reference is expanded once.
	Expanded int
	// Recursive reports a $ref that refers back to a schema that contains
	// it: its expansion has no end.
	Recursive bool
}

// MeasureSchema returns the size of s. It reads s once and follows each
// definition once, however many times it is referred to, so its own work
// is bounded by the size of s as written.
//
// The error wraps [ErrSchemaTooLarge] when s, as written or expanded, is
// larger than [MaxSchemaSize]. Other errors say why s cannot be measured: a $ref that
// does not point inside s (only "#", "#/json/pointer" and "#anchor"
// references are followed), a $dynamicRef, a $id below the root of a
// schema with references, or a $ref that leads back to itself without
// going into the value (through allOf, anyOf, oneOf, not, if/then/else or
// dependentSchemas), which jsonschema-go would follow forever.
func MeasureSchema(s *jsonschema.Schema) (SchemaSize, error) {
	g, err := newSchemaGraph(s)
	if err != nil {
		return SchemaSize{}, err
	}
	return g.measure()
}

// A schemaGraph is a schema as the work of expanding and validating it
// sees it: for each node, its own weight and the nodes applied with it.
type schemaGraph struct {
	root  *schemaNode
	nodes map[*jsonschema.Schema]*schemaNode
	bytes int // the weight of every node, as written
}

// A schemaNode is one schema of a graph.
type schemaNode struct {
	s   *jsonschema.Schema
	own int // its weight without its subschemas
	// inPlace are applied to the same value: the $ref's target, allOf,
	// anyOf, oneOf, not, if, then, else, dependentSchemas.
	inPlace []*schemaNode
	// nested are applied to values inside it: properties, items...
	nested []*schemaNode
}

// newSchemaGraph builds the graph of s, resolving its references.
func newSchemaGraph(s *jsonschema.Schema) (*schemaGraph, error) {
	g := &schemaGraph{nodes: map[*jsonschema.Schema]*schemaNode{}}
	anchors := map[string]*jsonschema.Schema{}
	var refs []*schemaNode
	nestedID := ""
	adding := map[*jsonschema.Schema]bool{}
	var cycle *jsonschema.Schema
	var add func(s *jsonschema.Schema, root bool) *schemaNode
	add = func(s *jsonschema.Schema, root bool) *schemaNode {
		if s == nil {
			return nil
		}
		if adding[s] {
			cycle = s // a schema built in Go that contains itself
		}
		if n := g.nodes[s]; n != nil {
			return n // a schema built in Go may share a subschema; Resolve refuses it
		}
		adding[s] = true
		defer delete(adding, s)
		n := &schemaNode{s: s, own: ownWeight(s)}
		g.nodes[s] = n
		g.bytes += n.own
		if !root && s.ID != "" {
			nestedID = s.ID
		}
		for _, a := range []string{s.Anchor, s.DynamicAnchor} {
			if a != "" {
				anchors[a] = s
			}
		}
		if s.Ref != "" {
			refs = append(refs, n)
		}
		one := func(list *[]*schemaNode, c *jsonschema.Schema) {
			if cn := add(c, false); cn != nil {
				*list = append(*list, cn)
			}
		}
		for _, c := range [...]*jsonschema.Schema{s.Not, s.If, s.Then, s.Else} {
			one(&n.inPlace, c)
		}
		for _, list := range [...][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf} {
			for _, c := range list {
				one(&n.inPlace, c)
			}
		}
		for _, m := range [...]map[string]*jsonschema.Schema{s.DependentSchemas, s.DependencySchemas} {
			for _, c := range m {
				one(&n.inPlace, c)
			}
		}
		for _, c := range [...]*jsonschema.Schema{s.Items, s.AdditionalItems, s.Contains, s.UnevaluatedItems,
			s.AdditionalProperties, s.PropertyNames, s.UnevaluatedProperties, s.ContentSchema} {
			one(&n.nested, c)
		}
		for _, list := range [...][]*jsonschema.Schema{s.PrefixItems, s.ItemsArray} {
			for _, c := range list {
				one(&n.nested, c)
			}
		}
		for _, m := range [...]map[string]*jsonschema.Schema{s.Properties, s.PatternProperties} {
			for _, c := range m {
				one(&n.nested, c)
			}
		}
		// Definitions are applied only through references.
		for _, m := range [...]map[string]*jsonschema.Schema{s.Defs, s.Definitions} {
			for _, c := range m {
				add(c, false)
			}
		}
		return n
	}
	if g.root = add(s, true); g.root == nil {
		return g, nil
	}
	if cycle != nil {
		return nil, fmt.Errorf("the schema contains itself (at %v)", cycle)
	}
	for _, n := range g.nodes {
		if n.s.DynamicRef != "" {
			return nil, fmt.Errorf("$dynamicRef %q is not supported", n.s.DynamicRef)
		}
	}
	if len(refs) > 0 && nestedID != "" {
		return nil, fmt.Errorf("$id %q below the root of a schema with references is not supported", nestedID)
	}
	for _, n := range refs {
		target, err := resolveRef(s, anchors, n.s.Ref)
		if err != nil {
			return nil, err
		}
		tn := g.nodes[target]
		if tn == nil {
			return nil, fmt.Errorf("$ref %q does not point to a schema", n.s.Ref)
		}
		n.inPlace = append(n.inPlace, tn)
	}
	return g, nil
}

// resolveRef returns the schema ref points to inside root, as
// jsonschema-go resolves it for a schema whose only $id, if any, is the
// root's.
func resolveRef(root *jsonschema.Schema, anchors map[string]*jsonschema.Schema, ref string) (*jsonschema.Schema, error) {
	u, err := url.Parse(ref)
	if err != nil || u.Scheme != "" || u.Opaque != "" || u.Host != "" || u.Path != "" || u.RawQuery != "" {
		return nil, fmt.Errorf("$ref %q does not point inside the schema (only #... references are followed)", ref)
	}
	frag := u.Fragment
	if frag != "" && !strings.HasPrefix(frag, "/") {
		if a := anchors[frag]; a != nil {
			return a, nil
		}
		return nil, fmt.Errorf("$ref %q: no such anchor", ref)
	}
	s := root
	segs := strings.Split(frag, "/")[1:]
	for i := 0; i < len(segs); i++ {
		seg := unescapePointer(segs[i])
		next := func() (string, bool) {
			if i+1 >= len(segs) {
				return "", false
			}
			i++
			return unescapePointer(segs[i]), true
		}
		var child *jsonschema.Schema
		switch seg {
		case "$defs", "definitions", "properties", "patternProperties", "dependentSchemas", "dependencies":
			m := map[string]map[string]*jsonschema.Schema{"$defs": s.Defs, "definitions": s.Definitions,
				"properties": s.Properties, "patternProperties": s.PatternProperties,
				"dependentSchemas": s.DependentSchemas, "dependencies": s.DependencySchemas}[seg]
			if key, ok := next(); ok {
				child = m[key]
			}
		case "allOf", "anyOf", "oneOf", "prefixItems", "items":
			list := map[string][]*jsonschema.Schema{"allOf": s.AllOf, "anyOf": s.AnyOf, "oneOf": s.OneOf,
				"prefixItems": s.PrefixItems, "items": s.ItemsArray}[seg]
			if seg == "items" && s.Items != nil {
				child = s.Items
				break
			}
			if key, ok := next(); ok {
				if k, err := strconv.Atoi(key); err == nil && k >= 0 && k < len(list) && (k == 0 || key[0] != '0') {
					child = list[k]
				}
			}
		default:
			child = map[string]*jsonschema.Schema{"additionalItems": s.AdditionalItems, "contains": s.Contains,
				"unevaluatedItems": s.UnevaluatedItems, "additionalProperties": s.AdditionalProperties,
				"propertyNames": s.PropertyNames, "unevaluatedProperties": s.UnevaluatedProperties,
				"not": s.Not, "if": s.If, "then": s.Then, "else": s.Else, "contentSchema": s.ContentSchema}[seg]
		}
		if child == nil {
			return nil, fmt.Errorf("$ref %q does not point to a schema", ref)
		}
		s = child
	}
	return s, nil
}

func unescapePointer(s string) string {
	return strings.NewReplacer("~1", "/", "~0", "~").Replace(s)
}

// ownWeight is about the length of s's JSON without its subschemas: the
// braces, and each keyword with its value. Where several keywords are
// counted alike, one of their names stands for all.
func ownWeight(s *jsonschema.Schema) int {
	w := 2
	kw := func(name string, n int) { w += len(name) + n + 4 } // "name":value,
	for name, v := range map[string]string{"$id": s.ID, "$schema": s.Schema, "$ref": s.Ref, "$comment": s.Comment,
		"$anchor": s.Anchor, "$dynamicAnchor": s.DynamicAnchor, "$dynamicRef": s.DynamicRef, "title": s.Title,
		"description": s.Description, "type": s.Type, "pattern": s.Pattern, "contentEncoding": s.ContentEncoding,
		"contentMediaType": s.ContentMediaType, "format": s.Format} {
		if v != "" {
			kw(name, len(v)+2)
		}
	}
	for _, list := range [...][]string{s.Types, s.Required} {
		if list != nil {
			kw("required", 2)
			for _, v := range list {
				w += len(v) + 3
			}
		}
	}
	for _, p := range [...]*float64{s.MultipleOf, s.Minimum, s.Maximum, s.ExclusiveMinimum, s.ExclusiveMaximum} {
		if p != nil {
			kw("maximum", 8)
		}
	}
	for _, p := range [...]*int{s.MinLength, s.MaxLength, s.MinItems, s.MaxItems, s.MinContains, s.MaxContains,
		s.MinProperties, s.MaxProperties} {
		if p != nil {
			kw("maxItems", 8)
		}
	}
	for _, b := range [...]bool{s.Deprecated, s.ReadOnly, s.WriteOnly, s.UniqueItems} {
		if b {
			kw("readOnly", 4)
		}
	}
	if s.Default != nil {
		kw("default", len(s.Default))
	}
	for _, v := range [...]any{s.Examples, s.Enum, s.Const, s.Extra, s.DependentRequired, s.DependencyStrings, s.Vocabulary} {
		if !isZeroValue(v) {
			kw("examples", jsonLen(v))
		}
	}
	for _, m := range [...]map[string]*jsonschema.Schema{s.Defs, s.Definitions, s.Properties, s.PatternProperties,
		s.DependentSchemas, s.DependencySchemas} {
		if m != nil {
			kw("properties", 2)
			for name := range m {
				w += len(name) + 4
			}
		}
	}
	for _, list := range [...][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf, s.PrefixItems, s.ItemsArray} {
		if list != nil {
			kw("anyOf", 2+len(list))
		}
	}
	for _, c := range [...]*jsonschema.Schema{s.Not, s.If, s.Then, s.Else, s.Items, s.AdditionalItems, s.Contains,
		s.UnevaluatedItems, s.AdditionalProperties, s.PropertyNames, s.UnevaluatedProperties, s.ContentSchema} {
		if c != nil {
			kw("items", 0)
		}
	}
	return w
}

// isZeroValue reports whether a keyword's value is absent.
func isZeroValue(v any) bool {
	switch v := v.(type) {
	case []any:
		return v == nil
	case *any:
		return v == nil
	case map[string]any:
		return v == nil
	case map[string][]string:
		return v == nil
	case map[string]bool:
		return v == nil
	}
	return v == nil
}

// jsonLen is the length of v's JSON, or of its printed form when it has
// none.
func jsonLen(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return len(fmt.Sprint(v))
	}
	return len(b)
}

// unbounded is the depth of a value whose depth is not known: nested
// schemas are expanded without end, but for recursion.
const unbounded = math.MaxInt

// errInPlaceLoop is returned for a $ref that leads back to itself without
// going into the value.
var errInPlaceLoop = errors.New("loops back to itself without going into the value: validation would never end")

// A sizer expands a graph, each node once for each depth it is applied
// at, and stops once it exceeds its budget.
type sizer struct {
	budget    int
	memo      map[sizeKey]int
	path      []sizeFrame
	onPath    map[sizeKey]int // index in path
	recursive bool
}

type sizeKey struct {
	n     *schemaNode
	depth int
}

type sizeFrame struct {
	key    sizeKey
	nested bool // entered as a nested schema
}

func newSizer(budget int) *sizer {
	return &sizer{budget: budget, memo: map[sizeKey]int{}, onPath: map[sizeKey]int{}}
}

// size returns the weight of n expanded for a value depth levels deep
// (unbounded: without end, each recursion once), or an error wrapping
// ErrSchemaTooLarge once it exceeds the budget.
func (z *sizer) size(n *schemaNode, depth int, nested bool) (int, error) {
	key := sizeKey{n, depth}
	if v, ok := z.memo[key]; ok {
		return v, nil
	}
	if i, ok := z.onPath[key]; ok {
		for _, f := range z.path[i+1:] {
			if f.nested {
				z.recursive = true // counted once already
				return 0, nil
			}
		}
		if nested {
			z.recursive = true
			return 0, nil
		}
		ref := ""
		for _, f := range z.path[i:] {
			if f.key.n.s.Ref != "" {
				ref = f.key.n.s.Ref
				break
			}
		}
		return 0, fmt.Errorf("$ref %q %w", ref, errInPlaceLoop)
	}
	// Every node on the path counts at least 2: a path longer than half
	// the budget is over it.
	if len(z.path) > z.budget/2 {
		return 0, z.tooLarge()
	}
	z.onPath[key] = len(z.path)
	z.path = append(z.path, sizeFrame{key, nested})
	defer func() {
		z.path = z.path[:len(z.path)-1]
		delete(z.onPath, key)
	}()
	total := n.own
	addAll := func(list []*schemaNode, depth int, nested bool) error {
		for _, c := range list {
			v, err := z.size(c, depth, nested)
			if err != nil {
				return err
			}
			if total += v; total > z.budget {
				return z.tooLarge()
			}
		}
		return nil
	}
	if err := addAll(n.inPlace, depth, false); err != nil {
		return 0, err
	}
	switch {
	case depth == unbounded:
		if err := addAll(n.nested, depth, true); err != nil {
			return 0, err
		}
	case depth > 1:
		if err := addAll(n.nested, depth-1, true); err != nil {
			return 0, err
		}
	}
	z.memo[key] = total
	return total, nil
}

func (z *sizer) tooLarge() error {
	return fmt.Errorf("%w: it expands to more than %d bytes of JSON once each $ref is replaced by what it points to",
		ErrSchemaTooLarge, z.budget)
}

// measure returns the graph's size, within MaxSchemaSize.
func (g *schemaGraph) measure() (SchemaSize, error) {
	size := SchemaSize{Bytes: g.bytes}
	z := newSizer(MaxSchemaSize)
	if g.bytes > MaxSchemaSize {
		return size, fmt.Errorf("%w: it is more than %d bytes of JSON", ErrSchemaTooLarge, MaxSchemaSize)
	}
	if g.root == nil {
		return size, nil
	}
	expanded, err := z.size(g.root, unbounded, false)
	if err != nil {
		return size, err
	}
	size.Expanded, size.Recursive = expanded, z.recursive
	return size, nil
}

// checkDefaults checks that validating the schema's defaults, as
// Resolve's ValidateDefaults does, fits in the budget: the schemas that
// carry one, each expanded to the depth of its default, within
// MaxSchemaSize in all.
func (g *schemaGraph) checkDefaults() error {
	z := newSizer(MaxSchemaSize)
	total := 0
	for _, n := range g.nodes {
		if n.s.Default == nil {
			continue
		}
		var v any
		if err := json.Unmarshal(n.s.Default, &v); err != nil {
			continue // Resolve says what is wrong with it
		}
		size, err := z.size(n, valueDepth(v), false)
		if err != nil {
			return err
		}
		if total += size; total > MaxSchemaSize {
			return z.tooLarge()
		}
	}
	return nil
}

// checkDepth reports whether a value depth levels deep can be validated
// within the budget; it is only needed for a recursive schema, whose
// expansion grows with the value.
func (g *schemaGraph) checkDepth(depth int) error {
	_, err := newSizer(MaxSchemaSize).size(g.root, depth, false)
	return err
}

// valueDepth returns the levels of arrays and objects in v, plus one, as
// jsonschema-go walks them (JSON's values, and Go's slices, arrays, maps,
// structs and pointers), up to a limit: each level of a recursive schema
// expands by at least 2, so a value deeper than half the budget is over it
// anyway, and a Go value that contains itself ends there.
func valueDepth(v any) int {
	return depth(reflect.ValueOf(v), MaxSchemaSize/2+1)
}

func depth(v reflect.Value, limit int) int {
	if limit <= 1 {
		return 1
	}
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return 1
		}
		v = v.Elem()
	}
	d := 0
	switch v.Kind() {
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			d = max(d, depth(v.Index(i), limit-1))
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			d = max(d, depth(it.Value(), limit-1))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			d = max(d, depth(v.Field(i), limit-1))
		}
	default:
		return 1
	}
	return d + 1
}
