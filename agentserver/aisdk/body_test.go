package aisdk_test

import (
	"bufio"
	"strings"
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
// connection closed, once Config.BodyTimeout has passed; streams that
// last longer than that, the run's and a resumed one (a GET, which has no
// body), are not cut.
func TestSlowBody(t *testing.T) {
	e := newEnv(t, nil, shortBodyTimeout)
	resp, body := bodytimeouttest.Stall(t, e.HTTP.Listener.Addr().String(), "POST", "/api/chat", nil, `{"id":"c1","messages":[`)
	if resp.StatusCode != 408 || servertest.ErrorCode(string(body)) != "body_timeout" {
		t.Errorf("%d %s, want 408 body_timeout", resp.StatusCode, body)
	}
	// A body refused unread, which net/http drains before it answers.
	if resp, body := bodytimeouttest.Stall(t, e.HTTP.Listener.Addr().String(), "PUT", "/api/chat", nil, `{`); resp.StatusCode != 405 {
		t.Errorf("PUT: %d %s, want 405", resp.StatusCode, body)
	}

	e.Model.Enqueue(fake.Calls(servertest.Call("Gate")), fake.Text("Done."))
	got := make(chan *reply)
	go func() { got <- e.chat(map[string]any{"id": "c1", "messages": []any{userMessage("u1", "Gate?")}}) }()
	<-e.Started
	resumed, err := e.HTTP.Client().Get(e.HTTP.URL + "/api/chat/c1/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resumed.Body.Close()
	br := bufio.NewReader(resumed.Body)
	var frames []string
	read := func(until string) {
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("the resumed stream ended before %q: %v (%q)", until, err, frames)
			}
			if data, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "data: "); ok {
				frames = append(frames, data)
				if strings.Contains(data, until) {
					return
				}
			}
		}
	}
	read("tool-input-available")
	time.Sleep(4 * bodyTimeout) // both streams outlive the body's deadline
	close(e.Gate)
	read("[DONE]")
	if r := <-got; r.frames[len(r.frames)-1] != "[DONE]" || r.chunks[len(r.chunks)-1]["type"] != "finish" {
		t.Errorf("the stream that outlived the body's deadline: %v", r.types())
	}
}
