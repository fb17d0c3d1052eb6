package interactionswire

import "github.com/toolnexus/toolnexus-go/internal/wire"

// AppendJSON appends the JSON array of steps to b: what Marshal writes for
// them, without reflection. The client writes every request's input and
// every fingerprint with it.
func AppendJSON(b []byte, steps []Step) []byte {
	b = append(b, '[')
	for i := range steps {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendStep(b, &steps[i])
	}
	return append(b, ']')
}

// appendStep appends one step, its members in the order of Step's fields.
func appendStep(b []byte, s *Step) []byte {
	if len(s.Raw) > 0 {
		return append(b, s.Raw...)
	}
	b = append(b, `{"type":`...)
	b = wire.StringNoHTML(b, s.Type)
	if len(s.Content) > 0 {
		b = append(b, `,"content":`...)
		b = appendContents(b, s.Content)
	}
	if s.Signature != nil {
		b = append(b, `,"signature":`...)
		b = wire.StringNoHTML(b, *s.Signature)
	}
	if len(s.Summary) > 0 {
		b = append(b, `,"summary":`...)
		b = appendContents(b, s.Summary)
	}
	b = appendMember(b, "id", s.ID)
	b = appendMember(b, "name", s.Name)
	if len(s.Arguments) > 0 {
		b = append(b, `,"arguments":`...)
		b = append(b, s.Arguments...)
	}
	b = appendMember(b, "call_id", s.CallID)
	if s.IsError {
		b = append(b, `,"is_error":true`...)
	}
	if len(s.Result) > 0 {
		b = append(b, `,"result":`...)
		b = append(b, s.Result...)
	}
	if len(s.Error) > 0 {
		b = append(b, `,"error":`...)
		b = append(b, s.Error...)
	}
	return append(b, '}')
}

func appendContents(b []byte, cs []Content) []byte {
	b = append(b, '[')
	for i := range cs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendContentJSON(b, &cs[i])
	}
	return append(b, ']')
}

// appendContentJSON appends one content item as Content.MarshalJSON writes it.
func appendContentJSON(b []byte, c *Content) []byte {
	b = append(b, `{"type":`...)
	b = wire.StringNoHTML(b, c.Type)
	if c.Type == "text" {
		b = append(b, `,"text":`...)
		b = wire.StringNoHTML(b, c.Text)
		if len(c.Annotations) > 0 {
			b = append(b, `,"annotations":`...)
			b = append(b, c.Annotations...)
		}
	}
	b = appendMember(b, "data", c.Data)
	b = appendMember(b, "uri", c.URI)
	b = appendMember(b, "mime_type", c.MimeType)
	return append(b, '}')
}

// appendMember appends ,"name":"value" when value is not empty.
func appendMember(b []byte, name, value string) []byte {
	if value == "" {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return wire.StringNoHTML(b, value)
}
