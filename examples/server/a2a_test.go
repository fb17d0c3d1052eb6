package main

import (
	"context"
	"github.com/toolnexus/toolnexus-go/examples/server/serverapp"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
)

// A2A 1.0, as a2a-go/v2's client speaks it over each binding the card
// lists: the card's interfaces (1.0 first) and push notifications, a
// streamed task that waits for approval, the decision, and ListTasks.
func TestServerA2AV1(t *testing.T) {
	url := start(t, options{Options: serverapp.Options{Approve: true}})
	ctx := context.Background()
	defer http.DefaultClient.CloseIdleConnections()
	card, err := agentcard.DefaultResolver.Resolve(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, i := range card.SupportedInterfaces {
		got = append(got, string(i.ProtocolBinding)+" "+string(i.ProtocolVersion)+" "+strings.TrimPrefix(i.URL, url))
	}
	if strings.Join(got, ", ") != "JSONRPC 1.0 /a2a/v1, HTTP+JSON 1.0 /a2a/v1/rest, JSONRPC 0.3 /a2a" || !card.Capabilities.PushNotifications || !card.Capabilities.Streaming {
		t.Errorf("card interfaces %v, capabilities %+v", got, card.Capabilities)
	}
	for _, binding := range []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON} {
		t.Run(string(binding), func(t *testing.T) {
			c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithDefaultsDisabled(), a2aclient.WithJSONRPCTransport(http.DefaultClient),
				a2aclient.WithRESTTransport(http.DefaultClient), a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{binding}}))
			if err != nil {
				t.Fatal(err)
			}
			var last *a2a.TaskStatusUpdateEvent
			for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("What is the weather in Paris?"))}) {
				if err != nil {
					t.Fatal(err)
				}
				if st, ok := ev.(*a2a.TaskStatusUpdateEvent); ok {
					last = st
				}
			}
			if last == nil || last.Status.State != a2a.TaskStateInputRequired || len(last.Status.Message.Parts) != 2 {
				t.Fatalf("the stream ended with %+v", last)
			}
			call, _ := last.Status.Message.Parts[1].Data().(map[string]any)
			yes := a2a.NewDataPart(map[string]any{"id": call["id"], "name": "adk_request_confirmation", "response": map[string]any{"confirmed": true}})
			yes.Metadata = map[string]any{"adk_type": "function_response"}
			m := a2a.NewMessage(a2a.MessageRoleUser, yes)
			m.TaskID, m.ContextID = last.TaskID, last.ContextID
			res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: m})
			if err != nil {
				t.Fatal(err)
			}
			task, _ := res.(*a2a.Task)
			if task == nil || task.Status.State != a2a.TaskStateCompleted || !strings.Contains(task.Artifacts[len(task.Artifacts)-1].Parts[0].Text(), "Paris: ") {
				t.Fatalf("after the approval: %+v", res)
			}
			list, err := c.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: task.ContextID})
			if err != nil || len(list.Tasks) != 1 || list.Tasks[0].ID != task.ID {
				t.Errorf("ListTasks: %+v, %v", list, err)
			}
		})
	}
}
