package openapitools_test

import (
	"maps"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// argsFor makes arguments a tool's input schema accepts, as a model would:
// every required property, and the optional ones near the top, with
// plausible values (the first of an enum, a value of the format, within
// the bounds). It may fail to satisfy a schema (a pattern it cannot
// match): the tool then refuses the arguments, and the caller skips it.
func argsFor(root *jsonschema.Schema) map[string]any {
	g := &generator{root: root, expanding: map[string]int{}}
	v, _ := g.value(root, 0).(map[string]any)
	if v == nil {
		v = map[string]any{}
	}
	return v
}

type generator struct {
	root      *jsonschema.Schema
	expanding map[string]int
}

func (g *generator) resolve(s *jsonschema.Schema) (*jsonschema.Schema, string) {
	ref := ""
	for s != nil && s.Ref != "" {
		ref = s.Ref
		name := strings.TrimPrefix(s.Ref, "#/$defs/")
		name = strings.NewReplacer("~1", "/", "~0", "~").Replace(name)
		s = g.root.Defs[name]
	}
	return s, ref
}

func (g *generator) value(s *jsonschema.Schema, depth int) any {
	s, ref := g.resolve(s)
	if s == nil {
		return "x"
	}
	if ref != "" {
		if g.expanding[ref] > 0 && depth > 2 {
			return nil // recursion: the caller leaves an optional property out
		}
		g.expanding[ref]++
		defer func() { g.expanding[ref]-- }()
	}
	if s.Const != nil {
		return *s.Const
	}
	for _, e := range s.Enum {
		if e != nil {
			return e
		}
	}
	if len(s.AllOf) > 0 {
		merged := map[string]any{}
		isObject := false
		for _, sub := range s.AllOf {
			if m, ok := g.value(sub, depth).(map[string]any); ok {
				maps.Copy(merged, m)
				isObject = true
			}
		}
		own := *s
		own.AllOf = nil
		if len(own.Properties) > 0 || own.Type == "object" {
			if m, ok := g.value(&own, depth).(map[string]any); ok {
				maps.Copy(merged, m)
				isObject = true
			}
		}
		if isObject {
			return merged
		}
		return g.value(s.AllOf[0], depth)
	}
	for _, alts := range [][]*jsonschema.Schema{s.OneOf, s.AnyOf} {
		if len(alts) > 0 {
			v := g.value(alts[0], depth)
			if m, ok := v.(map[string]any); ok && len(s.Properties) > 0 {
				own := *s
				own.OneOf, own.AnyOf = nil, nil
				if om, ok := g.value(&own, depth).(map[string]any); ok {
					maps.Copy(om, m)
					return om
				}
			}
			return v
		}
	}
	typ := s.Type
	if typ == "" {
		for _, t := range s.Types {
			if t != "null" {
				typ = t
				break
			}
		}
	}
	if typ == "" {
		switch {
		case s.Properties != nil:
			typ = "object"
		case s.Items != nil:
			typ = "array"
		default:
			typ = "string"
		}
	}
	switch typ {
	case "object":
		out := map[string]any{}
		for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
			if !slices.Contains(s.Required, name) && depth > 1 {
				continue
			}
			v := g.value(s.Properties[name], depth+1)
			if v == nil && !slices.Contains(s.Required, name) {
				continue
			}
			out[name] = v
		}
		if len(out) == 0 && s.AdditionalProperties != nil && s.AdditionalProperties.Not == nil {
			out["key"] = g.value(s.AdditionalProperties, depth+1)
		}
		return out
	case "array":
		n := 1
		if s.MinItems != nil && *s.MinItems > n {
			n = *s.MinItems
		}
		var out []any
		for i := 0; i < n; i++ {
			v := g.value(s.Items, depth+1)
			if v == nil {
				break
			}
			out = append(out, v)
		}
		if out == nil {
			out = []any{}
		}
		return out
	case "integer", "number":
		v := 1.0
		if typ == "number" {
			v = 1.5
		}
		if s.Minimum != nil {
			v = *s.Minimum
		}
		if s.ExclusiveMinimum != nil {
			v = *s.ExclusiveMinimum + 1
		}
		if s.Maximum != nil && v > *s.Maximum {
			v = *s.Maximum
		}
		if s.MultipleOf != nil && *s.MultipleOf > 0 {
			v = *s.MultipleOf
		}
		return v
	case "boolean":
		return true
	case "null":
		return nil
	}
	return g.str(s)
}

// str makes a string for a schema: a value of its format, one that matches
// its pattern when a simple candidate does, within its lengths.
func (g *generator) str(s *jsonschema.Schema) string {
	v := map[string]string{
		"date-time": "2024-01-02T03:04:05Z", "date": "2024-01-02", "time": "03:04:05Z", "email": "a@example.com",
		"uri": "https://example.com/x", "url": "https://example.com/x", "uuid": "123e4567-e89b-12d3-a456-426614174000",
		"byte": "ZGF0YQ==", "ipv4": "192.0.2.1", "ipv6": "2001:db8::1", "hostname": "example.com", "binary": "data",
	}[s.Format]
	if v == "" {
		v = "abc"
	}
	if s.Pattern != "" {
		if re, err := regexp.Compile(s.Pattern); err == nil && !re.MatchString(v) {
			if m, ok := matching(s.Pattern); ok && re.MatchString(m) {
				v = m
			}
		}
	}
	if s.MinLength != nil && len(v) < *s.MinLength {
		v += strings.Repeat("a", *s.MinLength-len(v))
	}
	if s.MaxLength != nil && len(v) > *s.MaxLength {
		v = v[:*s.MaxLength]
	}
	return v
}

// matching makes a string a regular expression matches: the first
// character of each class, each repetition its minimum (at least once),
// the first alternative.
func matching(pattern string) (string, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	var walk func(re *syntax.Regexp)
	walk = func(re *syntax.Regexp) {
		switch re.Op {
		case syntax.OpLiteral:
			b.WriteString(string(re.Rune))
		case syntax.OpCharClass:
			if len(re.Rune) > 0 {
				b.WriteRune(re.Rune[0])
			}
		case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
			b.WriteByte('a')
		case syntax.OpCapture, syntax.OpConcat:
			for _, sub := range re.Sub {
				walk(sub)
			}
		case syntax.OpAlternate:
			walk(re.Sub[0])
		case syntax.OpStar, syntax.OpQuest:
		case syntax.OpPlus:
			walk(re.Sub[0])
		case syntax.OpRepeat:
			for i := 0; i < max(re.Min, 1); i++ {
				walk(re.Sub[0])
			}
		}
	}
	walk(re)
	return b.String(), true
}
