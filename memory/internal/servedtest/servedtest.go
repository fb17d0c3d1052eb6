// Package servedtest checks that an agent served by package agentserver
// remembers what a user said in one thread when asked in another, through
// the AI SDK's route, on a given session store and memory store: the
// test of memory's stores shares it.
package servedtest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/agentserver/aisdk"
	"github.com/toolnexus/toolnexus-go/geminitest"
	"github.com/toolnexus/toolnexus-go/memory"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

var (
	told   = regexp.MustCompile(`My favourite dish is (\w+)`)
	recall = regexp.MustCompile(`(?s)` + regexp.QuoteMeta(memory.MemoriesPrefix) + `.*favourite dish is (\w+)`)
)

// model is the fake model's answers: it acknowledges what it is told, and
// answers the question from the memories the request holds, or says it
// does not know.
func model(req *geminitest.Request) *geminitest.Reply {
	var all strings.Builder
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			all.WriteString(p.Text + "\n")
		}
	}
	question := req.Text()
	switch {
	case told.MatchString(question):
		return geminitest.Text("Noted!")
	case strings.Contains(question, "favourite dish"):
		if m := recall.FindStringSubmatch(all.String()); m != nil {
			return geminitest.Text("Your favourite dish is " + m[1] + ".")
		}
		return geminitest.Text("I don't know your favourite dish.")
	}
	return geminitest.Text("Hello.")
}

// RememberAcrossThreads serves an agent that preloads memories and
// remembers each saved run, on sessions and the memory service svc, and
// checks that a fact a user told in one thread is known in another of
// theirs, and not to another user.
func RememberAcrossThreads(t *testing.T, sessions session.Store, svc *memory.Service) {
	t.Helper()
	srv := geminitest.Start(t)
	srv.SetReplyFunc(model)
	search, err := svc.Tool(memory.ToolOptions{User: agentserver.RunUser})
	if err != nil {
		t.Fatal(err)
	}
	pre := &memory.Preload{Service: svc, User: agentserver.RunUser}
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: "gemini-3-flash-preview",
		Tools: toolset.MustNew(search), PrepareHistory: pre.Prepare})
	if err != nil {
		t.Fatal(err)
	}
	server, err := agentserver.New(agentserver.Config{Agent: a, Store: sessions, Remember: svc.RememberRun,
		Logger: slog.New(slog.DiscardHandler),
		Authenticate: func(r *http.Request) (string, error) {
			if u := r.Header.Get("X-User"); u != "" {
				return u, nil
			}
			return "", errors.New("who are you?")
		}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/api/chat", aisdk.Handler(server))
	mux.Handle("/api/chat/", aisdk.Handler(server))
	hs := httptest.NewServer(mux)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		server.Close(ctx)
		hs.Close()
	})
	say := func(user, thread, text string) string {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"id": thread, "trigger": "submit-message", "messages": []any{
			map[string]any{"id": "m-" + thread, "role": "user", "parts": []any{map[string]any{"type": "text", "text": text}}}}})
		req, _ := http.NewRequest(http.MethodPost, hs.URL+"/api/chat", strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-User", user)
		resp, err := hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST /api/chat as %s: %d", user, resp.StatusCode)
		}
		var answer strings.Builder
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok || data == "[DONE]" {
				continue
			}
			var c struct{ Type, Delta, ErrorText string }
			json.Unmarshal([]byte(data), &c)
			switch c.Type {
			case "text-delta":
				answer.WriteString(c.Delta)
			case "error":
				t.Fatalf("the run failed: %s", c.ErrorText)
			}
		}
		return answer.String()
	}
	if got := say("alice", "monday", "My favourite dish is bacalhau, remember it."); got != "Noted!" {
		t.Fatalf("first thread answered %q", got)
	}
	if got := say("alice", "friday", "What is my favourite dish?"); got != "Your favourite dish is bacalhau." {
		t.Errorf("another thread of alice's answered %q; want it to remember", got)
	}
	if got := say("bob", "friday", "What is my favourite dish?"); strings.Contains(got, "bacalhau") {
		t.Errorf("bob's thread answered %q: alice's memory reached bob", got)
	}
	// The memories are the user's own, with where they were said.
	res, err := svc.Search(context.Background(), "alice", "favourite dish", &memory.SearchOptions{ExcludeThread: "friday"})
	if err != nil || len(res) == 0 || res[0].Thread != "monday" || res[0].Message != 0 || res[0].Author != "user" {
		t.Errorf("alice's memories: %+v, %v", res, err)
	}
	srv.AssertComplete(t)
}

// Contents is a thread with one user message, for stores' tests.
func Contents(text string) []*genai.Content {
	return []*genai.Content{genai.NewContentFromText(text, genai.RoleUser)}
}
