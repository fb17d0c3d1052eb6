package fake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"

	"google.golang.org/genai"
)

// Long answers (genai v1.77.0 continuation.go; ../shared/notes/gemini-2026.md
// §1). The API cuts an answer longer than one request holds: the hop's
// candidate finishes with CONTINUATION and carries a continuation token,
// and the same request sent again with the token, top level, continues
// it. A stream's checkpoint chunks carry a token too, and no finish
// reason: a stream cut after one resumes from it. Each hop re-reads the
// prompt and the answer so far, so that the prompt count grows per hop.
//
// The server remembers every token it sends: the request it answered
// (canonical, without a token of its own), how much answer the hops up to
// it made, and, for a checkpoint, the stream's events after it. A request
// that carries a token is checked against that (the rule
// "continuation-token"), and one resuming from a checkpoint gets the rest
// of that stream, not a queued reply.

// issuedToken is what the server knows of a continuation token it sent.
type issuedToken struct {
	key    string                           // the request it continues: continuationKey's
	output int                              // bytes of answer the hops up to the token made
	rest   []*genai.GenerateContentResponse // a checkpoint's: the events after it, before auto-fill
}

// continuationKey returns what identifies the request in answers: its
// decoded body without its continuation token, as canonical JSON. The
// continuation of a request must be the same request plus the token. An
// empty generationConfig is none: genai sends "generationConfig": {} with
// a continuation of a request it sent without a config.
func continuationKey(req *wireRequest) string {
	if req == nil {
		return ""
	}
	r := *req
	r.ContinuationToken = nil
	if g := r.GenerationConfig; g != nil && reflect.ValueOf(*g).IsZero() {
		r.GenerationConfig = nil
	}
	b, _ := json.Marshal(&r) // decoded request values always marshal
	return string(b)
}

// issued returns what the server recorded of token.
func (s *Server) issued(token []byte) (*issuedToken, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tokens[string(token)]
	return t, ok
}

// continuationTexts are the refusals of the rule "continuation-token". The
// API documents none; its generic INVALID_ARGUMENT text is assumed, and the
// part in parentheses is the fake's.
const (
	unknownToken   = "Request contains an invalid argument. (fake: the continuation token was not sent by this server)"
	differentAsker = "Request contains an invalid argument. (fake: a request that sends a continuation token must be the request that received it, plus the token; this one differs)"
)

// checkContinuationToken checks a request that carries a continuation
// token: the server sent the token, to the same request. It notes, for the
// answer, how much answer came before, and the stream's rest when the token
// is a checkpoint's.
func checkContinuationToken(in *input) *APIError {
	token := in.req.ContinuationToken
	if len(token) == 0 {
		return nil
	}
	if in.tokens == nil {
		return invalidArgument(unknownToken)
	}
	t, ok := in.tokens(token)
	switch {
	case !ok:
		return invalidArgument(unknownToken)
	case t.key != continuationKey(in.req):
		return invalidArgument(differentAsker)
	}
	in.priorOutput, in.resume = t.output, t.rest
	return nil
}

// markContinuation gives evs, the events of reply to in (decorated, not yet
// filled), the tokens the reply scripts: the token and CONTINUATION finish
// of a hop the API cut, and the checkpoints of a stream. Each token is
// recorded with what a request sending it back continues; a checkpoint's,
// with the events after it, tokens included.
func (s *Server) markContinuation(evs []*genai.GenerateContentResponse, reply *Reply, in *input, stream bool) error {
	if !reply.Continue && (reply.Checkpoints <= 0 || !stream) {
		return nil
	}
	key := continuationKey(in.req)
	// output returns the bytes of answer made up to event i, included.
	output := func(i int) int {
		var u usageCounter
		for _, e := range evs[:i+1] {
			if len(e.Candidates) > 0 {
				u.add(e.Candidates[0].Content)
			}
		}
		return in.priorOutput + u.candidateBytes + u.thoughtBytes
	}
	issued := map[string]*issuedToken{}
	if reply.Continue {
		last := evs[len(evs)-1]
		if len(last.Candidates) == 0 {
			last.Candidates = []*genai.Candidate{{}}
		}
		token := bytes.Clone(reply.ContinuationToken)
		if len(token) == 0 {
			token = s.newToken()
		}
		c := last.Candidates[0]
		c.FinishReason, c.ContinuationToken = genai.FinishReasonContinuation, token
		issued[string(token)] = &issuedToken{key: key, output: output(len(evs) - 1)}
	}
	var checkpoints []int
	if stream && reply.Checkpoints > 0 {
		seen := 0
		for i, e := range evs[:len(evs)-1] {
			if len(e.Candidates) == 0 || e.Candidates[0].Content == nil || len(e.Candidates[0].Content.Parts) == 0 {
				continue
			}
			if seen++; seen%reply.Checkpoints == 0 {
				e.Candidates[0].ContinuationToken = s.newToken()
				checkpoints = append(checkpoints, i)
			}
		}
	}
	for _, i := range checkpoints {
		t := &issuedToken{key: key, output: output(i)}
		for _, later := range evs[i+1:] {
			c, err := cloneResponse(later)
			if err != nil {
				return err
			}
			t.rest = append(t.rest, c)
		}
		issued[string(evs[i].Candidates[0].ContinuationToken)] = t
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tokens == nil {
		s.tokens = map[string]*issuedToken{}
	}
	for token, t := range issued {
		s.tokens[token] = t
	}
	return nil
}

// newToken returns a continuation token unique within the server.
func (s *Server) newToken() []byte {
	return fmt.Appendf(nil, "fake-continuation-%d", s.nextID())
}
