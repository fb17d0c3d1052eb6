package main

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/a2aagent"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/examples/internal/demotools"
	"github.com/toolnexus/toolnexus-go/internal/offline"
	"google.golang.org/genai"
)

// demoAgent serves the demo tools' agent over A2A, on the offline model,
// as examples/server does: get_weather needs approval.
func demoAgent(t *testing.T) string {
	t.Helper()
	url, _ := demoAgentPaths(t)
	return url
}

// demoAgentPaths is demoAgent, and the paths of the requests it was sent
// so far, but the card's.
func demoAgentPaths(t *testing.T) (string, func() []string) {
	t.Helper()
	model := offline.NewServer()
	client, err := genai.NewClient(context.Background(), model.ClientConfig())
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Config{Models: client.Models, Model: offline.ModelName, Tools: demotools.New(fixedClock),
		NeedsApproval: func(c *genai.FunctionCall) bool { return c.Name == "get_weather" }})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := agentserver.New(agentserver.Config{Agent: a, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	h := a2aagent.Handler(srv, &a2aagent.Options{Name: "demo agent"})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if r.URL.Path != a2aagent.CardPath && !slices.Contains(seen, r.URL.Path) {
			seen = append(seen, r.URL.Path)
		}
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Close(ctx)
		hs.Close()
		model.Close()
	})
	return hs.URL, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

// With -a2a, the remote agent is a tool: the offline model hands it the
// question that names it, relays its request for approval, and hands it
// the answer, in A2A 1.0, which the agent's card lists first.
func TestA2ARemoteAgent(t *testing.T) {
	url, paths := demoAgentPaths(t)
	out := chatOutput(t, options{a2a: []string{url}}, "Ask the demo agent: what is the weather in Paris?\nyes\n/tools\n")
	for _, want := range []string{
		`A2A agent "` + url + `": tool demo_agent.`,
		`→ demo_agent {"request":"Ask the demo agent: what is the weather in Paris?"}`,
		`demo_agent asks: get_weather {"city":"Paris"} needs approval; it is refused if nobody decides by`,
		`→ demo_agent {"approve":true,"request":"yes"}`,
		"demo_agent says: Paris: heavy rain, 3°C, humidity 53%, wind 45 km/h.",
		"[A2A " + url + "]",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if got := paths(); !slices.Equal(got, []string{"/a2a/v1"}) {
		t.Errorf("the chat's requests went to %v, want 1.0's JSON-RPC, /a2a/v1", got)
	}
	// name= names the tool.
	out = chatOutput(t, options{a2a: []string{"desk=" + url}}, "/tools\n")
	if !strings.Contains(out, `A2A agent "desk=`+url+`": tool desk.`) {
		t.Errorf("output:\n%s", out)
	}
}

func TestA2AErrors(t *testing.T) {
	url := demoAgent(t)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + ln.Addr().String()
	ln.Close()
	for _, tc := range []struct {
		name string
		spec string
		want string
	}{
		{"not a URL", "localhost:8080", `-a2a "localhost:8080": not an http:// or https:// URL`},
		{"no agent there", dead, `-a2a "` + dead + `": a2aagent: the agent card at ` + dead},
		{"a taken name", "get_weather=" + url, `its tool get_weather has the name of another tool (built in)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(context.Background(), options{a2a: []string{tc.spec}, clock: fixedClock}, strings.NewReader(""), &strings.Builder{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("run() = %v, want %q", err, tc.want)
			}
		})
	}
}

// -a2a in the page (-web): a thread of the page is one conversation with
// the remote agent, whose question the next message of the thread
// answers.
func TestA2AWeb(t *testing.T) {
	base := startWeb(t, options{a2a: []string{demoAgent(t)}})
	stream := ask(t, base, "t1", "Ask the demo agent: what is the weather in Paris?")
	if !strings.Contains(stream, `"toolName":"demo_agent"`) || !strings.Contains(stream, `"output":{"state":"input-required","question":"get_weather {\"city\":\"Paris\"} needs approval`) {
		t.Fatalf("the first stream:\n%s", stream)
	}
	stream = ask(t, base, "t1", "yes")
	if !strings.Contains(stream, `"input":{"approve":true,"request":"yes"}`) || !strings.Contains(stream, `"output":"Paris: heavy rain, 3°C`) {
		t.Errorf("the answer's stream:\n%s", stream)
	}
	// Another thread is another remote conversation: nothing waits there.
	stream = ask(t, base, "t2", "yes")
	if strings.Contains(stream, "demo_agent") {
		t.Errorf("another thread answered the first one's question:\n%s", stream)
	}
}

// -a2a on the Interactions API (-api interactions): the same delegation.
func TestA2AInteractions(t *testing.T) {
	url := demoAgent(t)
	out := chatOutput(t, options{a2a: []string{url}, api: "interactions"}, "Ask the demo agent: what is the weather in Paris?\nyes\n")
	for _, want := range []string{
		`demo_agent asks: get_weather {"city":"Paris"} needs approval`,
		`→ demo_agent {"approve":true,"request":"yes"}`,
		"demo_agent says: Paris: heavy rain, 3°C, humidity 53%, wind 45 km/h.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
