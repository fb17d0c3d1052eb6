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
// moves to a final event whose only part is an empty text part. Responses
// with no parts or several candidates are sent as one event.
func (s *Server) split(resp *genai.GenerateContentResponse, textChunk int, trailing bool) []*genai.GenerateContentResponse {
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

// answerStream sends reply as server-sent events: `data: <json>` lines
// each followed by a blank line (\r\n\r\n), flushed one by one, with no
// event:, id: or comment lines, as the API does.
func (s *Server) answerStream(w http.ResponseWriter, r *http.Request, in *input, reply *Reply) {
	evs, err := s.events(reply, in, true)
	if err != nil {
		writeError(w, &APIError{Code: http.StatusInternalServerError, Message: err.Error()})
		return
	}
	encoded := make([][]byte, len(evs))
	for i, e := range evs {
		if encoded[i], err = encodeResponse(e); err != nil {
			writeError(w, &APIError{Code: http.StatusInternalServerError, Message: err.Error()})
			return
		}
	}
	send := len(evs)
	cut := reply.Fault == FaultCutStream || reply.Fault == FaultCutMidEvent ||
		reply.Fault == FaultMalformedBody || reply.StreamErr != nil
	if cut {
		send = min(max(reply.CutAfter, 0), len(evs))
	}

	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	flush := func() {
		if flusher != nil {
			flusher.Flush()
		}
	}
	flush()
	for i := 0; i < send; i++ {
		if i > 0 && !s.wait(r.Context(), reply.EventDelay) {
			panic(http.ErrAbortHandler)
		}
		writeEvent(w, encoded[i])
		flush()
	}
	if !cut {
		return
	}
	switch {
	case reply.Fault == FaultMalformedBody:
		w.Write([]byte("data: {not json\r\n\r\n"))
	case reply.Fault == FaultCutMidEvent && send < len(evs):
		ev := append([]byte("data: "), encoded[send]...)
		w.Write(ev[:len(ev)/2])
		flush()
		panic(http.ErrAbortHandler)
	case reply.Fault == FaultCutStream || reply.Fault == FaultCutMidEvent:
		panic(http.ErrAbortHandler)
	case reply.StreamErr != nil:
		writeEvent(w, mustJSON(reply.StreamErr.wire()))
	}
	flush()
}

func writeEvent(w http.ResponseWriter, data []byte) {
	w.Write([]byte("data: "))
	w.Write(data)
	w.Write([]byte("\r\n\r\n"))
}
