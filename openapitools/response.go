package openapitools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"
)

// DefaultMaxBinaryBytes bounds what Options.Binary receives of a body.
const DefaultMaxBinaryBytes = 64 << 20

// A Response is what a tool returns to the model for an answer, whatever
// its status: a 404 or a 500 is an answer the model reads, not a failed
// call. (A call that gets no answer at all, refused or timed out, fails
// with an error the model reads instead.)
type Response struct {
	// Status is the HTTP status code.
	Status int `json:"status"`
	// ContentType is the answer's media type, as the server sent it.
	ContentType string `json:"content_type,omitempty"`
	// Body is the answer's body: parsed when it is JSON (numbers kept
	// exactly, as json.Number), a string when it is text, and a summary
	// (or what Options.Binary made of it) otherwise; nil when empty.
	Body any `json:"body,omitempty"`
	// Truncated says the body was longer than Options.MaxResponseBytes,
	// and Body holds its first MaxResponseBytes bytes, as text.
	Truncated bool `json:"truncated,omitempty"`
	// Location and RetryAfter are the headers of those names, which the
	// model may need: where a created resource is, when to try again.
	Location   string `json:"location,omitempty"`
	RetryAfter string `json:"retry_after,omitempty"`
	// Note says what else the model should know: that the body was still
	// arriving when the call's time ran out, say.
	Note string `json:"note,omitempty"`
}

// readResponse reads an answer for the model.
func (op *Operation) readResponse(ctx context.Context, resp *http.Response) *Response {
	a := op.api
	out := &Response{
		Status:      resp.StatusCode,
		ContentType: resp.Header.Get("Content-Type"),
		Location:    resp.Header.Get("Location"),
		RetryAfter:  resp.Header.Get("Retry-After"),
	}
	if op.Method == http.MethodHead || resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusNotModified {
		return out
	}
	limit := a.opts.MaxResponseBytes
	if limit <= 0 {
		limit = DefaultMaxResponseBytes
	}
	mt, _, _ := mime.ParseMediaType(out.ContentType)
	if out.ContentType != "" && !isTextual(mt) {
		out.Body, out.Note = op.binary(ctx, resp, mt)
		return out
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	if err != nil {
		out.Note = incomplete(ctx, err)
	}
	if out.ContentType == "" && len(data) > 0 && !utf8.Valid(data) {
		out.Body = fmt.Sprintf("binary content, at least %d bytes, not shown", len(data))
		return out
	}
	if len(data) > limit {
		data, out.Truncated = cutUTF8(data[:limit]), true
	}
	if len(data) == 0 {
		return out
	}
	if !out.Truncated && out.Note == "" && (isJSONType(mt) || mt == "") {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err == nil && !dec.More() {
			if _, err := dec.Token(); errors.Is(err, io.EOF) {
				out.Body = v
				return out
			}
		}
	}
	out.Body = string(data)
	return out
}

// incomplete says why a body was not read to its end.
func incomplete(ctx context.Context, err error) string {
	if ctx.Err() != nil {
		err = context.Cause(ctx)
	}
	return fmt.Sprintf("the body was not read to its end: %v", err)
}

// isTextual reports a media type whose body the model reads as text: JSON,
// text/*, XML, YAML, form data, JavaScript...
func isTextual(mt string) bool {
	switch {
	case isJSONType(mt), strings.HasPrefix(mt, "text/"), strings.HasSuffix(mt, "+xml"), strings.HasSuffix(mt, "+yaml"):
		return true
	}
	switch mt {
	case "application/xml", "application/yaml", "application/x-yaml", "application/x-www-form-urlencoded",
		"application/javascript", "application/ecmascript", "application/graphql", "application/x-ndjson",
		"application/problem+json", "application/sql", "application/csv":
		return true
	}
	return false
}

// binary gives the model a summary of a body that is not text, or what
// Options.Binary makes of it.
func (op *Operation) binary(ctx context.Context, resp *http.Response, mt string) (any, string) {
	limit := op.api.opts.MaxBinaryBytes
	if limit <= 0 {
		limit = DefaultMaxBinaryBytes
	}
	r := io.LimitReader(resp.Body, limit)
	if f := op.api.opts.Binary; f != nil {
		v, err := f(ctx, &BinaryBody{Operation: op, Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Body: r})
		if err != nil {
			return nil, fmt.Sprintf("the %s body could not be kept: %v", mt, err)
		}
		return v, ""
	}
	n, err := io.Copy(io.Discard, r)
	note := ""
	if err != nil {
		note = incomplete(ctx, err)
	}
	size := fmt.Sprintf("%d bytes", n)
	if n == limit {
		size = fmt.Sprintf("more than %d bytes", n)
	}
	return fmt.Sprintf("binary content (%s, %s), not shown", mt, size), note
}

// cutUTF8 drops a character cut in two at the end of data.
func cutUTF8(data []byte) []byte {
	i := len(data) - 1
	for i > 0 && len(data)-i < utf8.UTFMax && !utf8.RuneStart(data[i]) {
		i--
	}
	if i >= 0 && !utf8.FullRune(data[i:]) {
		return data[:i]
	}
	return data
}
