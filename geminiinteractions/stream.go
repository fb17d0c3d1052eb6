package geminiinteractions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	iw "github.com/toolnexus/toolnexus-go/internal/interactionswire"
	"google.golang.org/genai"
	ixmodels "google.golang.org/genai/interactions/models/interactions"
	"google.golang.org/genai/interactions/models/operations"
	"google.golang.org/genai/interactions/retry"
	"google.golang.org/genai/interactions/types/stream"
)

// GenerateContentStream creates one interaction that continues contents,
// streamed, and yields it as generateContent's stream: each piece of text
// and of thought summary as it arrives, each function call, thought
// signature and built-in tool step once whole, then a last chunk with the
// finish reason and the usage; the chunks merge into the response
// GenerateContent returns. A stream whose connection breaks is resumed
// from its last event (Config.StreamResumes); one that ends after its
// interaction.completed event but before the "[DONE]" sentinel, which the
// SDK reports as an error, is whole. An error event ends the stream with
// that error.
func (m *Models) GenerateContentStream(ctx context.Context, model string, contents []*genai.Content, config *genai.GenerateContentConfig) streamSeq {
	return func(yield func(*genai.GenerateContentResponse, error) bool) {
		p, err := m.plan(model, contents, config, true)
		if err != nil {
			yield(nil, err)
			return
		}
		res, err := m.create(ctx, p)
		if err != nil && p.fallback(err) {
			res, err = m.create(ctx, p)
		}
		if err != nil {
			if resp, ok := blocked(err, p.model); ok {
				yield(resp, nil)
				return
			}
			yield(nil, err)
			return
		}
		if res.InteractionSSEStreamEvent == nil {
			yield(nil, fmt.Errorf("geminiinteractions: the API answered a streamed call with %s, not a stream",
				res.HTTPMeta.Response.Header.Get("Content-Type")))
			return
		}
		a := &assembler{p: p, yield: yield, steps: map[int]*openStep{}, header: res.HTTPMeta.Response.Header}
		es := res.InteractionSSEStreamEvent
		for resumes := 0; ; resumes++ {
			done, err := a.read(es)
			es.Close()
			if done {
				return
			}
			if !a.resumable(ctx, err) || resumes >= m.cfg.StreamResumes {
				if !a.stopped {
					yield(nil, err)
				}
				return
			}
			m.stats.resumes.Add(1)
			es, err = a.resume(ctx)
			if err != nil {
				yield(nil, err)
				return
			}
		}
	}
}

// An assembler turns the events of one interaction's stream into
// generateContent chunks, and keeps the steps they make.
type assembler struct {
	p      *request
	yield  func(*genai.GenerateContentResponse, error) bool
	header http.Header

	id        string
	lastEvent string
	steps     map[int]*openStep // by index
	stopped   bool              // the consumer stopped, or an error was yielded
	completed bool
	final     *iw.Interaction // interaction.completed's
}

// openStep is a step as its events build it.
type openStep struct {
	step iw.Step
	raw  map[string]json.RawMessage // a built-in step's members, merged from its events
	args strings.Builder            // a function call's arguments, from arguments_delta
	done bool
}

type serverEvent struct {
	Event string          `json:"event"`
	Data  json.RawMessage `json:"data"`
}

// read handles the events of es. It reports done when the stream is over
// (its end yielded, or the consumer gone); otherwise err says why it broke.
func (a *assembler) read(es *stream.EventStream[ixmodels.InteractionSSEStreamEvent]) (done bool, err error) {
	for es.Next() {
		var se serverEvent
		if err := json.Unmarshal(es.RawValue(), &se); err != nil {
			return false, fmt.Errorf("geminiinteractions: a stream event that is not JSON: %w", err)
		}
		var ev iw.Event
		if err := json.Unmarshal(se.Data, &ev); err != nil {
			return false, fmt.Errorf("geminiinteractions: a stream event that is not an event: %w", err)
		}
		if ev.EventID != "" {
			a.lastEvent = ev.EventID
		}
		if !a.handle(&ev) {
			return true, nil
		}
	}
	err = es.Err()
	switch {
	case a.completed:
		// Whole: only the "[DONE]" sentinel may be missing, which genai's
		// SDK reports as an error (interactions/types/stream/stream.go:226-231).
		a.end()
		return true, nil
	case err == nil:
		err = errors.New("geminiinteractions: the stream ended before the interaction completed")
	}
	return false, err
}

// resumable reports whether a stream that broke with err can be resumed:
// the server keeps the interaction, whose id and last event are known,
// and the break was no answer of the API nor the context's end.
func (a *assembler) resumable(ctx context.Context, err error) bool {
	var e genai.APIError
	return !a.stopped && a.p.store && a.id != "" && a.lastEvent != "" && ctx.Err() == nil && !errors.As(err, &e)
}

// resume opens the stream again after the last event received.
func (a *assembler) resume(ctx context.Context) (*stream.EventStream[ixmodels.InteractionSSEStreamEvent], error) {
	t := true
	last := a.lastEvent
	res, err := a.p.m.ix.Get(ctx, operations.GetInteractionByIDRequest{ID: a.id, Stream: &t, LastEventID: &last},
		operations.WithRetries(retry.Config{Strategy: "none"}))
	if err != nil {
		return nil, apiError(err)
	}
	if res.InteractionSSEStreamEvent == nil {
		return nil, fmt.Errorf("geminiinteractions: resuming interaction %s: the API answered %s, not a stream", a.id,
			res.HTTPMeta.Response.Header.Get("Content-Type"))
	}
	return res.InteractionSSEStreamEvent, nil
}

// send yields a chunk holding part.
func (a *assembler) send(p *genai.Part) bool {
	return a.emit(&genai.GenerateContentResponse{ResponseID: a.id, ModelVersion: a.p.model,
		Candidates: []*genai.Candidate{{Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{p}}}}})
}

func (a *assembler) emit(resp *genai.GenerateContentResponse) bool {
	if a.stopped {
		return false
	}
	if !a.yield(resp, nil) {
		a.stopped = true
	}
	return !a.stopped
}

// fail yields err and ends the stream.
func (a *assembler) fail(err error) bool {
	if !a.stopped {
		a.yield(nil, err)
		a.stopped = true
	}
	return false
}

// handle handles one event; false ends the stream.
func (a *assembler) handle(ev *iw.Event) bool {
	switch ev.EventType {
	case iw.EventInteractionCreated:
		if ev.Interaction != nil {
			a.id = ev.Interaction.ID
		}
	case iw.EventStepStart:
		if ev.Index == nil || ev.Step == nil {
			return true
		}
		os := &openStep{step: *ev.Step}
		if !iw.Modeled(os.step.Type) {
			_ = json.Unmarshal(os.step.Raw, &os.raw)
		}
		a.steps[*ev.Index] = os
		// A start that already carries content: yield it as deltas.
		content, summary := os.step.Content, os.step.Summary
		os.step.Content, os.step.Summary = nil, nil
		for _, c := range summary {
			if !a.thought(os, c.Text) {
				return false
			}
		}
		for _, c := range content {
			if !a.output(os, c) {
				return false
			}
		}
	case iw.EventStepDelta:
		if ev.Index == nil {
			return true
		}
		os := a.steps[*ev.Index]
		if os == nil {
			return true // a delta of a step never started: nothing to add it to
		}
		return a.delta(os, ev.Delta)
	case iw.EventStepStop:
		if ev.Index == nil {
			return true
		}
		if os := a.steps[*ev.Index]; os != nil && !os.done {
			return a.stop(os)
		}
	case iw.EventStatusUpdate:
		if ev.ContinuationToken != "" {
			// A checkpoint: the answer can go on from here.
			id := ev.InteractionID
			if id == "" {
				id = a.id
			}
			return a.emit(&genai.GenerateContentResponse{ResponseID: a.id, ModelVersion: a.p.model,
				Candidates: []*genai.Candidate{{ContinuationToken: encodeToken(id, ev.ContinuationToken, a.p.store)}}})
		}
	case iw.EventInteractionCompleted:
		a.completed = true
		if ix := ev.Interaction; ix != nil {
			if ix.ID == "" {
				ix.ID = a.id
			}
			a.final = ix
		}
		return true
	case iw.EventError:
		return a.fail(eventError(ev.Error))
	}
	return true
}

// thought adds summary text to a thought step and yields it.
func (a *assembler) thought(os *openStep, text string) bool {
	if text == "" {
		return true
	}
	if n := len(os.step.Summary); n > 0 {
		os.step.Summary[n-1].Text += text
	} else {
		os.step.Summary = []iw.Content{{Type: "text", Text: text}}
	}
	return a.send(&genai.Part{Thought: true, Text: text})
}

// output adds a content item to a model_output step and yields it.
func (a *assembler) output(os *openStep, c iw.Content) bool {
	items := os.step.Content
	if n := len(items); n > 0 && c.Type == "text" && items[n-1].Type == "text" {
		items[n-1].Text += c.Text
	} else {
		items = append(items, c)
	}
	os.step.Content = items
	parts, err := iw.Parts(iw.Step{Type: iw.TypeModelOutput, Content: []iw.Content{c}})
	if err != nil {
		return a.fail(fmt.Errorf("geminiinteractions: interaction %s: %w", a.id, err))
	}
	for _, p := range parts {
		if !a.send(p) {
			return false
		}
	}
	return true
}

func (a *assembler) delta(os *openStep, raw json.RawMessage) bool {
	var d iw.Delta
	if err := json.Unmarshal(raw, &d); err != nil {
		return a.fail(fmt.Errorf("geminiinteractions: interaction %s: a delta that is not JSON: %w", a.id, err))
	}
	switch d.Type {
	case iw.DeltaText:
		return a.output(os, iw.Content{Type: "text", Text: d.Text})
	case iw.DeltaThoughtSummary:
		if d.Content != nil {
			return a.thought(os, d.Content.Text)
		}
	case iw.DeltaThoughtSignature:
		sig := d.Signature
		os.step.Signature = &sig
	case iw.DeltaArguments:
		os.args.WriteString(d.Arguments)
	case iw.DeltaAnnotations:
		// Citations of the text so far: on its last text item.
		var a struct {
			Annotations []json.RawMessage `json:"annotations"`
		}
		items := os.step.Content
		if json.Unmarshal(raw, &a) == nil && len(items) > 0 && items[len(items)-1].Type == "text" {
			last := &items[len(items)-1]
			var had []json.RawMessage
			_ = json.Unmarshal(last.Annotations, &had)
			last.Annotations, _ = json.Marshal(append(had, a.Annotations...))
		}
	case "image", "audio", "video", "document":
		return a.output(os, iw.Content{Type: d.Type, Data: d.Data, URI: d.URI, MimeType: d.MimeType})
	default:
		if d.Type == os.step.Type && os.raw != nil {
			// A built-in step's delta: its members, merged into the step.
			var m map[string]json.RawMessage
			if json.Unmarshal(raw, &m) == nil {
				for k, v := range m {
					if k != "type" {
						os.raw[k] = v
					}
				}
			}
		}
	}
	return true
}

// stop completes a step and yields what was not yielded yet: a thought's
// signature, a function call, a built-in step.
func (a *assembler) stop(os *openStep) bool {
	os.done = true
	s := &os.step
	switch s.Type {
	case iw.TypeThought:
		if s.Signature != nil && *s.Signature != "" {
			return a.send(&genai.Part{Thought: true, ThoughtSignature: []byte(*s.Signature)})
		}
	case iw.TypeModelOutput:
	case iw.TypeFunctionCall:
		if os.args.Len() > 0 {
			s.Arguments = json.RawMessage(os.args.String())
		}
		parts, err := iw.Parts(*s)
		if err != nil {
			return a.fail(fmt.Errorf("geminiinteractions: interaction %s: %w", a.id, err))
		}
		return a.send(parts[0])
	default:
		if os.raw != nil {
			b, err := iw.Marshal(os.raw)
			if err == nil {
				var full iw.Step
				if err = json.Unmarshal(b, &full); err == nil {
					*s = full
				}
			}
			if err != nil {
				return a.fail(fmt.Errorf("geminiinteractions: interaction %s: %w", a.id, err))
			}
		}
		parts, err := iw.Parts(*s)
		if err != nil {
			return a.fail(fmt.Errorf("geminiinteractions: interaction %s: %w", a.id, err))
		}
		return a.send(parts[0])
	}
	return true
}

// end yields the last chunk: the finish reason, the usage, and the
// continuation token, once the interaction completed; or its error.
func (a *assembler) end() {
	ix := a.final
	if ix == nil {
		ix = &iw.Interaction{ID: a.id, Status: iw.StatusCompleted}
	}
	idx := make([]int, 0, len(a.steps))
	for i := range a.steps {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	steps := make([]iw.Step, 0, len(idx))
	for _, i := range idx {
		os := a.steps[i]
		if !os.done && !a.stop(os) {
			return
		}
		steps = append(steps, os.step)
	}
	content, err := iw.ModelContent(steps)
	if err != nil {
		a.fail(fmt.Errorf("geminiinteractions: interaction %s: %w", ix.ID, err))
		return
	}
	resp, err := a.p.finish(ix, steps, content, &http.Response{Header: a.header})
	if err != nil {
		a.fail(err)
		return
	}
	// The parts were yielded: the last chunk says how the answer ended.
	resp.Candidates[0].Content = nil
	a.emit(resp)
}
