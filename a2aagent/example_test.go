package a2aagent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"
	a2av1 "github.com/a2aproject/a2a-go/v2/a2a"
	a2aclientv1 "github.com/a2aproject/a2a-go/v2/a2aclient"
	agentcardv1 "github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/toolnexus/toolnexus-go/a2aagent"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// weatherAgent serves an agent with one tool over A2A, as opts say, on a
// model that calls it, then answers.
func weatherAgent(opts *a2aagent.Options) (url string, stop func()) {
	model := fake.NewServer() // in a program: a genai client's Models
	model.SetReplyFunc(func(req *fake.Request) *fake.Reply {
		if rs := req.LastFunctionResponses("get_weather"); len(rs) > 0 {
			return fake.Text(fmt.Sprint("It is ", rs[0].Response["result"], "."))
		}
		return fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"}))
	})
	weather := toolset.MustFunc("get_weather", "The weather in a city", func(ctx context.Context, in struct {
		City string `json:"city"`
	}) (string, error) {
		return "sunny in " + in.City, nil
	})
	a, _ := agent.New(agent.Config{Models: model.Client().Models, Model: "gemini-3-flash-preview", Name: "Weather Desk", Tools: toolset.MustNew(weather)})
	srv, _ := agentserver.New(agentserver.Config{Agent: a})
	mux := http.NewServeMux()
	h := a2aagent.Handler(srv, opts)
	mux.Handle(a2aagent.CardPath, h)
	mux.Handle(a2aagent.DefaultPath, h)
	mux.Handle(a2aagent.DefaultPath+"/", h)
	hs := httptest.NewServer(mux)
	return hs.URL, func() {
		srv.Close(context.Background())
		hs.Close()
		model.Close()
	}
}

// An agent served over A2A, streamed to a2a-go's client: the task, its
// status, the call and its result, the answer, the final status.
func ExampleHandler() {
	url, stop := weatherAgent(nil)
	defer stop()
	ctx := context.Background()
	card, _ := agentcard.DefaultResolver.Resolve(ctx, url)
	client, _ := a2aclient.NewFromCard(ctx, card)
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: "Weather in Paris?"})
	for ev, err := range client.SendStreamingMessage(ctx, &a2a.MessageSendParams{Message: msg}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		switch ev := ev.(type) {
		case *a2a.Task:
			fmt.Println("task", ev.Status.State)
		case *a2a.TaskStatusUpdateEvent:
			fmt.Println("status", ev.Status.State)
		case *a2a.TaskArtifactUpdateEvent:
			for _, p := range ev.Artifact.Parts {
				switch p := p.(type) {
				case a2a.DataPart:
					fmt.Println(p.Metadata["adk_type"], p.Data["name"])
				case a2a.TextPart:
					fmt.Println("text", p.Text)
				}
			}
		}
	}
	// Output:
	// task submitted
	// status working
	// function_call get_weather
	// function_response get_weather
	// text It is sunny in Paris.
	// status completed
}

// A remote A2A agent as a tool: its card names it, and a call hands it
// the request.
func ExampleRemoteTool() {
	url, stop := weatherAgent(nil)
	defer stop()
	ctx := agent.WithConversation(context.Background(), "trip-42") // follow-ups go on with the agent
	desk, err := a2aagent.RemoteTool(ctx, url, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(desk.Name)
	res := desk.Execute(ctx, map[string]any{"request": "Weather in Paris?"})
	fmt.Println(res.Output, res.IsError)
	// Output:
	// weather_desk
	// It is sunny in Paris. false
}

// Push notifications: a 1.0 client sets a webhook in the message that
// starts a task, and the webhook gets the task (a StreamResponse) as its
// state changes, with the config's credentials. The webhook here is on
// loopback, which the handler refuses unless its program allows it.
func ExamplePushOptions() {
	states := make(chan string, 10)
	webhook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n struct{ Task *a2av1.Task }
		json.NewDecoder(r.Body).Decode(&n)
		got := fmt.Sprint(n.Task.Status.State, " (", r.Header.Get("Authorization"), ")")
		if n.Task.Status.State == a2av1.TaskStateCompleted {
			got += ": " + n.Task.Artifacts[len(n.Task.Artifacts)-1].Parts[0].Text()
		}
		states <- got
	}))
	defer webhook.Close()
	url, stop := weatherAgent(&a2aagent.Options{Push: a2aagent.PushOptions{AllowPrivateNetworks: true}})
	defer stop()

	ctx := context.Background()
	card, _ := agentcardv1.DefaultResolver.Resolve(ctx, url)
	client, _ := a2aclientv1.NewFromCard(ctx, card)
	_, err := client.SendMessage(ctx, &a2av1.SendMessageRequest{
		Message: a2av1.NewMessage(a2av1.MessageRoleUser, a2av1.NewTextPart("Weather in Paris?")),
		Config: &a2av1.SendMessageConfig{ReturnImmediately: true, PushConfig: &a2av1.PushConfig{
			URL: webhook.URL, Auth: &a2av1.PushAuthInfo{Scheme: "Bearer", Credentials: "s3cret"}}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(<-states)
	fmt.Println(<-states)
	// Output:
	// TASK_STATE_WORKING (Bearer s3cret)
	// TASK_STATE_COMPLETED (Bearer s3cret): It is sunny in Paris.
}
