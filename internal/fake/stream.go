package fake

import (
	"net/http"
	"unicode/utf8"

	"google.golang.org/genai"
)

// split turns a response into stream events: one event per part of the
// first candidate, text parts cut into pieces of at most textChunk bytes
// (0: whole), function calls whole. promptFeedback rides on the first
// event; the candidate's other fields (finishReason, safety ratings…) and
// the usage on the last. With trailing, the signature of the last text part
// moves to a final event whose only part is an empty text part. With
// emptyLast, a turn that ends with a function call gets a final event whose
// only part is {"text": ""}. Responses with no parts or several candidates
// are sent as one event.
func (s *Server) split(resp *genai.GenerateContentResponse, textChunk int, trailing, emptyLast bool) []*genai.GenerateContentResponse {
	if len(resp.Candidates) != 1 || resp.Candidates[0].Content == nil || len(resp.Candidates[0].Content.Parts) == 0 {
		return []*genai.GenerateContentResponse{resp}
	}
	cand := resp.Candidates[0]
	var parts []*genai.Part
	lastText := -1
	for _, p := range cand.Content.Parts {
		if !isPlainText(p) || p.Text == "" {
			parts = append(parts, p)
			continue
		}
		pieces := splitText(p.Text, textChunk)
		for i, piece := range pieces {
			q := *p
			q.Text = piece
			if i < len(pieces)-1 {
				q.ThoughtSignature = nil
			}
			parts = append(parts, &q)
		}
		lastText = len(parts) - 1
	}
	if trailing && lastText >= 0 {
		sig := parts[lastText].ThoughtSignature
		if len(sig) == 0 {
			sig = s.signature()
		}
		parts[lastText].ThoughtSignature = nil
		parts = append(parts, &genai.Part{ThoughtSignature: sig})
	}
	if emptyLast && parts[len(parts)-1].FunctionCall != nil {
		parts = append(parts, &genai.Part{Text: ""})
	}

	evs := make([]*genai.GenerateContentResponse, len(parts))
	for i, p := range parts {
		c := &genai.Candidate{Index: cand.Index}
		if i == len(parts)-1 {
			*c = *cand
		}
		c.Content = &genai.Content{Role: cand.Content.Role, Parts: []*genai.Part{p}}
		evs[i] = &genai.GenerateContentResponse{Candidates: []*genai.Candidate{c}, ModelVersion: resp.ModelVersion, ResponseID: resp.ResponseID}
	}
	evs[0].PromptFeedback = resp.PromptFeedback
	evs[len(evs)-1].UsageMetadata = resp.UsageMetadata
	return evs
}

// splitText cuts s into pieces of at most n bytes without splitting a
// rune; a rune longer than n is a piece of its own. n <= 0 returns s whole.
func splitText(s string, n int) []string {
	if n <= 0 || len(s) <= n {
		return []string{s}
	}
	var out []string
	for len(s) > 0 {
		end := 0
		for end < len(s) {
			_, size := utf8.DecodeRuneInString(s[end:])
			if end > 0 && end+size > n {
				break
			}
			end += size
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}

// answerStream sends reply as a stream, framed as the request asked (see
// [streamFormat]), each element flushed as it is written.
func (s *Server) answerStream(w http.ResponseWriter, r *http.Request, in *input, reply *Reply) {
	evs, err := s.events(reply, in, true)
	if err != nil {
		writeError(w, in, &APIError{Code: http.StatusInternalServerError, Message: err.Error()})
		return
	}
	encoded := make([][]byte, len(evs))
	for i, e := range evs {
		if encoded[i], err = s.encodeResponse(e, in); err != nil {
			writeError(w, in, &APIError{Code: http.StatusInternalServerError, Message: err.Error()})
			return
		}
	}
	send := len(evs)
	cut := reply.Fault == FaultCutStream || reply.Fault == FaultCutMidEvent ||
		reply.Fault == FaultMalformedBody || reply.StreamErr != nil
	if cut {
		send = min(max(reply.CutAfter, 0), len(evs))
	}

	setServiceTier(w, in)
	sw := newStreamWriter(w, in.format)
	for i := 0; i < send; i++ {
		if i > 0 && !s.wait(r.Context(), reply.EventDelay) {
			panic(http.ErrAbortHandler)
		}
		sw.element(encoded[i])
	}
	switch {
	case !cut:
	case reply.Fault == FaultMalformedBody:
		sw.element([]byte("{not json"))
	case reply.Fault == FaultCutMidEvent && send < len(evs):
		sw.partial(encoded[send])
		panic(http.ErrAbortHandler)
	case reply.Fault == FaultCutStream || reply.Fault == FaultCutMidEvent:
		panic(http.ErrAbortHandler)
	case reply.StreamErr != nil:
		sw.element(mustJSON(reply.StreamErr.wire()))
	}
	sw.end()
}

// A streamWriter writes the elements of a stream in one of the API's two
// framings, flushing each:
//
//   - SSE: `data: <json>` events, each followed by a blank line
//     ("\r\n\r\n"), with Content-Type text/event-stream and no event:,
//     id: or comment lines (gemini-wire.md §4.1; the captures in
//     charmbracelet/fantasy's providertests);
//   - JSON array: "[", the elements separated by ",\r\n", "]", with
//     Content-Type application/json, read element by element (gax-go's
//     ProtoJSONStream; nyo16/nous#26, symfony/ai#2170).
type streamWriter struct {
	w       http.ResponseWriter
	format  streamFormat
	flusher http.Flusher
	n       int // elements written
}

func newStreamWriter(w http.ResponseWriter, format streamFormat) *streamWriter {
	sw := &streamWriter{w: w, format: format}
	sw.flusher, _ = w.(http.Flusher)
	if format == streamSSE {
		w.Header().Set("Content-Type", "text/event-stream")
	} else {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	}
	w.WriteHeader(http.StatusOK)
	if format == streamJSONArray {
		w.Write([]byte("["))
	}
	sw.flush()
	return sw
}

func (sw *streamWriter) flush() {
	if sw.flusher != nil {
		sw.flusher.Flush()
	}
}

// frame returns data framed as the next element.
func (sw *streamWriter) frame(data []byte) []byte {
	if sw.format == streamSSE {
		return append(append([]byte("data: "), data...), "\r\n\r\n"...)
	}
	if sw.n > 0 {
		return append([]byte(",\r\n"), data...)
	}
	return data
}

func (sw *streamWriter) element(data []byte) {
	sw.w.Write(sw.frame(data))
	sw.n++
	sw.flush()
}

// partial writes the first half of the next element, and flushes it.
func (sw *streamWriter) partial(data []byte) {
	f := sw.frame(data)
	sw.w.Write(f[:len(f)/2])
	sw.flush()
}

// end closes a JSON array; SSE needs nothing.
func (sw *streamWriter) end() {
	if sw.format == streamJSONArray {
		sw.w.Write([]byte("]"))
	}
	sw.flush()
}
