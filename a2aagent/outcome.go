package a2aagent

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"
)

// outcome is what a call's stream of events says, as far as it went: the
// task, its status, its artifacts; or the message that answered.
type outcome struct {
	taskID    a2a.TaskID
	contextID string
	state     a2a.TaskState
	status    *a2a.Message
	final     bool
	artifacts []*artifact // in the order they first came
	message   *a2a.Message
}

type artifact struct {
	id    a2a.ArtifactID
	parts []a2a.Part
	// partial marks the ephemeral artifact of ADK's streamed text, which
	// the whole text then replaces in another.
	partial bool
}

// add takes the next event of the stream.
func (o *outcome) add(ev a2a.Event) error {
	if ev == nil {
		return fmt.Errorf("an event of no kind")
	}
	if info := ev.TaskInfo(); info.TaskID != "" {
		if o.taskID != "" && info.TaskID != o.taskID {
			return fmt.Errorf("an event of task %s in the stream of task %s", info.TaskID, o.taskID)
		}
		o.taskID = info.TaskID
	}
	if c := ev.TaskInfo().ContextID; c != "" {
		o.contextID = c
	}
	switch ev := ev.(type) {
	case *a2a.Message:
		o.message, o.state, o.final = ev, a2a.TaskStateCompleted, true
	case *a2a.Task:
		if ev.ID == "" {
			return fmt.Errorf("a task without an id")
		}
		o.artifacts = o.artifacts[:0]
		for _, a := range ev.Artifacts {
			if a != nil {
				o.artifacts = append(o.artifacts, &artifact{id: a.ID, parts: a.Parts, partial: isPartial(a.Metadata)})
			}
		}
		o.setStatus(ev.Status, false)
	case *a2a.TaskStatusUpdateEvent:
		o.setStatus(ev.Status, ev.Final)
	case *a2a.TaskArtifactUpdateEvent:
		if ev.Artifact == nil {
			return fmt.Errorf("an artifact-update without its artifact")
		}
		var art *artifact
		for _, a := range o.artifacts {
			if a.id == ev.Artifact.ID {
				art = a
			}
		}
		if art == nil {
			art = &artifact{id: ev.Artifact.ID}
			o.artifacts = append(o.artifacts, art)
		}
		if !ev.Append {
			art.parts = nil
		}
		art.parts = append(art.parts, ev.Artifact.Parts...)
		art.partial = isPartial(ev.Metadata) || isPartial(ev.Artifact.Metadata)
	}
	return nil
}

func (o *outcome) setStatus(s a2a.TaskStatus, final bool) {
	o.state, o.status = s.State, s.Message
	o.final = final || s.State.Terminal() || s.State == a2a.TaskStateInputRequired || s.State == a2a.TaskStateAuthRequired
}

func isPartial(meta map[string]any) bool {
	b, _ := meta[metaPartial].(bool)
	return b
}

// answer returns the parts of the answer: the message's, or those of the
// last artifact after its last function call or response (an agent's
// last turn: adk-python reads the last artifact too).
func (o *outcome) answer() []a2a.Part {
	if o.message != nil {
		return o.message.Parts
	}
	for i := len(o.artifacts) - 1; i >= 0; i-- {
		a := o.artifacts[i]
		if a.partial || len(a.parts) == 0 {
			continue
		}
		parts := a.parts
		for j := len(parts) - 1; j >= 0; j-- {
			if isFunctionPart(parts[j]) {
				parts = parts[j+1:]
				break
			}
		}
		return parts
	}
	return nil
}

func isFunctionPart(p a2a.Part) bool {
	dp, ok := p.(a2a.DataPart)
	if !ok {
		return false
	}
	t, _ := dp.Metadata[metaType].(string)
	return t == typeFunctionCall || t == typeFunctionResponse
}

// text returns the answer's text, thoughts left out: the status message's
// when the answer has none.
func (o *outcome) text() string {
	if t := textOf(o.answer()); t != "" {
		return t
	}
	return o.statusText()
}

// data returns the answer's first data part, the value it wraps when it
// is marked so.
func (o *outcome) data() (any, bool) {
	for _, p := range o.answer() {
		if dp, ok := p.(a2a.DataPart); ok && !isFunctionPart(dp) {
			if compat, _ := dp.Metadata[metaDataCompat].(bool); compat {
				if v, ok := dp.Data["value"]; ok {
					return v, true
				}
			}
			return dp.Data, true
		}
	}
	return nil, false
}

// statusText returns the text of the status message.
func (o *outcome) statusText() string {
	if o.status == nil {
		return ""
	}
	return textOf(o.status.Parts)
}

func textOf(parts []a2a.Part) string {
	var b strings.Builder
	for _, p := range parts {
		if tp, ok := p.(a2a.TextPart); ok && !isThought(tp) {
			b.WriteString(tp.Text) // pieces of streamed text join as they came
		}
	}
	return strings.TrimSpace(b.String())
}

// waiting is a remote task that waits for input: the calls its status
// lists, which the conversation's next call answers.
type waiting struct {
	task  a2a.TaskID
	calls []waitingCall
}

type waitingCall struct {
	id, name string // the function call the answer names
	call     string // the call it is about, and its args
	args     any
	// confirmation is set for ADK's request to confirm call, answered
	// {"confirmed": bool}; a long-running call of another name is answered
	// {"result": the request}.
	confirmation bool
}

// waiting reads the status of a task that waits for input.
func (o *outcome) waiting() *waiting {
	w := &waiting{task: o.taskID}
	if o.status == nil {
		return w
	}
	for _, p := range o.status.Parts {
		dp, ok := p.(a2a.DataPart)
		if !ok {
			continue
		}
		if t, _ := dp.Metadata[metaType].(string); t != typeFunctionCall {
			continue
		}
		id, _ := dp.Data["id"].(string)
		name, _ := dp.Data["name"].(string)
		if id == "" || name == "" {
			continue
		}
		c := waitingCall{id: id, name: name, call: name, args: dp.Data["args"]}
		if name == confirmationName {
			c.confirmation = true
			if args, ok := dp.Data["args"].(map[string]any); ok {
				if orig, ok := args["originalFunctionCall"].(map[string]any); ok {
					c.call, _ = orig["name"].(string)
					c.args = orig["args"]
				}
			}
		}
		w.calls = append(w.calls, c)
	}
	return w
}

func (w *waiting) confirmations() int {
	n := 0
	for _, c := range w.calls {
		if c.confirmation {
			n++
		}
	}
	return n
}

// callList names the calls that wait for approval.
func (w *waiting) callList() string {
	var names []string
	for _, c := range w.calls {
		if c.confirmation {
			b, _ := json.Marshal(c.args)
			names = append(names, c.call+" "+string(b))
		}
	}
	return strings.Join(names, ", ")
}
