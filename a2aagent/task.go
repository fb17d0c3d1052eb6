package a2aagent

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/geminiadapter"
	"google.golang.org/genai"
)

// The metadata keys of ADK's A2A mapping (adk-go's server/adka2a), which
// ADK clients read: a data part's type, a long-running call, a thought, a
// run's usage and an error's code.
const (
	metaType        = "adk_type"
	metaLongRunning = "adk_is_long_running"
	metaThought     = "adk_thought"
	metaUsage       = "adk_usage_metadata"
	metaErrorCode   = "adk_error_code"
	metaPartial     = "adk_partial"

	// metaProgress marks the data part of a running call's progress
	// (ours: ADK has none), which a status message of a working task
	// carries; RemoteTool reads it back.
	metaProgress = "toolnexus_tool_progress"

	typeFunctionCall     = "function_call"
	typeFunctionResponse = "function_response"

	// confirmationName is the function ADK asks a person to confirm a call
	// with: a call whose args hold the originalFunctionCall, answered by
	// a function_response whose response is {"confirmed": bool}.
	confirmationName = "adk_request_confirmation"

	// metaDataCompat marks a data part that wraps a value that is not an
	// object as {"value": v}, as @a2a-js/sdk does (a data part's data is
	// an object).
	metaDataCompat = "data_part_compat"
)

// translator turns a run's records into the A2A events of its task: one
// per record or none, two at the end of a typed run. A task is a run: its
// id is the run's, its contextId the run's thread.
//
// Each model turn is an artifact (id: the task's, "-t", the turn) that
// holds, in order, the turn's text as it streams, its thoughts (text parts
// marked adk_thought), its function calls and their results (data parts
// of adk_type function_call and function_response): the last artifact of
// a task that completed is its answer. A typed answer is one more
// artifact, "-output", of one data part.
type translator struct {
	task    a2a.TaskID
	context string
	// files reads the files calls refer to (see filePart).
	files fileSource
	// started holds the turns whose artifact was sent: their next parts
	// are appended to it.
	started map[int]bool
	// begun is set once the run's first record (KindStart) was read: a
	// log read from its end was cut, and only the end says the answer.
	begun bool
}

func newTranslator(files fileSource, run agentserver.RunInfo) *translator {
	files.run = run
	return &translator{task: a2a.TaskID(run.ID), context: run.Thread, started: map[int]bool{}, files: files}
}

// TaskInfo implements a2a.TaskInfoProvider.
func (t *translator) TaskInfo() a2a.TaskInfo {
	return a2a.TaskInfo{TaskID: t.task, ContextID: t.context}
}

func (t *translator) artifactID(turn int) a2a.ArtifactID {
	return a2a.ArtifactID(string(t.task) + "-t" + strconv.Itoa(turn))
}

// part returns the event that adds p to turn's artifact.
func (t *translator) part(turn int, p a2a.Part) a2a.Event {
	ev := &a2a.TaskArtifactUpdateEvent{TaskID: t.task, ContextID: t.context, Append: t.started[turn],
		Artifact: &a2a.Artifact{ID: t.artifactID(turn), Parts: a2a.ContentParts{p}}}
	t.started[turn] = true
	return ev
}

func (t *translator) status(state a2a.TaskState, at time.Time, msg *a2a.Message, final bool) *a2a.TaskStatusUpdateEvent {
	at = at.UTC()
	return &a2a.TaskStatusUpdateEvent{TaskID: t.task, ContextID: t.context, Final: final,
		Status: a2a.TaskStatus{State: state, Message: msg, Timestamp: &at}}
}

// message returns an agent message of the task.
func (t *translator) message(id string, parts ...a2a.Part) *a2a.Message {
	return &a2a.Message{ID: id, Role: a2a.MessageRoleAgent, TaskID: t.task, ContextID: t.context, Parts: parts}
}

// events returns the events of rec. last says that the task's stream ends
// after it: a pause that no record follows is the task waiting for input.
func (t *translator) events(rec *agentserver.Record, last bool) []a2a.Event {
	switch rec.Kind {
	case agentserver.KindStart:
		t.begun = true
		return []a2a.Event{t.status(a2a.TaskStateWorking, rec.Time, nil, false)}
	case agentserver.KindText:
		return []a2a.Event{t.part(rec.Turn, a2a.TextPart{Text: rec.Text})}
	case agentserver.KindThought:
		return []a2a.Event{t.part(rec.Turn, a2a.TextPart{Text: rec.Text, Metadata: map[string]any{metaThought: true}})}
	case agentserver.KindToolCall:
		return []a2a.Event{t.part(rec.Turn, callPart(rec.Call))}
	case agentserver.KindToolResult:
		out := []a2a.Event{t.part(rec.Turn, resultPart(rec.Call, rec.Result))}
		for i, f := range rec.Result.Files {
			if p, ok := t.files.part(f); ok {
				out = append(out, &a2a.TaskArtifactUpdateEvent{TaskID: t.task, ContextID: t.context, LastChunk: true,
					Artifact: &a2a.Artifact{ID: a2a.ArtifactID(fmt.Sprintf("%s-file-%d-%d", t.task, rec.Offset, i)), Name: f.Name,
						Description: "made by " + rec.Call.Name, Parts: a2a.ContentParts{p}}})
			}
		}
		return out
	case agentserver.KindProgress:
		msg := t.message(string(t.task)+"-progress-"+strconv.FormatInt(rec.Offset, 10), progressParts(rec.Call, rec.Progress)...)
		return []a2a.Event{t.status(a2a.TaskStateWorking, rec.Time, msg, false)}
	case agentserver.KindPause:
		if last {
			return []a2a.Event{t.inputRequired(rec)}
		}
	case agentserver.KindDone:
		return t.done(rec)
	}
	// Steps, retries, decisions, the ends of turns, and kinds this
	// version does not know: A2A has no event for them.
	return nil
}

// callPart is the data part of a function call, as ADK sends it.
func callPart(c *agentserver.Call) a2a.DataPart {
	return a2a.DataPart{
		Data:     map[string]any{"id": c.ID, "name": c.Name, "args": c.Args},
		Metadata: map[string]any{metaType: typeFunctionCall, metaLongRunning: c.Wait == agentserver.WaitBrowser},
	}
}

// progressParts are the parts of a running call's progress: a sentence
// for a person, then the data, {"id", "name", "done", "total",
// "message"}, marked toolnexus_tool_progress.
func progressParts(c *agentserver.Call, p *agentserver.Progress) a2a.ContentParts {
	var b strings.Builder
	b.WriteString(c.Name)
	switch {
	case p.Total > 0:
		fmt.Fprintf(&b, ": %g of %g", p.Done, p.Total)
	default:
		fmt.Fprintf(&b, ": %g", p.Done)
	}
	if p.Message != "" {
		b.WriteString(", ")
		b.WriteString(p.Message)
	}
	data := map[string]any{"id": c.ID, "name": c.Name, "done": p.Done}
	if p.Total > 0 {
		data["total"] = p.Total
	}
	if p.Message != "" {
		data["message"] = p.Message
	}
	return a2a.ContentParts{a2a.TextPart{Text: b.String()}, a2a.DataPart{Data: data, Metadata: map[string]any{metaProgress: true}}}
}

// resultPart is the data part of a function response: the response the
// model read, {"result": output} or {"error": message}, and {"error":
// message, "denied": true} for a call refused rather than run
// (geminiadapter.Response's mark).
func resultPart(c *agentserver.Call, r *agentserver.CallResult) a2a.DataPart {
	var response map[string]any
	switch {
	case r.Denied:
		response = map[string]any{"error": r.Error, geminiadapter.DeniedKey: true}
	case r.Error != "" || len(r.Output) == 0:
		response = map[string]any{"error": r.Error}
	default:
		response = map[string]any{"result": r.Output}
	}
	return a2a.DataPart{
		Data:     map[string]any{"id": c.ID, "name": c.Name, "response": response},
		Metadata: map[string]any{metaType: typeFunctionResponse},
	}
}

// inputRequired is the final status of a task whose run waits: a message
// saying what it waits for, in a sentence for a person, then, for a
// client to answer, one long-running function call
// per pending call: for a call that needs approval ADK's confirmation call
// (adk_request_confirmation, whose args hold the original call), for a
// call of a browser tool the call itself. Each has the pending call's id,
// which the answer's function_response names.
func (t *translator) inputRequired(rec *agentserver.Record) *a2a.TaskStatusUpdateEvent {
	var b strings.Builder
	parts := a2a.ContentParts{nil} // the text goes first
	for i, p := range rec.Pending {
		if i > 0 {
			b.WriteString(" ")
		}
		c := p.Call
		if p.Kind == agentserver.WaitBrowser {
			fmt.Fprintf(&b, "%s %s waits for its result.", c.Name, c.Args)
			parts = append(parts, callPart(&c))
			continue
		}
		fmt.Fprintf(&b, "%s %s needs approval; it is refused if nobody decides by %s.", c.Name, c.Args, p.Deadline.UTC().Format(time.RFC3339))
		parts = append(parts, a2a.DataPart{
			Data: map[string]any{"id": c.ID, "name": confirmationName, "args": map[string]any{
				"originalFunctionCall": map[string]any{"id": c.ID, "name": c.Name, "args": c.Args},
				"toolConfirmation":     map[string]any{"hint": c.Name + " needs approval", "confirmed": false},
			}},
			Metadata: map[string]any{metaType: typeFunctionCall, metaLongRunning: true},
		})
	}
	parts[0] = a2a.TextPart{Text: b.String()}
	msg := t.message(string(t.task)+"-input-"+strconv.FormatInt(rec.Offset, 10), parts...)
	return t.status(a2a.TaskStateInputRequired, rec.Time, msg, true)
}

// done is the end of the task: a typed answer's artifact, then the final
// status, with the run's usage in its metadata. Read alone, from a log
// that was cut to its end (a run not started over A2A, whose log is not
// kept), it first makes the answer's text the last turn's artifact.
func (t *translator) done(rec *agentserver.Record) []a2a.Event {
	d := rec.Done
	var out []a2a.Event
	if !t.begun && d.Text != "" {
		out = append(out, t.part(rec.Turn, a2a.TextPart{Text: d.Text}))
	}
	if len(d.Output) > 0 {
		out = append(out, &a2a.TaskArtifactUpdateEvent{TaskID: t.task, ContextID: t.context, LastChunk: true,
			Artifact: &a2a.Artifact{ID: a2a.ArtifactID(string(t.task) + "-output"), Name: "output",
				Parts: a2a.ContentParts{outputPart(d.Output)}}})
	}
	var ev *a2a.TaskStatusUpdateEvent
	switch d.State {
	case agentserver.StateDone:
		ev = t.status(a2a.TaskStateCompleted, rec.Time, nil, true)
	case agentserver.StateCancelled:
		ev = t.status(a2a.TaskStateCanceled, rec.Time, t.failure(d), true)
	default:
		ev = t.status(a2a.TaskStateFailed, rec.Time, t.failure(d), true)
	}
	ev.Metadata = map[string]any{metaUsage: usageMetadata(d)}
	if d.Error != nil {
		ev.Metadata[metaErrorCode] = d.Error.Code
	}
	return append(out, ev)
}

// failure is the message of a run that did not finish: why.
func (t *translator) failure(d *agentserver.Done) *a2a.Message {
	text := "the run ended early"
	if d.Error != nil {
		text = d.Error.Message
	}
	return t.message(string(t.task)+"-end", a2a.TextPart{Text: text})
}

// outputPart is the data part of a typed answer: the value when it is an
// object, else the value wrapped as {"value": v} and marked so.
func outputPart(out json.RawMessage) a2a.DataPart {
	if len(out) > 0 && out[0] == '{' {
		var m map[string]any
		if json.Unmarshal(out, &m) == nil {
			return a2a.DataPart{Data: m}
		}
	}
	return a2a.DataPart{Data: map[string]any{"value": out}, Metadata: map[string]any{metaDataCompat: true}}
}

// usageMetadata is the run's usage as Gemini's usageMetadata says it,
// which ADK clients read.
func usageMetadata(d *agentserver.Done) map[string]any {
	u := d.Usage
	return map[string]any{
		"promptTokenCount":        u.PromptTokens,
		"candidatesTokenCount":    u.CandidatesTokens,
		"thoughtsTokenCount":      u.ThoughtsTokens,
		"cachedContentTokenCount": u.CachedTokens,
		"toolUsePromptTokenCount": u.ToolUsePromptTokens,
		"totalTokenCount":         u.TotalTokens,
	}
}

// snapshot is a task as its events so far make it: tasks/get, a
// message/send answer, the first event of a tasks/resubscribe stream.
type snapshot struct{ task a2a.Task }

// newSnapshot starts the task of run: its history holds the user's
// message that started it (RunInfo.Message), when the runner keeps it.
func newSnapshot(t *translator, run agentserver.RunInfo) *snapshot {
	s := &snapshot{task: a2a.Task{ID: t.task, ContextID: t.context, Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}}}
	if q := question(t, run.Message); q != nil {
		s.task.History = []*a2a.Message{q}
	}
	return s
}

// question returns the user's message c, which started the task, as an
// A2A message of the task: its text, and its files as bytes or URIs. Its
// id is the task's and "-question": the id the client gave it is not
// kept. It returns nil for a nil or empty c.
func question(t *translator, c *genai.Content) *a2a.Message {
	if c == nil {
		return nil
	}
	var parts a2a.ContentParts
	for _, p := range c.Parts {
		switch {
		case p == nil || p.Thought:
		case p.Text != "":
			parts = append(parts, a2a.TextPart{Text: p.Text})
		case p.InlineData != nil:
			parts = append(parts, a2a.FilePart{File: a2a.FileBytes{FileMeta: a2a.FileMeta{MimeType: p.InlineData.MIMEType, Name: p.InlineData.DisplayName},
				Bytes: base64.StdEncoding.EncodeToString(p.InlineData.Data)}})
		case p.FileData != nil:
			parts = append(parts, a2a.FilePart{File: a2a.FileURI{FileMeta: a2a.FileMeta{MimeType: p.FileData.MIMEType, Name: p.FileData.DisplayName},
				URI: p.FileData.FileURI}})
		}
	}
	if len(parts) == 0 {
		return nil
	}
	return &a2a.Message{ID: string(t.task) + "-question", Role: a2a.MessageRoleUser, TaskID: t.task, ContextID: t.context, Parts: parts}
}

// fold folds rec's events into the task, and into tr's state; s may be
// nil, to make tr's state only.
func (s *snapshot) fold(tr *translator, rec *agentserver.Record, last bool) {
	for _, ev := range tr.events(rec, last) {
		if s != nil {
			s.apply(ev)
		}
	}
}

// apply folds ev into the task: statuses replace one another, parts join
// their artifact, and text that streamed in pieces is one part again.
func (s *snapshot) apply(ev a2a.Event) {
	switch ev := ev.(type) {
	case *a2a.TaskStatusUpdateEvent:
		s.task.Status = ev.Status
		for k, v := range ev.Metadata {
			if s.task.Metadata == nil {
				s.task.Metadata = map[string]any{}
			}
			s.task.Metadata[k] = v
		}
	case *a2a.TaskArtifactUpdateEvent:
		var art *a2a.Artifact
		for _, a := range s.task.Artifacts {
			if a.ID == ev.Artifact.ID {
				art = a
			}
		}
		if art == nil {
			art = &a2a.Artifact{ID: ev.Artifact.ID, Name: ev.Artifact.Name}
			s.task.Artifacts = append(s.task.Artifacts, art)
		}
		if !ev.Append {
			art.Parts = nil
		}
		for _, p := range ev.Artifact.Parts {
			s.add(art, p)
		}
	}
}

// add appends p to art, joining it to the text part it continues.
func (s *snapshot) add(art *a2a.Artifact, p a2a.Part) {
	if tp, ok := p.(a2a.TextPart); ok && len(art.Parts) > 0 {
		if last, ok := art.Parts[len(art.Parts)-1].(a2a.TextPart); ok && isThought(last) == isThought(tp) {
			last.Text += tp.Text
			art.Parts[len(art.Parts)-1] = last
			return
		}
	}
	art.Parts = append(art.Parts, p)
}

func isThought(p a2a.TextPart) bool {
	b, _ := p.Metadata[metaThought].(bool)
	return b
}
