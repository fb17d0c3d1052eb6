package a2aagent

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/toolnexus/toolnexus-go/internal/wire"
)

// The events a stream is made of, written as a2a-go's types encode them
// (the same fields, in the same order, "kind" first), without encoding/json's
// reflection: status updates and artifact updates, their messages,
// artifacts and parts, and the JSON values of their data and metadata.
// appendEvent reports false for anything else (a Task, a file part, a
// value of another type), which appendResponse encodes with encoding/json
// instead. TestEventJSON holds the two to the same JSON, kind by kind.

// appendEvent appends ev's JSON, or reports false with b unchanged in
// length.
func appendEvent(b []byte, ev any) ([]byte, bool) {
	n := len(b)
	var ok bool
	switch ev := ev.(type) {
	case *a2a.TaskArtifactUpdateEvent:
		b, ok = appendArtifactUpdate(b, ev)
	case *a2a.TaskStatusUpdateEvent:
		b, ok = appendStatusUpdate(b, ev)
	}
	if !ok {
		return b[:n], false
	}
	return b, true
}

func appendArtifactUpdate(b []byte, ev *a2a.TaskArtifactUpdateEvent) ([]byte, bool) {
	b = append(b, `{"kind":"artifact-update"`...)
	if ev.Append {
		b = append(b, `,"append":true`...)
	}
	b = wire.Field(b, "artifact")
	ok := true
	if a := ev.Artifact; a == nil {
		b = append(b, "null"...)
	} else {
		if len(a.Extensions) > 0 {
			return b, false
		}
		b = wire.StringField(append(b, '{'), "artifactId", string(a.ID))
		if a.Description != "" {
			b = wire.StringField(b, "description", a.Description)
		}
		if b, ok = appendMetadata(b, a.Metadata); !ok {
			return b, false
		}
		if a.Name != "" {
			b = wire.StringField(b, "name", a.Name)
		}
		if b, ok = appendParts(wire.Field(b, "parts"), a.Parts); !ok {
			return b, false
		}
		b = append(b, '}')
	}
	b = wire.StringField(b, "contextId", ev.ContextID)
	if ev.LastChunk {
		b = append(b, `,"lastChunk":true`...)
	}
	b = wire.StringField(b, "taskId", string(ev.TaskID))
	if b, ok = appendMetadata(b, ev.Metadata); !ok {
		return b, false
	}
	return append(b, '}'), true
}

func appendStatusUpdate(b []byte, ev *a2a.TaskStatusUpdateEvent) ([]byte, bool) {
	b = append(b, `{"kind":"status-update"`...)
	b = wire.StringField(b, "contextId", ev.ContextID)
	b = wire.BoolField(b, "final", ev.Final)
	b = append(wire.Field(b, "status"), '{')
	ok := true
	if m := ev.Status.Message; m != nil {
		if b, ok = appendMessage(wire.Field(b, "message"), m); !ok {
			return b, false
		}
	}
	b = wire.StringField(b, "state", string(ev.Status.State))
	if t := ev.Status.Timestamp; t != nil {
		if b, ok = appendTime(wire.Field(b, "timestamp"), *t); !ok {
			return b, false
		}
	}
	b = wire.StringField(append(b, '}'), "taskId", string(ev.TaskID))
	if b, ok = appendMetadata(b, ev.Metadata); !ok {
		return b, false
	}
	return append(b, '}'), true
}

func appendMessage(b []byte, m *a2a.Message) ([]byte, bool) {
	if len(m.Extensions) > 0 || len(m.ReferenceTasks) > 0 {
		return b, false
	}
	b = append(b, `{"kind":"message"`...)
	b = wire.StringField(b, "messageId", m.ID)
	if m.ContextID != "" {
		b = wire.StringField(b, "contextId", m.ContextID)
	}
	ok := true
	if b, ok = appendMetadata(b, m.Metadata); !ok {
		return b, false
	}
	if b, ok = appendParts(wire.Field(b, "parts"), m.Parts); !ok {
		return b, false
	}
	b = wire.StringField(b, "role", string(m.Role))
	if m.TaskID != "" {
		b = wire.StringField(b, "taskId", string(m.TaskID))
	}
	return append(b, '}'), true
}

// appendTime appends t as encoding/json does, RFC 3339 with nanoseconds.
func appendTime(b []byte, t time.Time) ([]byte, bool) {
	if y := t.Year(); y < 0 || y > 9999 {
		return b, false // encoding/json fails: so does the event
	}
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"'), true
}

// appendParts appends parts, nil as [] (parts are a required array: as
// a2a-go encodes them).
func appendParts(b []byte, parts a2a.ContentParts) ([]byte, bool) {
	b = append(b, '[')
	ok := true
	for i, p := range parts {
		if i > 0 {
			b = append(b, ',')
		}
		switch p := p.(type) {
		case a2a.TextPart:
			b = wire.StringField(append(b, `{"kind":"text"`...), "text", p.Text)
			b, ok = appendMetadata(b, p.Metadata)
		case a2a.DataPart:
			b = append(b, `{"kind":"data","data":`...)
			if b, ok = appendMap(b, p.Data); ok {
				b, ok = appendMetadata(b, p.Metadata)
			}
		default:
			ok = false
		}
		if !ok {
			return b, false
		}
		b = append(b, '}')
	}
	return append(b, ']'), true
}

// appendMetadata appends ,"metadata":m unless m is empty (omitempty).
func appendMetadata(b []byte, m map[string]any) ([]byte, bool) {
	if len(m) == 0 {
		return b, true
	}
	return appendMap(wire.Field(b, "metadata"), m)
}

// appendMap appends m as encoding/json does: keys sorted, nil as null.
func appendMap(b []byte, m map[string]any) ([]byte, bool) {
	if m == nil {
		return append(b, "null"...), true
	}
	var buf [8]string
	keys := buf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	ok := true
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(wire.String(b, k), ':')
		if b, ok = appendValue(b, m[k]); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

// appendValue appends v, one of the JSON values the translator makes.
func appendValue(b []byte, v any) ([]byte, bool) {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), true
	case string:
		return wire.String(b, v), true
	case bool:
		return strconv.AppendBool(b, v), true
	case int:
		return strconv.AppendInt(b, int64(v), 10), true
	case int32:
		return strconv.AppendInt(b, int64(v), 10), true
	case int64:
		return strconv.AppendInt(b, v, 10), true
	case float64:
		return appendFloat(b, v)
	case json.RawMessage:
		if v == nil {
			return append(b, "null"...), true
		}
		// As encoding/json: compacted, and refused when it is not JSON.
		buf := bytes.NewBuffer(b)
		if json.Compact(buf, v) != nil {
			return b, false
		}
		return buf.Bytes(), true
	case map[string]any:
		return appendMap(b, v)
	case []any:
		if v == nil {
			return append(b, "null"...), true
		}
		b = append(b, '[')
		ok := true
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = appendValue(b, e); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	}
	return b, false
}

// appendFloat appends f as encoding/json does (ES6's number to string).
func appendFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 to e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}
