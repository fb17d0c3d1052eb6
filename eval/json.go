package eval

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"
)

// This file holds the JSON machinery of the loader and the writers: an
// ordered decoding (objects keep their keys in file order, numbers their
// digits), the key conversions between ADK's snake_case and the camelCase
// that pydantic's aliases and genai's Go types use, and the conversion of
// genai values to and from ADK's form.

// object is a JSON object that keeps its keys in order.
type object struct {
	keys []string
	vals []any
}

// MarshalJSON writes the object with its keys in order.
func (o *object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := marshalValue(o.vals[i])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// add appends a key and its value.
func (o *object) add(k string, v any) *object {
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, v)
	return o
}

// get returns the value of key k as written, and whether it is there.
func (o *object) get(k string) (any, bool) {
	for i, key := range o.keys {
		if key == k {
			return o.vals[i], true
		}
	}
	return nil, false
}

// marshalValue encodes a decoded value: json.Marshal without HTML
// escaping, so that text reads as it was written.
func marshalValue(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// indentJSON encodes v with two-space indentation and a final newline, as
// ADK writes its files.
func indentJSON(v any) ([]byte, error) {
	raw, err := marshalValue(v)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// marshalObject is MarshalJSON for the types written as an object.
func marshalObject(o *object, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	return marshalValue(o)
}

// writeObject writes an object to path, indented.
func writeObject(path string, o *object, err error) error {
	if err != nil {
		return err
	}
	b, err := indentJSON(o)
	if err != nil {
		return fmt.Errorf("eval: writing %s: %w", path, err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	return nil
}

// decodeOrdered decodes exactly one JSON value: objects as *object in key
// order, arrays as []any, numbers as json.Number. A key given twice in one
// object is an error, as it is for ADK's pydantic reader.
func decodeOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, syntaxError(data, dec, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, syntaxError(data, dec, errors.New("more than one JSON value"))
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok := tok.(type) {
	case json.Delim:
		switch tok {
		case '{':
			o := &object{}
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k := kt.(string)
				if seen[k] {
					return nil, fmt.Errorf("key %q appears twice in one object", k)
				}
				seen[k] = true
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				o.add(k, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return o, nil
		case '[':
			a := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return a, nil
		}
	}
	return tok, nil
}

// syntaxError places a decoding error at its line and column.
func syntaxError(data []byte, dec *json.Decoder, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("not valid JSON: unexpected end of input")
	}
	offset := dec.InputOffset()
	var se *json.SyntaxError
	if errors.As(err, &se) {
		offset = se.Offset
	}
	line, col := 1, 1
	for _, c := range data[:min(int(offset), len(data))] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Errorf("not valid JSON at line %d, column %d: %v", line, col, err)
}

// toSnake converts a camelCase key to snake_case ("evalSetId" ->
// "eval_set_id"); a key without capitals is returned as it is. It is
// the inverse of pydantic's to_camel for the keys ADK uses.
func toSnake(k string) string {
	if !strings.ContainsFunc(k, unicode.IsUpper) {
		return k
	}
	var b strings.Builder
	runes := []rune(k)
	for i, r := range runes {
		if unicode.IsUpper(r) {
			// "fileURI" -> "file_uri": a run of capitals is one word.
			if i > 0 && (!unicode.IsUpper(runes[i-1]) || i+1 < len(runes) && unicode.IsLower(runes[i+1])) {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// toCamel converts a snake_case key to lowerCamelCase ("eval_set_id" ->
// "evalSetId"), as pydantic's to_camel does.
func toCamel(k string) string {
	if !strings.Contains(k, "_") {
		return k
	}
	parts := strings.Split(k, "_")
	var b strings.Builder
	b.WriteString(parts[0])
	for _, p := range parts[1:] {
		if p == "" {
			continue
		}
		b.WriteString(strings.ToUpper(p[:1]) + p[1:])
	}
	return b.String()
}

// freeKeys are the keys of genai values whose contents are the user's
// data (function arguments and responses, part metadata, JSON Schemas
// given as they are, schema defaults and examples), whose keys are never
// converted.
var freeKeys = map[string]bool{
	"args": true, "response": true, "part_metadata": true, "partMetadata": true,
	"parameters_json_schema": true, "parametersJsonSchema": true, "response_json_schema": true, "responseJsonSchema": true,
	"default": true, "example": true,
}

// namedKeys are the keys of genai.Schema whose values map the user's names
// (property names) to schemas: the names are kept, the schemas converted.
var namedKeys = map[string]bool{"properties": true}

// convertKeys returns v with the keys of every object converted by conv,
// except inside the values of freeKeys. When toStd is set, base64 bytes
// fields are converted from URL-safe to standard encoding (what genai's Go
// types read), otherwise from standard to URL-safe (what pydantic writes).
func convertKeys(v any, conv func(string) string, toStd bool) any {
	switch v := v.(type) {
	case *object:
		out := &object{}
		for i, k := range v.keys {
			val := v.vals[i]
			switch {
			case freeKeys[k]:
			case isBytesKey(k, v):
				val = convertBase64(val, toStd)
			case namedKeys[k]:
				if named, ok := val.(*object); ok {
					props := &object{}
					for j, name := range named.keys {
						props.add(name, convertKeys(named.vals[j], conv, toStd))
					}
					val = props
				}
			default:
				val = convertKeys(val, conv, toStd)
			}
			out.add(conv(k), val)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = convertKeys(e, conv, toStd)
		}
		return out
	}
	return v
}

// isBytesKey reports whether key k of object o holds base64 bytes: a
// thought signature, or the data of a blob (an object with a mime type).
func isBytesKey(k string, o *object) bool {
	switch toSnake(k) {
	case "thought_signature":
		return true
	case "data":
		_, a := o.get("mime_type")
		_, b := o.get("mimeType")
		return a || b
	}
	return false
}

// convertBase64 re-encodes a base64 string between the URL-safe alphabet
// pydantic writes and the standard one encoding/json reads. A string that
// is not base64 is left for genai's decoder to refuse.
func convertBase64(v any, toStd bool) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	b, err := decodeBase64(s)
	if err != nil {
		return v
	}
	if toStd {
		return base64.StdEncoding.EncodeToString(b)
	}
	return base64.URLEncoding.EncodeToString(b)
}

// decodeBase64 decodes base64 in either alphabet, padded or not.
func decodeBase64(s string) ([]byte, error) {
	s = strings.TrimRight(s, "=")
	if strings.ContainsAny(s, "-_") {
		return base64.RawURLEncoding.DecodeString(s)
	}
	return base64.RawStdEncoding.DecodeString(s)
}

// dropNulls returns v without the object members whose value is null, at
// every level but inside the values of freeKeys: ADK's other writers dump
// every optional field of genai's types as null.
func dropNulls(v any) any {
	switch v := v.(type) {
	case *object:
		out := &object{}
		for i, k := range v.keys {
			val := v.vals[i]
			if val == nil {
				continue
			}
			if !freeKeys[k] {
				val = dropNulls(val)
			}
			out.add(k, val)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = dropNulls(e)
		}
		return out
	}
	return v
}
