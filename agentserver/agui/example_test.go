package agui_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/agentserver/agui"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// An agent served over AG-UI with a call that needs approval: the run
// ends with an interrupt, and the next request's resume continues it.
func Example() {
	model := fake.NewServer() // in a program: a genai client's Models
	defer model.Close()
	model.Enqueue(fake.Calls(fake.Call("send_email", map[string]any{"to": "bob"})), fake.Text("Sent."))
	send := toolset.MustFunc("send_email", "Sends an email",
		func(ctx context.Context, in struct {
			To string `json:"to"`
		}) (string, error) {
			return "sent to " + in.To, nil
		})
	a, _ := agent.New(agent.Config{Models: model.Client().Models, Model: "gemini-3-flash-preview", Tools: toolset.MustNew(send),
		NeedsApproval: func(*genai.FunctionCall) bool { return true }})
	srv, _ := agentserver.New(agentserver.Config{Agent: a})
	defer srv.Close(context.Background())
	hs := httptest.NewServer(agui.Handler(srv))
	defer hs.Close()

	run := func(body string) (events []map[string]any) {
		resp, err := http.Post(hs.URL, "application/json", strings.NewReader(body))
		if err != nil {
			fmt.Println(err)
			return nil
		}
		defer resp.Body.Close()
		var types []string
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var ev map[string]any
				json.Unmarshal([]byte(data), &ev)
				events = append(events, ev)
				types = append(types, ev["type"].(string))
			}
		}
		fmt.Println(strings.Join(types, " "))
		return events
	}
	messages := `[{"id":"u1","role":"user","content":"Email bob"}]`
	events := run(`{"threadId":"t1","runId":"r1","messages":` + messages + `}`)
	interrupt := events[len(events)-1]["outcome"].(map[string]any)["interrupts"].([]any)[0].(map[string]any)
	run(`{"threadId":"t1","runId":"r2","messages":[],"resume":[{"interruptId":"` + interrupt["id"].(string) +
		`","status":"resolved","payload":{"approved":true}}]}`)
	// Output:
	// RUN_STARTED STEP_STARTED TOOL_CALL_START TOOL_CALL_ARGS TOOL_CALL_END STEP_FINISHED RUN_FINISHED
	// RUN_STARTED STEP_STARTED TOOL_CALL_RESULT STEP_FINISHED STEP_STARTED TEXT_MESSAGE_START TEXT_MESSAGE_CONTENT TEXT_MESSAGE_END STEP_FINISHED RUN_FINISHED
}
