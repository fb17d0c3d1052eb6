package a2aagent_test

// The conversations RemoteTool keeps with a remote agent: one remote
// context per conversation of ours and user, calls of one conversation
// never overlapping, whatever the bound on those it remembers.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolnexus/toolnexus-go/a2aagent"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// memTransport serves requests with a handler of this process through
// pipes rather than sockets, so that a synctest bubble sees every wait.
type memTransport struct{ h http.Handler }

func (t memTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	pr, pw := io.Pipe()
	w := &pipeResponse{header: http.Header{}, body: pw, wrote: make(chan struct{})}
	go func() {
		t.h.ServeHTTP(w, req)
		w.WriteHeader(http.StatusOK)
		pw.Close()
	}()
	<-w.wrote
	return &http.Response{StatusCode: w.status, Status: http.StatusText(w.status), Header: w.sent, Body: pr, Request: req,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, ContentLength: -1}, nil
}

// pipeResponse is a ResponseWriter whose body is a pipe's writing end.
type pipeResponse struct {
	header, sent http.Header
	status       int
	body         *io.PipeWriter
	once         sync.Once
	wrote        chan struct{} // closed once the header is sent
}

func (w *pipeResponse) Header() http.Header { return w.header }
func (w *pipeResponse) WriteHeader(code int) {
	w.once.Do(func() {
		w.status, w.sent = code, w.header.Clone()
		close(w.wrote)
	})
}
func (w *pipeResponse) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(p)
}
func (w *pipeResponse) Flush() {}

// remoteDesk is a remote A2A agent that answers each message "done
// <text>" in a context of its own naming ("ctx-N" for a message without
// one), holding every request at a gate the test opens. It keeps, for
// each conversation of the caller (the first word of the message's
// text), the contextIds it received and gave, and the times two of its
// requests were in flight at once.
type remoteDesk struct {
	mu       sync.Mutex
	gate     chan struct{}
	held     int
	contexts int
	inFlight map[string]int
	overlaps []string
	received map[string][]string // conversation -> contextId of each request ("" for none)
	given    map[string][]string // conversation -> contextId of each answer
}

func newRemoteDesk() *remoteDesk {
	return &remoteDesk{gate: make(chan struct{}), inFlight: map[string]int{}, received: map[string][]string{}, given: map[string][]string{}}
}

// release lets every request held go on, and reports how many there were.
func (d *remoteDesk) release() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := d.held
	close(d.gate)
	d.gate, d.held = make(chan struct{}), 0
	return n
}

func (d *remoteDesk) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == a2aagent.CardPath {
		io.WriteString(w, `{"name":"Desk","description":"answers","url":"http://desk.test/a2a","version":"1","protocolVersion":"0.3.0",`+
			`"capabilities":{"streaming":true},"skills":[],"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"preferredTransport":"JSONRPC"}`)
		return
	}
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Message struct {
				ContextID string `json:"contextId"`
				Parts     []struct {
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"message"`
		} `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Method != "message/stream" || len(req.Params.Message.Parts) != 1 {
		http.Error(w, "unexpected request", http.StatusBadRequest)
		return
	}
	text := req.Params.Message.Parts[0].Text
	conv, _, _ := strings.Cut(text, " ")
	d.mu.Lock()
	d.inFlight[conv]++
	if d.inFlight[conv] > 1 {
		d.overlaps = append(d.overlaps, text)
	}
	contextID := req.Params.Message.ContextID
	d.received[conv] = append(d.received[conv], contextID)
	if contextID == "" {
		d.contexts++
		contextID = fmt.Sprintf("ctx-%d", d.contexts)
	}
	d.given[conv] = append(d.given[conv], contextID)
	task := fmt.Sprintf("task-%s", strings.ReplaceAll(text, " ", "-"))
	gate := d.gate
	d.held++
	d.mu.Unlock()

	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"kind\":\"task\",\"id\":%q,\"contextId\":%q,\"status\":{\"state\":\"submitted\"}}}\n\n",
		req.ID, task, contextID)
	select {
	case <-gate:
	case <-r.Context().Done():
	}
	d.mu.Lock()
	d.inFlight[conv]--
	d.mu.Unlock()
	fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"kind\":\"status-update\",\"taskId\":%q,\"contextId\":%q,\"final\":true,"+
		"\"status\":{\"state\":\"completed\",\"message\":{\"kind\":\"message\",\"messageId\":\"m\",\"role\":\"agent\",\"parts\":[{\"kind\":\"text\",\"text\":%q}]}}}}\n\n",
		req.ID, task, contextID, "done "+text)
}

// With room for one conversation only, calls of three conversations, each
// started while the others' are in flight (so that every new one would
// evict the others), are never sent two of one conversation at once, and
// each conversation keeps one remote context: its first call's, which
// every later call sends.
func TestRemoteToolConversationsUnderEviction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		desk := newRemoteDesk()
		tool, err := a2aagent.RemoteTool(t.Context(), "http://desk.test",
			&a2aagent.RemoteOptions{HTTPClient: &http.Client{Transport: memTransport{desk}}, MaxConversations: 1})
		if err != nil {
			t.Fatal(err)
		}
		convs := []string{"a", "b", "c"}
		const callsEach = 3
		var wg sync.WaitGroup
		results := make(chan string, len(convs)*callsEach)
		for i := range callsEach {
			for _, conv := range convs {
				text := fmt.Sprintf("%s %d", conv, i+1)
				wg.Go(func() {
					// Run rather than Execute: Execute pools what it
					// makes, and a bubble's channel must not outlive it.
					out, err := tool.Run(agent.WithConversation(t.Context(), conv), map[string]any{"request": text})
					if err != nil || out != "done "+text {
						t.Errorf("%s: %v, %v", text, out, err)
					}
					results <- text
				})
				synctest.Wait() // the call is at the desk, or waits for its conversation
			}
		}
		for done := 0; done < len(convs)*callsEach; {
			synctest.Wait()
			if desk.release() == 0 && len(results) == 0 {
				t.Fatalf("%d calls of %d are done, and none is at the desk", done, len(convs)*callsEach)
			}
			synctest.Wait()
			for len(results) > 0 {
				<-results
				done++
			}
		}
		wg.Wait()

		if len(desk.overlaps) > 0 {
			t.Errorf("calls of one conversation overlapped at the desk: %q", desk.overlaps)
		}
		for _, conv := range convs {
			given, received := desk.given[conv], desk.received[conv]
			if len(given) != callsEach {
				t.Errorf("conversation %s: %d calls reached the desk; want %d", conv, len(given), callsEach)
				continue
			}
			for i := range given {
				if given[i] != given[0] || i > 0 && received[i] != given[0] {
					t.Errorf("conversation %s: the desk got the contexts %q and answered in %q; want one context, sent by every call after the first", conv, received, given)
					break
				}
			}
		}
	})
}

// Two users whose threads have the same name have two conversations with
// the remote agent: neither continues the other's remote context, and
// each continues its own.
func TestRemoteToolConversationsPerUser(t *testing.T) {
	desk := newRemoteDesk()
	close(desk.gate) // nothing is held
	tool, err := a2aagent.RemoteTool(context.Background(), "http://desk.test",
		&a2aagent.RemoteOptions{HTTPClient: &http.Client{Transport: memTransport{desk}}})
	if err != nil {
		t.Fatal(err)
	}
	m := fake.NewServer()
	t.Cleanup(m.Close)
	// The model hands the user's message to the desk, then says it did.
	m.SetReplyFunc(func(req *fake.Request) *fake.Reply {
		if len(req.LastFunctionResponses(tool.Name)) > 0 {
			return fake.Text("asked")
		}
		return fake.Calls(fake.Call(tool.Name, map[string]any{"request": req.Text()}))
	})
	a, err := agent.New(agent.Config{Models: m.Client().Models, Model: model, Tools: toolset.MustNew(tool)})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := agentserver.New(agentserver.Config{Agent: a})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(context.Background()) })
	say := func(user, text string) {
		t.Helper()
		att, err := srv.Submit(context.Background(), user, agentserver.Request{Thread: "support", Message: genai.NewContentFromText(text, genai.RoleUser)})
		if err != nil {
			t.Fatal(err)
		}
		defer att.Cursor.Close()
		for {
			rec, _, err := att.Cursor.Next(context.Background(), time.Hour)
			if err != nil {
				t.Fatalf("%s's run: %v", user, err)
			}
			if rec.Kind == agentserver.KindDone {
				if rec.Done.Error != nil || rec.Done.Text != "asked" {
					t.Fatalf("%s's run ended with %+v", user, rec.Done)
				}
				return
			}
		}
	}
	say("alice", "alice 1")
	say("bob", "bob 1")
	say("alice", "alice 2")
	say("bob", "bob 2")
	alice, bob := desk.given["alice"], desk.given["bob"]
	if len(alice) != 2 || len(bob) != 2 {
		t.Fatalf("the desk answered alice in %q and bob in %q; want two calls each", alice, bob)
	}
	if alice[0] == bob[0] {
		t.Errorf("alice and bob share the remote context %s", alice[0])
	}
	if got := desk.received["bob"][0]; got != "" {
		t.Errorf("bob's first call went on with the remote context %q", got)
	}
	if desk.received["alice"][1] != alice[0] || desk.received["bob"][1] != bob[0] {
		t.Errorf("the second calls sent %q and %q; want each user's own %q and %q",
			desk.received["alice"][1], desk.received["bob"][1], alice[0], bob[0])
	}
}
