package a2aagent

import (
	"encoding/json"
	"testing"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"google.golang.org/genai"
)

// A task's history holds the question that started it: its text and
// files, thoughts left out; no question, no history.
func TestQuestionInHistory(t *testing.T) {
	info := agentserver.RunInfo{ID: "run_Q", Thread: "ctx-q", Message: &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{
		genai.NewPartFromText("What is in these?"),
		{Text: "a thought", Thought: true},
		{InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte("png"), DisplayName: "a.png"}},
		{FileData: &genai.FileData{MIMEType: "application/pdf", FileURI: "gs://files/alice/b.pdf"}},
		nil,
	}}}
	snap := newSnapshot(newTranslator(fileSource{}, info), info)
	got, _ := json.Marshal(snap.task.History)
	want := `[{"kind":"message","messageId":"run_Q-question","contextId":"ctx-q","parts":[` +
		`{"kind":"text","text":"What is in these?"},` +
		`{"kind":"file","file":{"mimeType":"image/png","name":"a.png","bytes":"cG5n"}},` +
		`{"kind":"file","file":{"mimeType":"application/pdf","uri":"gs://files/alice/b.pdf"}}],` +
		`"role":"user","taskId":"run_Q"}]`
	if string(got) != want {
		t.Errorf("history\n got %s\nwant %s", got, want)
	}
	for _, m := range []*genai.Content{nil, {Role: genai.RoleUser}, {Role: genai.RoleUser, Parts: []*genai.Part{{Text: "x", Thought: true}}}} {
		info.Message = m
		if h := newSnapshot(newTranslator(fileSource{}, info), info).task.History; h != nil {
			t.Errorf("the history of a run whose message is %+v: %+v", m, h)
		}
	}
}
