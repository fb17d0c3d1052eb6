package fake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	iw "github.com/toolnexus/toolnexus-go/internal/interactionswire"
	"google.golang.org/genai"
)

// This file answers a create with a scripted Reply: the reply's model
// turn, made as generateContent's answer would be (auto-fill included),
// becomes the interaction's steps, status and usage, sent whole or as a
// stream of events.

// ixEvent is one event of an interaction's stream.
type ixEvent struct {
	typ, id string
	data    []byte // the event's JSON, with event_type and event_id
}

// answerInteraction sends reply to a validated create.
func (s *Server) answerInteraction(w http.ResponseWriter, r *http.Request, in *ixInput, reply *Reply, rec *record) {
	if in.req.Background {
		s.startBackground(w, in, reply, rec)
		return
	}
	if !s.wait(r.Context(), reply.Delay) {
		panic(http.ErrAbortHandler) // the client is gone or the server closing
	}
	if reply.Err != nil {
		in.writeError(w, reply.Err)
		return
	}
	if reply.Fault == FaultDropConnection {
		dropConnection(w)
		return
	}
	if reply.Body != nil {
		if !in.req.Stream {
			writeJSON(w, http.StatusOK, reply.Body)
			return
		}
		sw := newIxStreamWriter(w)
		sw.event(ixEvent{typ: "unknown", data: reply.Body})
		sw.done()
		return
	}
	if !in.req.Stream && reply.StreamErr != nil {
		in.writeError(w, reply.StreamErr)
		return
	}
	var (
		ix     *storedInteraction
		failed *APIError
	)
	if in.resume != nil {
		ix = s.resumedInteraction(in)
	} else {
		ix, failed = s.newInteraction(in, reply)
	}
	if failed != nil {
		in.writeError(w, failed)
		return
	}
	cut := reply.Fault == FaultCutStream || reply.Fault == FaultCutMidEvent || reply.Fault == FaultMalformedBody || reply.StreamErr != nil
	send := len(ix.events)
	if in.req.Stream && cut {
		send = min(max(reply.CutAfter, 0), len(ix.events))
		if reply.StreamErr != nil {
			// The server failed there: the interaction it keeps says so.
			e := ixWire(reply.StreamErr).Error
			ix.status, ix.errors, ix.events = iw.StatusFailed, []iw.Error{e}, append(ix.events[:send:send],
				s.ixEvent(ix, iw.Event{EventType: iw.EventError, Error: &e}))
		}
	}
	s.keep(in, ix, rec)
	if !in.req.Stream {
		writeUnary(w, reply.Fault, mustWire(ix.wireLocked(s)))
		return
	}
	sw := newIxStreamWriter(w)
	for i := 0; i < send; i++ {
		if i > 0 && !s.wait(r.Context(), reply.EventDelay) {
			panic(http.ErrAbortHandler)
		}
		sw.event(ix.events[i])
	}
	switch {
	case !cut:
	case reply.StreamErr != nil:
		sw.event(ix.events[send])
	case reply.Fault == FaultMalformedBody:
		sw.event(ixEvent{typ: iw.EventStepDelta, data: []byte("{not json")})
	case reply.Fault == FaultCutMidEvent && send < len(ix.events):
		sw.partial(ix.events[send])
		panic(http.ErrAbortHandler)
	default:
		panic(http.ErrAbortHandler)
	}
	sw.done()
}

// wireLocked is wire for a caller that does not hold s.mu.
func (ix *storedInteraction) wireLocked(s *Server) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ix.wire(false)
}

// keep records the interaction created for rec, and stores it unless the
// request said store: false.
func (s *Server) keep(in *ixInput, ix *storedInteraction, rec *record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec.req.InteractionID = ix.id
	for _, st := range ix.output {
		if st.Signature != nil && *st.Signature != "" {
			if s.signatures == nil {
				s.signatures = map[string]bool{}
			}
			s.signatures[*st.Signature] = true
		}
	}
	if s.ixTokens == nil {
		s.ixTokens = map[string]string{}
	}
	if ix.token != "" {
		s.ixTokens[ix.token] = ix.id
	}
	for token := range ix.checkpoints {
		s.ixTokens[token] = ix.id
		if s.ixCheckpoints == nil {
			s.ixCheckpoints = map[string]*storedInteraction{}
		}
		s.ixCheckpoints[token] = ix
	}
	if in.req.Store != nil && !*in.req.Store {
		return
	}
	if s.interactions == nil {
		s.interactions = map[string]*storedInteraction{}
	}
	s.interactions[ix.id] = ix
}

// startBackground answers a background create at once, in progress, and
// completes the interaction after the reply's Delay, unless it is
// cancelled first.
func (s *Server) startBackground(w http.ResponseWriter, in *ixInput, reply *Reply, rec *record) {
	if in.req.Stream {
		in.writeError(w, invalidRequest("fake: a background interaction is served unary only."))
		return
	}
	if reply.Err != nil {
		in.writeError(w, reply.Err)
		return
	}
	done, failed := s.newInteraction(in, reply)
	if failed != nil {
		in.writeError(w, failed)
		return
	}
	ix := *done
	ix.status, ix.output, ix.usage, ix.events, ix.token, ix.errors, ix.background = iw.StatusInProgress, nil, nil, nil, "", nil, true
	s.keep(in, &ix, rec)
	s.mu.Lock()
	body := ix.wire(false)
	ix.timer = time.AfterFunc(reply.Delay, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if ix.status != iw.StatusInProgress {
			return
		}
		ix.status, ix.output, ix.usage, ix.events, ix.token, ix.errors = done.status, done.output, done.usage, done.events, done.token, done.errors
		ix.history, ix.updated = done.history, s.timeNowLocked()
	})
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, mustWire(body))
}

// newInteraction makes the interaction that answers in with reply: its
// steps, status, usage and stream. A reply whose prompt is blocked is
// answered with the error it returns instead, as is a reply the server
// cannot make (500).
func (s *Server) newInteraction(in *ixInput, reply *Reply) (*storedInteraction, *APIError) {
	ix, blocked, err := s.makeInteraction(in, reply)
	if err != nil {
		return nil, &APIError{Code: http.StatusInternalServerError, Message: err.Error()}
	}
	return ix, blocked
}

func (s *Server) makeInteraction(in *ixInput, reply *Reply) (ix *storedInteraction, blocked *APIError, err error) {
	contents, err := iw.Contents(in.conversation)
	if err != nil {
		return nil, nil, err
	}
	si, tools, _, _, _ := iw.GenAIConfig(in.req)
	g := &input{backend: in.backend, model: in.req.Model, interactions: true,
		req: &wireRequest{Contents: contents, SystemInstruction: si, Tools: tools}}
	evs, err := s.events(reply, g, false)
	if err != nil {
		return nil, nil, err
	}
	resp := evs[0]
	if pf := resp.PromptFeedback; pf != nil && pf.BlockReason != "" {
		// A prompt the policy refuses is a 400 content_blocked (sec:
		// LiveBench PR #476), not an interaction.
		msg := pf.BlockReasonMessage
		if msg == "" {
			msg = fmt.Sprintf("The prompt was blocked (%s).", pf.BlockReason)
		}
		return nil, &APIError{Code: http.StatusBadRequest, Status: "CONTENT_BLOCKED", Message: msg}, nil
	}
	now := s.timeNow()
	ix = &storedInteraction{
		id: fmt.Sprintf("v1_fake-interaction-%d", s.nextID()), model: in.req.Model, owner: in.owner,
		previous: in.req.PreviousInteractionID, input: in.req.Input, created: now, updated: now,
		status: iw.StatusCompleted,
	}
	var cand *genai.Candidate
	if len(resp.Candidates) > 0 {
		cand = resp.Candidates[0]
	}
	if cand != nil && cand.Content != nil {
		if ix.output, err = iw.Steps(&genai.Content{Role: genai.RoleModel, Parts: cand.Content.Parts}); err != nil {
			return nil, nil, fmt.Errorf("fake: the scripted reply has no Interactions steps: %w", err)
		}
	}
	if !reply.Raw && (reply.AddSignatures || isGemini3(in.req.Model)) {
		ix.output = s.signThoughts(ix.output)
	}
	if cand != nil {
		// The answer's grounding and citations are its text's annotations.
		var citations []*genai.Citation
		if cand.CitationMetadata != nil {
			citations = cand.CitationMetadata.Citations
		}
		iw.Annotate(ix.output, cand.GroundingMetadata, citations)
	}
	if cand != nil {
		ix.status, ix.errors = ixStatus(cand)
		if cand.FinishReason == genai.FinishReasonContinuation {
			ix.token = string(cand.ContinuationToken)
			if ix.token == "" {
				ix.token = fmt.Sprintf("fake-continuation-%d", s.nextID())
			}
		}
	}
	if m := resp.UsageMetadata; m != nil {
		ix.usage = ixUsage(m)
		if in.previous != nil && m.CachedContentTokenCount == 0 && reply.Response != nil && reply.Response.UsageMetadata == nil {
			// The history the server holds is read from its cache.
			chain, _ := iw.Contents(in.previous.history)
			var u usageCounter
			u.prompt(&wireRequest{Contents: chain})
			ix.usage.TotalCachedTokens = tokens(u.promptBytes)
		}
	}
	ix.history = append(append([]iw.Step(nil), in.conversation...), ix.output...)
	ix.events = s.streamEvents(ix, reply.TextChunk, reply.Checkpoints)
	return ix, nil, nil
}

// ixUsage is generateContent's usage as an interaction's.
func ixUsage(m *genai.GenerateContentResponseUsageMetadata) *iw.Usage {
	return &iw.Usage{TotalInputTokens: m.PromptTokenCount, TotalOutputTokens: m.CandidatesTokenCount,
		TotalThoughtTokens: m.ThoughtsTokenCount, TotalCachedTokens: m.CachedContentTokenCount,
		TotalToolUseTokens: m.ToolUsePromptTokenCount, TotalTokens: m.TotalTokenCount,
		InputTokensByModality: []iw.ModalityTokens{{Modality: "text", Tokens: m.PromptTokenCount}}}
}

// resumedInteraction is the interaction that continues a stream from one of
// its checkpoints: the steps after it, ending as that stream's interaction
// ended (a new token when it needed continuing); its history is that
// interaction's, the whole answer.
func (s *Server) resumedInteraction(in *ixInput) *storedInteraction {
	from := in.resumeFrom
	now := s.timeNow()
	s.mu.Lock()
	status, errs, token, history := from.status, from.errors, from.token, from.history
	s.mu.Unlock()
	ix := &storedInteraction{id: fmt.Sprintf("v1_fake-interaction-%d", s.nextID()), model: in.req.Model, owner: in.owner,
		previous: in.req.PreviousInteractionID, input: in.req.Input, created: now, updated: now,
		status: status, errors: errs, output: in.resume}
	if token != "" {
		ix.token = fmt.Sprintf("fake-continuation-%d", s.nextID())
	}
	var u usageCounter
	if contents, err := iw.Contents(in.conversation); err == nil {
		u.prompt(&wireRequest{Contents: contents})
	}
	if out, err := iw.ModelContent(ix.output); err == nil {
		u.add(out)
	}
	ix.usage = ixUsage(u.metadata())
	ix.history = history // the stream's whole answer: what came before the checkpoint, then this
	ix.events = s.streamEvents(ix, 0, 0)
	return ix
}

// ixStatus is the status, and the errors, of an interaction whose model
// turn ended as cand did.
func ixStatus(cand *genai.Candidate) (string, []iw.Error) {
	switch r := cand.FinishReason; {
	case r == "" || r == genai.FinishReasonStop || r == genai.FinishReasonUnspecified:
		return iw.StatusCompleted, nil
	case r == genai.FinishReasonMaxTokens:
		return iw.StatusIncomplete, nil
	case r == genai.FinishReasonContinuation:
		return iw.StatusRequiresContinuation, nil
	case unsafeFinish[r]:
		return iw.StatusFailed, []iw.Error{{Code: "content_blocked", Message: orText(cand.FinishMessage, fmt.Sprintf("The response was blocked (%s).", r))}}
	default:
		return iw.StatusFailed, []iw.Error{{Code: strings.ToLower(string(r)), Message: orText(cand.FinishMessage, fmt.Sprintf("The model stopped (%s).", r))}}
	}
}

// unsafeFinish are the finish reasons of an answer stopped for safety.
var unsafeFinish = map[genai.FinishReason]bool{
	genai.FinishReasonSafety: true, genai.FinishReasonProhibitedContent: true, genai.FinishReasonBlocklist: true,
	genai.FinishReasonSPII: true, genai.FinishReasonRecitation: true, genai.FinishReasonImageSafety: true,
	genai.FinishReasonImageProhibitedContent: true, genai.FinishReasonImageRecitation: true,
}

func orText(s, otherwise string) string {
	if s != "" {
		return s
	}
	return otherwise
}

// signThoughts gives a thinking model's steps what the real ones have: a
// signature on every thought, and a signed thought first when the turn
// has none (sec: one signed thought before parallel calls).
func (s *Server) signThoughts(steps []iw.Step) []iw.Step {
	thought := false
	for i := range steps {
		if steps[i].Type != iw.TypeThought {
			continue
		}
		thought = true
		if steps[i].Signature == nil || *steps[i].Signature == "" {
			sig := string(s.signature())
			steps[i].Signature = &sig
		}
	}
	if !thought && len(steps) > 0 {
		sig := string(s.signature())
		steps = append([]iw.Step{{Type: iw.TypeThought, Signature: &sig}}, steps...)
	}
	return steps
}

// ixEvent returns e as one event of ix's stream, with its id.
func (s *Server) ixEvent(ix *storedInteraction, e iw.Event) ixEvent {
	e.EventID = fmt.Sprintf("%s:evt-%d", ix.id, s.nextID())
	return ixEvent{typ: e.EventType, id: e.EventID, data: mustWire(e)}
}

// streamEvents returns the stream of ix: interaction.created, a
// step.start, deltas and a step.stop for each step, and
// interaction.completed, as the API streams them (sec, and the streaming
// docs). Text, thought summaries and function arguments come in deltas of
// at most textChunk bytes (0: whole); a thought's signature comes in a
// thought_signature delta, its step.start carrying "" (sec); a built-in
// step comes whole in its step.start.
func (s *Server) streamEvents(ix *storedInteraction, textChunk, checkpoints int) []ixEvent {
	created := ix.created.UTC().Format(time.RFC3339Nano)
	evs := []ixEvent{s.ixEvent(ix, iw.Event{EventType: iw.EventInteractionCreated,
		Interaction: &iw.Interaction{ID: ix.id, Status: iw.StatusInProgress, Model: ix.model, Created: created}})}
	delta := func(k int, d any) {
		evs = append(evs, s.ixEvent(ix, iw.Event{EventType: iw.EventStepDelta, Index: &k, Delta: mustWire(d)}))
	}
	texts := 0 // text deltas so far, for the checkpoints
	checkpoint := func(k, item, offset int) {
		if checkpoints <= 0 {
			return
		}
		if texts++; texts%checkpoints != 0 {
			return
		}
		token := fmt.Sprintf("fake-checkpoint-%d", s.nextID())
		if ix.checkpoints == nil {
			ix.checkpoints = map[string][]iw.Step{}
		}
		ix.checkpoints[token] = rest(ix.output, k, item, offset)
		evs = append(evs, s.ixEvent(ix, iw.Event{EventType: iw.EventStatusUpdate, InteractionID: ix.id,
			Status: iw.StatusInProgress, ContinuationToken: token}))
	}
	for k, st := range ix.output {
		start := st
		switch st.Type {
		case iw.TypeThought:
			empty := ""
			start = iw.Step{Type: iw.TypeThought, Signature: &empty}
		case iw.TypeModelOutput:
			start = iw.Step{Type: iw.TypeModelOutput}
		case iw.TypeFunctionCall:
			start.Arguments = json.RawMessage("{}")
		}
		evs = append(evs, s.ixEvent(ix, iw.Event{EventType: iw.EventStepStart, Index: &k, Step: &start}))
		switch st.Type {
		case iw.TypeThought:
			for _, c := range st.Summary {
				for _, piece := range splitText(c.Text, textChunk) {
					delta(k, iw.Delta{Type: iw.DeltaThoughtSummary, Content: &iw.Content{Type: "text", Text: piece}})
				}
			}
			if st.Signature != nil && *st.Signature != "" {
				delta(k, iw.Delta{Type: iw.DeltaThoughtSignature, Signature: *st.Signature})
			}
		case iw.TypeModelOutput:
			for j, c := range st.Content {
				if c.Type != "text" {
					delta(k, c)
					continue
				}
				offset := 0
				for _, piece := range splitText(c.Text, textChunk) {
					delta(k, iw.Delta{Type: iw.DeltaText, Text: piece})
					offset += len(piece)
					checkpoint(k, j, offset)
				}
				if len(c.Annotations) > 0 {
					delta(k, map[string]any{"type": iw.DeltaAnnotations, "annotations": c.Annotations})
				}
			}
		case iw.TypeFunctionCall:
			if args := string(st.Arguments); args != "{}" {
				for _, piece := range splitText(args, textChunk) {
					delta(k, iw.Delta{Type: iw.DeltaArguments, Arguments: piece})
				}
			}
		}
		evs = append(evs, s.ixEvent(ix, iw.Event{EventType: iw.EventStepStop, Index: &k}))
	}
	done := &iw.Interaction{ID: ix.id, Status: ix.status, Model: ix.model, Usage: ix.usage, ContinuationToken: ix.token,
		Created: created, Updated: ix.updated.UTC().Format(time.RFC3339Nano), Errors: ix.errors}
	evs = append(evs, s.ixEvent(ix, iw.Event{EventType: iw.EventInteractionCompleted, Interaction: done}))
	return evs
}

// An ixStreamWriter writes an interaction's stream as the API does:
// "event: <type>" and "data: <json>" lines, a blank line after each event,
// each flushed, and "event: done" with data [DONE] last, which genai's
// Interactions SDK requires (interactions/types/stream/stream.go:226-231;
// the streaming docs).
type ixStreamWriter struct {
	w       http.ResponseWriter
	flusher http.Flusher
}

func newIxStreamWriter(w http.ResponseWriter) *ixStreamWriter {
	sw := &ixStreamWriter{w: w}
	sw.flusher, _ = w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	sw.flush()
	return sw
}

func (sw *ixStreamWriter) flush() {
	if sw.flusher != nil {
		sw.flusher.Flush()
	}
}

func frame(typ string, data []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", typ, data)
	return b.Bytes()
}

func (sw *ixStreamWriter) event(e ixEvent) {
	sw.w.Write(frame(e.typ, e.data))
	sw.flush()
}

// partial writes the first half of e and flushes it.
func (sw *ixStreamWriter) partial(e ixEvent) {
	f := frame(e.typ, e.data)
	sw.w.Write(f[:len(f)/2])
	sw.flush()
}

// done ends the stream with the sentinel.
func (sw *ixStreamWriter) done() {
	sw.w.Write(frame("done", []byte(iw.Sentinel)))
	sw.flush()
}

// rest returns the steps after a checkpoint: what follows offset bytes
// of the text of content item of step k, and the steps after it.
func rest(steps []iw.Step, k, item, offset int) []iw.Step {
	st := steps[k]
	var out []iw.Step
	content := append([]iw.Content(nil), st.Content[item:]...)
	content[0].Text = content[0].Text[offset:]
	if content[0].Text == "" {
		content = content[1:]
	}
	if len(content) > 0 {
		st.Content = content
		out = append(out, st)
	}
	return append(out, steps[k+1:]...)
}
