package agui_test

import (
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/agentserver/internal/servertest"
	"github.com/toolnexus/toolnexus-go/internal/bodytimeout/bodytimeouttest"
	"github.com/toolnexus/toolnexus-go/internal/fake"
)

const bodyTimeout = 50 * time.Millisecond

func shortBodyTimeout(c *agentserver.Config) { c.BodyTimeout = bodyTimeout }

// A client that sends part of its body and stalls is answered 408 and its
// connection closed, once Config.BodyTimeout has passed; a stream that
// lasts longer than that is not cut.
func TestSlowBody(t *testing.T) {
	e := newEnv(t, nil, shortBodyTimeout)
	resp, body := bodytimeouttest.Stall(t, e.HTTP.Listener.Addr().String(), "POST", "/agui", nil, `{"threadId":"t1","runId":"r1","messages":[`)
	if resp.StatusCode != 408 || servertest.ErrorCode(string(body)) != "body_timeout" {
		t.Errorf("%d %s, want 408 body_timeout", resp.StatusCode, body)
	}
	// A body refused unread, which net/http drains before it answers.
	if resp, body := bodytimeouttest.Stall(t, e.HTTP.Listener.Addr().String(), "PUT", "/agui", nil, `{`); resp.StatusCode != 405 {
		t.Errorf("PUT: %d %s, want 405", resp.StatusCode, body)
	}

	e.Model.Enqueue(fake.Calls(servertest.Call("Gate")), fake.Text("Done."))
	got := make(chan *reply)
	go func() { got <- e.post("/agui", input("t1", "r1", user("u1", "Gate?"))) }()
	<-e.Started
	time.Sleep(4 * bodyTimeout) // the stream outlives the body's deadline
	close(e.Gate)
	if r := <-got; r.last()["type"] != "RUN_FINISHED" || r.last()["outcome"].(map[string]any)["type"] != "success" {
		t.Errorf("the stream that outlived the body's deadline: %v", r.types())
	}
}
