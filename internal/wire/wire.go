// Package wire appends JSON to byte slices, for the protocol packages'
// events and the Interactions API's requests: strings escaped as
// encoding/json escapes them (with HTML escaping or without, invalid UTF-8
// replaced), without reflection or allocation.
package wire

import (
	"strconv"
	"unicode/utf8"
)

const hex = "0123456789abcdef"

// plain and plainHTML mark the ASCII bytes a JSON string holds as they
// are (plainHTML: but for <, > and &, which encoding/json escapes by
// default); every other byte needs a look: an escape, or a UTF-8 check.
var plain, plainHTML = func() (t, h [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
		h[c] = t[c] && c != '<' && c != '>' && c != '&'
	}
	return t, h
}()

// String appends s as a JSON string, quotes included, escaped as
// encoding/json.Marshal escapes it: <, > and & as well.
func String(b []byte, s string) []byte {
	return appendString(b, s, &plainHTML)
}

// StringNoHTML appends s as a JSON string, escaped as an encoding/json
// Encoder with SetEscapeHTML(false) escapes it: quotes, backslashes and
// control characters, U+2028 and U+2029, invalid UTF-8 as U+FFFD.
func StringNoHTML(b []byte, s string) []byte {
	return appendString(b, s, &plain)
}

func appendString(b []byte, s string, plain *[256]bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if plain[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Field appends ,"name": (or "name": right after an opening brace).
func Field(b []byte, name string) []byte {
	if n := len(b); n > 0 && b[n-1] != '{' && b[n-1] != '[' {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, name...)
	return append(b, '"', ':')
}

// StringField appends ,"name":"value".
func StringField(b []byte, name, value string) []byte {
	return String(Field(b, name), value)
}

// IntField appends ,"name":value.
func IntField(b []byte, name string, v int64) []byte {
	return strconv.AppendInt(Field(b, name), v, 10)
}

// BoolField appends ,"name":true or false.
func BoolField(b []byte, name string, v bool) []byte {
	return strconv.AppendBool(Field(b, name), v)
}

// RawField appends ,"name":raw, raw being JSON already.
func RawField(b []byte, name string, raw []byte) []byte {
	return append(Field(b, name), raw...)
}

// FloatField appends ,"name":v, v a finite number.
func FloatField(b []byte, name string, v float64) []byte {
	return strconv.AppendFloat(Field(b, name), v, 'g', -1, 64)
}

// Progress appends a call's progress as the protocols send it:
// {"toolCallId":…,"done":…,"total":…,"message":…}, total and message
// left out when zero.
func Progress(b []byte, callID string, done, total float64, message string) []byte {
	b = StringField(append(b, '{'), "toolCallId", callID)
	b = FloatField(b, "done", done)
	if total > 0 {
		b = FloatField(b, "total", total)
	}
	if message != "" {
		b = StringField(b, "message", message)
	}
	return append(b, '}')
}
