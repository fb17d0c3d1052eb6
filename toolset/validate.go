package toolset

import (
	"encoding/json"
	"math"
	"reflect"
	"regexp"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// This file holds the fast path of argument validation: a schema compiled
// once, when the tool is prepared, into a validator that checks the
// arguments Gemini's client decodes (nil, bool, float64, string, []any,
// map[string]any) without allocating. It covers the keywords real tool
// schemas use; a schema with any other keyword is not compiled, and its
// tool validates with jsonschema-go alone.
//
// jsonschema-go stays the reference: its verdict is the one that counts.
// The fast path only answers "valid" for arguments jsonschema-go accepts,
// and when it does not answer "valid", Execute asks jsonschema-go, which
// also writes the error message. FuzzValidateFastPath checks that the two
// agree on every schema and instance it generates.

// A verdict is the fast path's answer for one instance.
type verdict uint8

const (
	pass verdict = iota // valid
	fail                // invalid
	// unsure: the instance holds a Go value outside the fast path's domain
	// (a struct, a []string, a json.Number, an int beyond 2^53, a NaN...),
	// where only jsonschema-go can tell.
	unsure
)

// JSON types as bits, for the type keyword.
const (
	typeNull = 1 << iota
	typeBoolean
	typeNumber // a number with a fractional part
	typeInteger
	typeString
	typeArray
	typeObject
)

var typeBits = map[string]uint8{
	"null": typeNull, "boolean": typeBoolean, "number": typeNumber | typeInteger,
	"integer": typeInteger, "string": typeString, "array": typeArray, "object": typeObject,
}

// A fastSchema is a schema compiled for the fast path. The keywords are
// checked in the order jsonschema-go checks them, so that both stop at the
// same failure.
type fastSchema struct {
	types    uint8 // the JSON types allowed, when hasTypes
	hasTypes bool

	enum     []any // scalar values: nil, bool, string or float64
	hasEnum  bool
	constant any // scalar, like enum's values
	hasConst bool

	multipleOf, minimum, maximum, exclusiveMinimum, exclusiveMaximum *float64

	minLength, maxLength *int
	pattern              *regexp.Regexp

	allOf, anyOf, oneOf []*fastSchema
	not                 *fastSchema

	items              *fastSchema
	minItems, maxItems *int
	uniqueItems        bool

	properties           []fastProperty
	propertyIndex        map[string]bool // the names in properties
	additionalProperties *fastSchema
	minProperties        *int
	maxProperties        *int
	required             []string
}

type fastProperty struct {
	name   string
	schema *fastSchema
}

// maxUniqueItems is the longest array whose uniqueItems the fast path
// checks, pair by pair; jsonschema-go hashes longer ones.
const maxUniqueItems = 64

// compileSchema compiles a resolved schema for the fast path. It returns
// nil when the schema uses a keyword outside the fast path's subset.
func compileSchema(s *jsonschema.Schema) *fastSchema {
	f, ok := compile(s, true)
	if !ok {
		return nil
	}
	return f
}

func compile(s *jsonschema.Schema, root bool) (*fastSchema, bool) {
	if s == nil {
		return nil, false
	}
	// rest keeps the keywords not compiled yet: it must end up empty.
	rest := *s
	// Annotations, which jsonschema-go does not validate.
	rest.Title, rest.Description, rest.Comment = "", "", ""
	rest.Default, rest.Examples = nil, nil
	rest.Deprecated, rest.ReadOnly, rest.WriteOnly = false, false, false
	rest.Format, rest.ContentEncoding, rest.ContentMediaType = "", "", ""
	rest.Extra, rest.PropertyOrder = nil, nil
	if root {
		rest.Schema = "" // a version Resolve accepted: both behave alike on this subset
	}

	f := &fastSchema{}
	ok := true
	sub := func(s *jsonschema.Schema) *fastSchema {
		c, subOK := compile(s, false)
		ok = ok && subOK
		return c
	}
	subs := func(ss []*jsonschema.Schema) []*fastSchema {
		if ss == nil {
			return nil // absent; an empty list is present, and anyOf: [] fails
		}
		cs := make([]*fastSchema, 0, len(ss))
		for _, s := range ss {
			cs = append(cs, sub(s))
		}
		return cs
	}

	switch {
	case s.Type != "":
		f.hasTypes, f.types = true, typeBits[s.Type]
	case s.Types != nil:
		f.hasTypes = true
		for _, t := range s.Types {
			f.types |= typeBits[t]
		}
	}
	rest.Type, rest.Types = "", nil

	if s.Enum != nil {
		f.hasEnum = true
		for _, e := range s.Enum {
			v, scalar := scalarValue(e)
			ok = ok && scalar
			f.enum = append(f.enum, v)
		}
	}
	if s.Const != nil {
		v, scalar := scalarValue(*s.Const)
		ok = ok && scalar
		f.hasConst, f.constant = true, v
	}
	rest.Enum, rest.Const = nil, nil

	// jsonschema-go compares numbers as big.Rats, which a non-finite bound
	// does not make: leave such schemas to it.
	for _, b := range []*float64{s.Minimum, s.Maximum, s.ExclusiveMinimum, s.ExclusiveMaximum} {
		ok = ok && (b == nil || !math.IsNaN(*b) && !math.IsInf(*b, 0))
	}
	f.multipleOf, f.minimum, f.maximum = s.MultipleOf, s.Minimum, s.Maximum
	f.exclusiveMinimum, f.exclusiveMaximum = s.ExclusiveMinimum, s.ExclusiveMaximum
	rest.MultipleOf, rest.Minimum, rest.Maximum, rest.ExclusiveMinimum, rest.ExclusiveMaximum = nil, nil, nil, nil, nil

	f.minLength, f.maxLength = s.MinLength, s.MaxLength
	if s.Pattern != "" {
		re, err := regexp.Compile(s.Pattern) // as jsonschema-go compiles it
		ok = ok && err == nil
		f.pattern = re
	}
	rest.MinLength, rest.MaxLength, rest.Pattern = nil, nil, ""

	f.allOf, f.anyOf, f.oneOf = subs(s.AllOf), subs(s.AnyOf), subs(s.OneOf)
	if s.Not != nil {
		f.not = sub(s.Not)
	}
	rest.AllOf, rest.AnyOf, rest.OneOf, rest.Not = nil, nil, nil, nil

	if s.Items != nil {
		f.items = sub(s.Items)
	}
	f.minItems, f.maxItems, f.uniqueItems = s.MinItems, s.MaxItems, s.UniqueItems
	rest.Items, rest.MinItems, rest.MaxItems, rest.UniqueItems = nil, nil, nil, false

	if len(s.Properties) > 0 {
		f.propertyIndex = make(map[string]bool, len(s.Properties))
		for name, ps := range s.Properties {
			f.properties = append(f.properties, fastProperty{name, sub(ps)})
			f.propertyIndex[name] = true
		}
	}
	if s.AdditionalProperties != nil {
		f.additionalProperties = sub(s.AdditionalProperties)
	}
	f.minProperties, f.maxProperties, f.required = s.MinProperties, s.MaxProperties, s.Required
	rest.Properties, rest.AdditionalProperties = nil, nil
	rest.MinProperties, rest.MaxProperties, rest.Required = nil, nil, nil

	if !ok || !reflect.ValueOf(rest).IsZero() {
		return nil, false
	}
	return f, true
}

// scalarValue returns an enum or const value as the fast path compares it:
// nil, a bool, a string or a float64. jsonschema-go compares by kind (a
// named string type equals a string) and numbers by value; a number that is
// not a float64 is kept only when a float64 holds it exactly. ok is false
// for any other value, which keeps the schema off the fast path.
func scalarValue(v any) (_ any, ok bool) {
	switch v.(type) {
	case nil:
		return nil, true
	case json.Number: // a string kind that jsonschema-go compares as a number
		return nil, false
	}
	rv := reflect.ValueOf(v)
	switch {
	case rv.Kind() == reflect.Bool:
		return rv.Bool(), true
	case rv.Kind() == reflect.String:
		return rv.String(), true
	case rv.CanFloat():
		f := rv.Float()
		return f, !math.IsNaN(f) && !math.IsInf(f, 0)
	case rv.CanInt():
		n := rv.Int()
		return float64(n), n >= -1<<53 && n <= 1<<53
	case rv.CanUint():
		n := rv.Uint()
		return float64(n), n <= 1<<53
	}
	return nil, false
}

// numberValue returns v as a float64 when v is a Go number that a float64
// holds exactly, so that comparing float64s is comparing the numbers, as
// jsonschema-go does with big.Rats. A NaN, an infinity and an integer
// beyond 2^53 are left to jsonschema-go.
func numberValue(v any) (float64, bool) {
	var f float64
	switch n := v.(type) {
	case float64:
		f = n
	case float32:
		f = float64(n)
	case int:
		return exactInt(int64(n))
	case int8:
		return float64(n), true
	case int16:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return exactInt(n)
	case uint:
		return exactUint(uint64(n))
	case uint8:
		return float64(n), true
	case uint16:
		return float64(n), true
	case uint32:
		return float64(n), true
	case uint64:
		return exactUint(n)
	default:
		return 0, false
	}
	return f, !math.IsNaN(f) && !math.IsInf(f, 0)
}

func exactInt(n int64) (float64, bool)   { return float64(n), n >= -1<<53 && n <= 1<<53 }
func exactUint(n uint64) (float64, bool) { return float64(n), n <= 1<<53 }

// isInteger reports whether jsonschema-go gives the number the type
// "integer": whole, whatever its Go type.
func isInteger(f float64) bool {
	_, frac := math.Modf(f)
	return frac == 0
}

// validate checks the instance v against s.
func (s *fastSchema) validate(v any) verdict {
	// Find v's JSON type. Values of other Go types are jsonschema-go's.
	var (
		typ uint8
		num float64
	)
	switch v := v.(type) {
	case nil:
		typ = typeNull
	case bool:
		typ = typeBoolean
	case string:
		typ = typeString
	case []any:
		typ = typeArray
	case map[string]any:
		typ = typeObject
	default:
		f, ok := numberValue(v)
		if !ok {
			return unsure
		}
		num, typ = f, typeNumber
		if isInteger(f) {
			typ = typeInteger
		}
	}

	if s.hasTypes && s.types&typ == 0 {
		return fail
	}
	if s.hasEnum {
		found := false
		for _, e := range s.enum {
			if scalarEqual(e, v, typ, num) {
				found = true
				break
			}
		}
		if !found {
			return fail
		}
	}
	if s.hasConst && !scalarEqual(s.constant, v, typ, num) {
		return fail
	}
	if typ&(typeNumber|typeInteger) != 0 && !s.validNumber(num) {
		return fail
	}
	if typ == typeString && !s.validString(v.(string)) {
		return fail
	}

	if r := s.validateLogic(v); r != pass {
		return r
	}

	switch typ {
	case typeArray:
		return s.validateArray(v.([]any))
	case typeObject:
		return s.validateObject(v.(map[string]any))
	}
	return pass
}

// scalarEqual reports whether the enum or const value e equals the instance
// v, whose JSON type is typ and, for a number, whose value is num.
func scalarEqual(e, v any, typ uint8, num float64) bool {
	switch e := e.(type) {
	case nil:
		return typ == typeNull
	case bool:
		return typ == typeBoolean && e == v.(bool)
	case string:
		return typ == typeString && e == v.(string)
	case float64:
		return typ&(typeNumber|typeInteger) != 0 && e == num
	}
	return false
}

func (s *fastSchema) validNumber(n float64) bool {
	if s.multipleOf != nil {
		// jsonschema-go's float test, computed on the same float64s.
		if _, frac := math.Modf(n / *s.multipleOf); frac != 0 {
			return false
		}
	}
	return (s.minimum == nil || n >= *s.minimum) &&
		(s.maximum == nil || n <= *s.maximum) &&
		(s.exclusiveMinimum == nil || n > *s.exclusiveMinimum) &&
		(s.exclusiveMaximum == nil || n < *s.exclusiveMaximum)
}

func (s *fastSchema) validString(str string) bool {
	if s.minLength != nil || s.maxLength != nil {
		n := utf8.RuneCountInString(str) // code points, as jsonschema-go counts
		if s.minLength != nil && n < *s.minLength || s.maxLength != nil && n > *s.maxLength {
			return false
		}
	}
	return s.pattern == nil || s.pattern.MatchString(str)
}

// validateLogic checks allOf, anyOf, oneOf and not. jsonschema-go stops at
// the first allOf member that fails and at the second oneOf member that
// passes, but validates every anyOf member: an unsure member makes the
// whole unsure where jsonschema-go would look at it.
func (s *fastSchema) validateLogic(v any) verdict {
	for _, ss := range s.allOf {
		if r := ss.validate(v); r != pass {
			return r
		}
	}
	if s.anyOf != nil {
		r := fail
		for _, ss := range s.anyOf {
			switch ss.validate(v) {
			case pass:
				r = pass
			case unsure:
				return unsure
			}
		}
		if r == fail {
			return fail
		}
	}
	if s.oneOf != nil {
		passed := 0
		for _, ss := range s.oneOf {
			switch ss.validate(v) {
			case pass:
				if passed++; passed > 1 {
					return fail
				}
			case unsure:
				return unsure
			}
		}
		if passed == 0 {
			return fail
		}
	}
	if s.not != nil {
		switch s.not.validate(v) {
		case pass:
			return fail
		case unsure:
			return unsure
		}
	}
	return pass
}

func (s *fastSchema) validateArray(a []any) verdict {
	if s.items != nil {
		for _, item := range a {
			if r := s.items.validate(item); r != pass {
				return r
			}
		}
	}
	if s.minItems != nil && len(a) < *s.minItems || s.maxItems != nil && len(a) > *s.maxItems {
		return fail
	}
	if s.uniqueItems && len(a) > 1 {
		// jsonschema-go hashes every item whole before comparing any.
		if len(a) > maxUniqueItems {
			return unsure
		}
		for _, item := range a {
			if !knownJSON(item) {
				return unsure
			}
		}
		for i := 1; i < len(a); i++ {
			for j := 0; j < i; j++ {
				if equalJSON(a[i], a[j]) {
					return fail
				}
			}
		}
	}
	return pass
}

// equalJSON reports whether two values that knownJSON accepts are equal as
// jsonschema.Equal compares them: numbers by value, and a nil slice or map
// unequal to an empty one.
func equalJSON(x, y any) bool {
	if fx, ok := numberValue(x); ok {
		fy, ok := numberValue(y)
		return ok && fx == fy
	}
	switch x := x.(type) {
	case nil:
		return y == nil
	case bool:
		yb, ok := y.(bool)
		return ok && x == yb
	case string:
		ys, ok := y.(string)
		return ok && x == ys
	case []any:
		ya, ok := y.([]any)
		if !ok || (x == nil) != (ya == nil) || len(x) != len(ya) {
			return false
		}
		for i := range x {
			if !equalJSON(x[i], ya[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		ym, ok := y.(map[string]any)
		if !ok || (x == nil) != (ym == nil) || len(x) != len(ym) {
			return false
		}
		for k, xv := range x {
			if yv, ok := ym[k]; !ok || !equalJSON(xv, yv) {
				return false
			}
		}
		return true
	}
	return false
}

// knownJSON reports whether v holds only Go values the fast path knows, at
// any depth.
func knownJSON(v any) bool {
	switch v := v.(type) {
	case nil, bool, string:
		return true
	case []any:
		for _, e := range v {
			if !knownJSON(e) {
				return false
			}
		}
		return true
	case map[string]any:
		for _, e := range v {
			if !knownJSON(e) {
				return false
			}
		}
		return true
	}
	_, ok := numberValue(v)
	return ok
}

func (s *fastSchema) validateObject(m map[string]any) verdict {
	// jsonschema-go visits properties in map order and stops at the first
	// failure: a failure is certain only when no property is unsure.
	r := pass
	seen := 0 // instance properties that are in s.properties
	for _, p := range s.properties {
		v, ok := m[p.name]
		if !ok {
			continue
		}
		seen++
		switch p.schema.validate(v) {
		case fail:
			r = fail
		case unsure:
			return unsure
		}
	}
	if r != pass {
		return r
	}
	if s.additionalProperties != nil && seen < len(m) {
		for name, v := range m {
			if s.propertyIndex[name] {
				continue
			}
			switch s.additionalProperties.validate(v) {
			case fail:
				r = fail
			case unsure:
				return unsure
			}
		}
		if r != pass {
			return r
		}
	}
	if s.minProperties != nil && len(m) < *s.minProperties || s.maxProperties != nil && len(m) > *s.maxProperties {
		return fail
	}
	for _, name := range s.required {
		if _, ok := m[name]; !ok {
			return fail
		}
	}
	return pass
}
