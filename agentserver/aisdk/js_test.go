package aisdk_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/internal/jstest"
	"google.golang.org/genai"
)

// scriptedModel plays the model for the JavaScript clients' scenarios:
// it calls get_weather for each known city a question names
// (get_location when it asks "where I am"), fails on "fail", and turns
// results into lines such as "Paris: sunny" or "get_weather denied: …".
func scriptedModel(req *fake.Request) *fake.Reply {
	last := req.Contents[len(req.Contents)-1]
	var responses []*genai.FunctionResponse
	var question strings.Builder
	for _, p := range last.Parts {
		if p.FunctionResponse != nil {
			responses = append(responses, p.FunctionResponse)
		}
		question.WriteString(p.Text)
	}
	if len(responses) > 0 {
		var lines []string
		for _, r := range responses {
			if msg, ok := r.Response["error"]; ok {
				lines = append(lines, fmt.Sprintf("%s denied: %v", r.Name, msg))
				continue
			}
			out, _ := r.Response["result"].(map[string]any)
			if r.Name == "get_location" {
				return fake.Calls(call(fmt.Sprint(out["city"])))
			}
			lines = append(lines, fmt.Sprintf("%v: %v", out["city"], out["sky"]))
		}
		return fake.Text(strings.Join(lines, "\n")).WithTextChunk(7)
	}
	q := question.String()
	switch {
	case strings.Contains(q, "fail"):
		return fake.Error(403, "API key AIzaSECRET not valid")
	case strings.Contains(q, "where I am"):
		return fake.Calls(fake.Call("get_location", nil))
	}
	var calls []*genai.FunctionCall
	for _, city := range []string{"Paris", "Tokyo", "Oslo", "Lyon"} {
		if strings.Contains(q, city) {
			calls = append(calls, call(city))
		}
	}
	if len(calls) == 0 {
		return fake.Text("Glad to help.")
	}
	return fake.Calls(calls...)
}

// The AI SDK's own client code (the Chat useChat runs, its transport's
// chunk schema, readUIMessageStream, validateUIMessages) against the
// handler: a run, an approval round trip and a denial, a browser tool
// round trip, a resume after a reload, a failure, a refused regenerate.
func TestOfficialClient(t *testing.T) {
	node := jstest.Node(t)
	e := newEnv(t, func(c *agent.Config) {
		c.NeedsApproval = func(call *genai.FunctionCall) bool { return call.Args["city"] == "Oslo" }
	}, func(c *agentserver.Config) { c.MaxMessages, c.MaxParts = 0, 0 }) // the defaults
	e.model.SetReplyFunc(scriptedModel)
	out := node.Run(t, 2*time.Minute, "aisdk.mjs", "CHAT_URL="+e.http.URL+"/api/chat")
	for _, s := range []string{"run", "raw", "approval", "browserTool", "resume", "failure", "regenerate"} {
		if !strings.Contains(out, "ok "+s+"\n") {
			t.Errorf("scenario %s did not pass:\n%s", s, out)
		}
	}
	threads, err := e.srv.Threads(bg, "local")
	if err != nil || len(threads) != 7 {
		t.Errorf("threads %+v %v, want one per scenario", threads, err)
	}
}
