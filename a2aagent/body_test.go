package a2aagent_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/a2aagent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/bodytimeout/bodytimeouttest"
	"github.com/toolnexus/toolnexus-go/internal/fake"
)

const bodyTimeout = 50 * time.Millisecond

// A client that sends part of its JSON-RPC request and stalls is answered
// 408 (an invalid request) and its connection closed, once the server's
// Config.BodyTimeout has passed; a task's stream that lasts longer than
// that is not cut.
func TestSlowBody(t *testing.T) {
	l := newLocal(t, nil, false, func(c *agentserver.Config) { c.BodyTimeout = bodyTimeout; c.MaxBodyBytes = 2 << 20 })
	resp, body := bodytimeouttest.Stall(t, l.http.Listener.Addr().String(), "POST", a2aagent.DefaultPath,
		http.Header{"Authorization": {"Bearer alice"}}, `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{`)
	var m map[string]any
	json.Unmarshal(body, &m)
	if code, _ := rpcErrorOf(m); resp.StatusCode != 408 || code != -32600 {
		t.Errorf("%d %s, want 408 and an invalid request", resp.StatusCode, body)
	}
	// A body refused unread, which net/http drains before it answers.
	if resp, body := bodytimeouttest.Stall(t, l.http.Listener.Addr().String(), "POST", a2aagent.CardPath, nil, `{`); resp.StatusCode != 405 {
		t.Errorf("POST to the card: %d %s, want 405", resp.StatusCode, body)
	}

	l.model.Enqueue(fake.Calls(fake.Call("wait", nil)), fake.Text("Done."))
	got := make(chan []map[string]any)
	go func() {
		got <- l.events(`{"jsonrpc":"2.0","id":1,"method":"message/stream","params":{"message":{"messageId":"m","role":"user","parts":[{"kind":"text","text":"wait"}]}}}`)
	}()
	for len(l.model.Requests()) == 0 { // the run has started: its tool waits
		time.Sleep(time.Millisecond)
	}
	time.Sleep(4 * bodyTimeout) // the stream outlives the body's deadline
	close(l.gate)
	events := <-got
	if last := events[len(events)-1]; last["final"] != true || last["status"].(map[string]any)["state"] != "completed" {
		t.Errorf("the stream that outlived the body's deadline ended with %s", jsonOf(last))
	}
}
