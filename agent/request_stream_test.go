package agent_test

import (
	"fmt"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
)

// EventModelRequest says whether the call streams: tracing records it as
// gen_ai.request.stream.
func TestModelRequestStream(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			srv := newServer(t)
			log := &eventLog{}
			a := newAgent(t, srv, nil, func(c *agent.Config) { c.Observer = log })
			srv.Enqueue(fake.Error(503, "busy"), fake.Text("hi"))
			if _, err := runOrStream(a, stream, user("hi")); err != nil {
				t.Fatal(err)
			}
			reqs := log.of(agent.EventModelRequest)
			if len(reqs) != 2 {
				t.Fatalf("%d model requests, want 2", len(reqs))
			}
			for _, e := range reqs {
				if e.Stream != stream {
					t.Errorf("attempt %d: Stream = %v, want %v", e.Attempt, e.Stream, stream)
				}
			}
		})
	}
}
