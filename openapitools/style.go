package openapitools

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Serialization of parameter values, as OpenAPI's style and explode say
// (OpenAPI 3.1.1, "Style Values" and "Style Examples"). Values are the
// model's arguments: strings, float64 numbers, bools, nil, []any and
// map[string]any; an object's properties go in name order.

// reserved are the characters allowReserved lets through unescaped
// (RFC 3986 gen-delims and sub-delims).
const reserved = ":/?#[]@!$&'()*+,;="

// escapeValue percent-encodes s, leaving only RFC 3986's unreserved
// characters as they are, and the reserved ones too when allowReserved.
func escapeValue(s string, allowReserved bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' ||
			allowReserved && strings.IndexByte(reserved, c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// scalar prints a primitive value; an array or object inside an array or
// object is printed as JSON.
func scalar(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1e21 {
			return strconv.FormatFloat(v, 'f', -1, 64)
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	case json.Number:
		return v.String()
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// kv is one property of an object value, in name order.
type kv struct{ k, v string }

func objectPairs(m map[string]any) []kv {
	out := make([]kv, 0, len(m))
	for _, k := range sortedKeys(m) {
		out = append(out, kv{k, scalar(m[k])})
	}
	return out
}

func items(a []any) []string {
	out := make([]string, len(a))
	for i, v := range a {
		out[i] = scalar(v)
	}
	return out
}

func mapEach[T any](list []T, f func(T) string) []string {
	out := make([]string, len(list))
	for i, v := range list {
		out[i] = f(v)
	}
	return out
}

// pathValue serializes a path parameter: style simple (the default),
// label or matrix.
func pathValue(style string, explode bool, name string, v any) string {
	esc := func(s string) string { return escapeValue(s, false) }
	n := esc(name)
	switch style {
	case "label":
		switch v := v.(type) {
		case []any:
			sep := ","
			if explode {
				sep = "."
			}
			return "." + strings.Join(mapEach(items(v), esc), sep)
		case map[string]any:
			if explode {
				return "." + strings.Join(mapEach(objectPairs(v), func(p kv) string { return esc(p.k) + "=" + esc(p.v) }), ".")
			}
			return "." + strings.Join(mapEach(objectPairs(v), func(p kv) string { return esc(p.k) + "," + esc(p.v) }), ",")
		}
		return "." + esc(scalar(v))
	case "matrix":
		switch v := v.(type) {
		case []any:
			if len(v) == 0 {
				return ";" + n
			}
			if explode {
				return strings.Join(mapEach(items(v), func(s string) string { return ";" + n + "=" + esc(s) }), "")
			}
			return ";" + n + "=" + strings.Join(mapEach(items(v), esc), ",")
		case map[string]any:
			if explode {
				return strings.Join(mapEach(objectPairs(v), func(p kv) string { return ";" + esc(p.k) + "=" + esc(p.v) }), "")
			}
			return ";" + n + "=" + strings.Join(mapEach(objectPairs(v), func(p kv) string { return esc(p.k) + "," + esc(p.v) }), ",")
		}
		if s := scalar(v); s != "" {
			return ";" + n + "=" + esc(s)
		}
		return ";" + n
	}
	return simpleValue(explode, v, esc)
}

// simpleValue serializes in style simple: path parameters and headers.
func simpleValue(explode bool, v any, esc func(string) string) string {
	switch v := v.(type) {
	case []any:
		return strings.Join(mapEach(items(v), esc), ",")
	case map[string]any:
		if explode {
			return strings.Join(mapEach(objectPairs(v), func(p kv) string { return esc(p.k) + "=" + esc(p.v) }), ",")
		}
		return strings.Join(mapEach(objectPairs(v), func(p kv) string { return esc(p.k) + "," + esc(p.v) }), ",")
	}
	return esc(scalar(v))
}

// queryPairs serializes a query parameter (or a form body's property) as
// name=value pairs, already escaped: style form (the default),
// spaceDelimited, pipeDelimited, deepObject, or Swagger 2.0's tsv.
func queryPairs(style string, explode, allowReserved bool, name string, v any) []string {
	esc := func(s string) string { return escapeValue(s, allowReserved) }
	n := escapeValue(name, false)
	pair := func(k, val string) string { return k + "=" + esc(val) }
	delim := map[string]string{"spaceDelimited": "%20", "pipeDelimited": "%7C", styleTab: "%09"}[style]
	switch v := v.(type) {
	case nil:
		return nil
	case []any:
		if explode || style == "deepObject" {
			return mapEach(items(v), func(s string) string { return pair(n, s) })
		}
		if len(v) == 0 {
			return []string{n + "="}
		}
		if delim == "" {
			delim = ","
		}
		return []string{n + "=" + strings.Join(mapEach(items(v), esc), delim)}
	case map[string]any:
		if style == "deepObject" {
			var out []string
			deepObject(n, v, esc, &out)
			return out
		}
		if explode {
			return mapEach(objectPairs(v), func(p kv) string { return pair(escapeValue(p.k, false), p.v) })
		}
		if delim == "" {
			delim = ","
		}
		return []string{n + "=" + strings.Join(mapEach(objectPairs(v), func(p kv) string { return esc(p.k) + delim + esc(p.v) }), delim)}
	}
	return []string{pair(n, scalar(v))}
}

// deepObject writes name[key]=value for each property, going into nested
// objects as name[key][key2] and repeating name[key] for each item of an
// array.
func deepObject(prefix string, m map[string]any, esc func(string) string, out *[]string) {
	for _, k := range sortedKeys(m) {
		key := prefix + "[" + escapeValue(k, false) + "]"
		switch v := m[k].(type) {
		case map[string]any:
			deepObject(key, v, esc, out)
		case []any:
			for _, s := range items(v) {
				*out = append(*out, key+"="+esc(s))
			}
		case nil:
		default:
			*out = append(*out, key+"="+esc(scalar(v)))
		}
	}
}

// headerValue serializes a header parameter, style simple. A header value
// cannot hold a line break or another control character.
func headerValue(explode bool, v any) (string, error) {
	s := simpleValue(explode, v, func(s string) string { return s })
	for _, r := range s {
		if r < 0x20 && r != '\t' || r == 0x7f {
			return "", fmt.Errorf("a header value cannot hold the control character %q", r)
		}
	}
	return s, nil
}

// cookiePairs serializes a cookie parameter, style form: name=value, each
// value escaped so that no separator of the Cookie header is in it.
func cookiePairs(explode bool, name string, v any) []string {
	esc := func(s string) string { return escapeValue(s, false) }
	n := esc(name)
	switch v := v.(type) {
	case nil:
		return nil
	case []any:
		if explode {
			return mapEach(items(v), func(s string) string { return n + "=" + esc(s) })
		}
		return []string{n + "=" + strings.Join(mapEach(items(v), esc), ",")}
	case map[string]any:
		if explode {
			return mapEach(objectPairs(v), func(p kv) string { return esc(p.k) + "=" + esc(p.v) })
		}
		return []string{n + "=" + strings.Join(mapEach(objectPairs(v), func(p kv) string { return esc(p.k) + "," + esc(p.v) }), ",")}
	}
	return []string{n + "=" + esc(scalar(v))}
}
