package fake

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// jsonKind is the kind of a parsed JSON value.
type jsonKind int

const (
	jsonNull jsonKind = iota
	jsonBool
	jsonNumber
	jsonString
	jsonArray
	jsonObject
)

// jsonValue is a parsed JSON value that, unlike map[string]any, keeps object
// keys in order: the API's error paths index map entries by position
// ("properties[2].value").
type jsonValue struct {
	kind jsonKind
	str  string       // a string, or the literal text of a number
	b    bool         // a bool
	keys []string     // an object's keys, in order
	vals []*jsonValue // an object's values (parallel to keys) or an array's elements
}

// get returns the value of an object's key, accepting the key in
// lowerCamelCase or in snake_case as the API does, or nil.
func (v *jsonValue) get(key string) *jsonValue {
	if v == nil || v.kind != jsonObject {
		return nil
	}
	snake := snakeCase(key)
	for i, k := range v.keys {
		if k == key || k == snake {
			return v.vals[i]
		}
	}
	return nil
}

// set appends key with value e to an object. The key must not be there.
func (v *jsonValue) set(key string, e *jsonValue) {
	v.keys = append(v.keys, key)
	v.vals = append(v.vals, e)
}

// elems returns an array's elements, or nil.
func (v *jsonValue) elems() []*jsonValue {
	if v == nil || v.kind != jsonArray {
		return nil
	}
	return v.vals
}

// jsonSyntaxError is the error of parseJSON: where the syntax broke, or
// that the input ended early.
type jsonSyntaxError struct {
	offset int64
	eof    bool
}

func (e *jsonSyntaxError) Error() string {
	if e.eof {
		return "unexpected end of JSON input"
	}
	return fmt.Sprintf("unexpected token at offset %d", e.offset)
}

// parseJSON parses exactly one JSON value. Its errors are *jsonSyntaxError.
func parseJSON(data []byte) (*jsonValue, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parseValue(dec)
	if err != nil {
		return nil, syntaxError(dec, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &jsonSyntaxError{offset: dec.InputOffset()}
	}
	return v, nil
}

func syntaxError(dec *json.Decoder, err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return &jsonSyntaxError{offset: se.Offset}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &jsonSyntaxError{offset: dec.InputOffset(), eof: true}
	}
	return &jsonSyntaxError{offset: dec.InputOffset()}
}

func parseValue(dec *json.Decoder) (*jsonValue, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		return &jsonValue{kind: jsonNull}, nil
	case bool:
		return &jsonValue{kind: jsonBool, b: t}, nil
	case json.Number:
		return &jsonValue{kind: jsonNumber, str: string(t)}, nil
	case string:
		return &jsonValue{kind: jsonString, str: t}, nil
	case json.Delim:
		v := &jsonValue{kind: jsonArray}
		if t == '{' {
			v.kind = jsonObject
		}
		for dec.More() {
			if v.kind == jsonObject {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v.keys = append(v.keys, k.(string))
			}
			e, err := parseValue(dec)
			if err != nil {
				return nil, err
			}
			v.vals = append(v.vals, e)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		return v, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

// encode appends the JSON text of v to buf.
func (v *jsonValue) encode(buf *bytes.Buffer) {
	switch v.kind {
	case jsonNull:
		buf.WriteString("null")
	case jsonBool:
		buf.WriteString(strconv.FormatBool(v.b))
	case jsonNumber:
		buf.WriteString(v.str)
	case jsonString:
		b, _ := json.Marshal(v.str) // a Go string always marshals
		buf.Write(b)
	case jsonArray, jsonObject:
		open, closing := byte('['), byte(']')
		if v.kind == jsonObject {
			open, closing = '{', '}'
		}
		buf.WriteByte(open)
		for i, e := range v.vals {
			if i > 0 {
				buf.WriteByte(',')
			}
			if v.kind == jsonObject {
				b, _ := json.Marshal(v.keys[i])
				buf.Write(b)
				buf.WriteByte(':')
			}
			e.encode(buf)
		}
		buf.WriteByte(closing)
	}
}

// String returns v as compact JSON, cut to 40 bytes: the form error
// messages quote values in.
func (v *jsonValue) String() string {
	var buf bytes.Buffer
	v.encode(&buf)
	s := buf.String()
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return s
}
