// Package schematest writes the JSON Schemas that tests of schema budgets
// use: small schemas whose expansion grows without bound (issue 32's
// attack), and legitimate ones that share definitions.
package schematest

import (
	"fmt"
	"strings"
)

// Doubling returns an object schema of about 90 bytes per level whose
// property "x" refers to the last of levels definitions, each an object
// whose properties "a" and "b" both refer to the one before: with every
// $ref replaced by what it points to, it doubles at each level. The
// schema is fine to validate against (a value is checked once per
// property it has); expanding it is what costs.
func Doubling(levels int) string {
	return chain(levels, `{"type":"object","properties":{"a":{"$ref":"#/$defs/d%[1]d"},"b":{"$ref":"#/$defs/d%[1]d"}}}`)
}

// DoublingAnyOf is [Doubling] with each level an anyOf of the level
// before, twice: validating a single string against it follows 2^levels
// paths.
func DoublingAnyOf(levels int) string {
	return chain(levels, `{"anyOf":[{"$ref":"#/$defs/d%[1]d"},{"$ref":"#/$defs/d%[1]d"}]}`)
}

func chain(levels int, level string) string {
	var defs strings.Builder
	defs.WriteString(`"d0":{"type":"string"}`)
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&defs, `,"d%d":%s`, i, fmt.Sprintf(level, i-1))
	}
	return fmt.Sprintf(`{"type":"object","properties":{"x":{"$ref":"#/$defs/d%d"}},"$defs":{%s}}`, levels, defs.String())
}

// Shared returns a legitimate schema that shares one definition, an
// address of a dozen described fields, among uses places: inlining each
// use makes it about uses times larger than it is with $defs.
func Shared(uses int) string {
	var fields, props []string
	for _, f := range []string{"street", "number", "unit", "city", "district", "region", "postcode", "country",
		"latitude", "longitude", "instructions", "contact"} {
		fields = append(fields, fmt.Sprintf(`%q:{"type":"string","description":"the %s of the address, as written on an envelope"}`, f, f))
	}
	for i := range uses {
		props = append(props, fmt.Sprintf(`"stop%d":{"$ref":"#/$defs/address","description":"stop %d of the delivery"}`, i, i+1))
	}
	return fmt.Sprintf(`{"type":"object","properties":{%s},"$defs":{"address":{"type":"object","properties":{%s},"required":["street","city"]}}}`,
		strings.Join(props, ","), strings.Join(fields, ","))
}

// Nested returns an array schema levels deep, each level an array of the
// next (25 bytes a level): what jsonschema-go's own decoding takes the
// square of the depth to decode (issue 43: 1,000 levels, 25 KB, took
// 2.9 s and 235 MB).
func Nested(levels int) string {
	return strings.Repeat(`{"type":"array","items":`, levels) + `{"type":"string"}` + strings.Repeat(`}`, levels)
}

// NestedSize returns the Nested schema of about size bytes.
func NestedSize(size int) string { return Nested(size / 25) }

// Deep returns a schema that nests levels (at most 63) arrays, the last
// of strings whose description is leaf bytes long: as deep as a browser
// tool's schema may nest, with its bytes where jsonschema-go's own
// decoding reads them once per level.
func Deep(levels, leaf int) string {
	return strings.Repeat(`{"type":"array","items":`, levels) + `{"type":"string","description":"` + strings.Repeat("x", leaf) + `"}` +
		strings.Repeat(`}`, levels)
}
