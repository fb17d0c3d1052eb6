package a2aagent_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/a2aagent"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
)

// An A2A context is a thread: the server's quotas refuse a new context
// (thread_quota) and any task of a user whose threads are full
// (storage_quota) with HTTP 429, a JSON-RPC server error whose data says
// the code; so does 1.0, over both bindings.
func TestQuotas(t *testing.T) {
	for _, tc := range []struct {
		name   string
		config func(*agentserver.Config)
		second string // the second message's context
		code   string
	}{
		{"threads", func(c *agentserver.Config) { c.MaxThreadsPerUser = 1 }, "ctx2", "thread_quota"},
		{"bytes", func(c *agentserver.Config) { c.MaxBytesPerUser = 10 }, "ctx1", "storage_quota"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model := fake.NewServer()
			defer model.Close()
			a, err := agent.New(agent.Config{Models: model.Client().Models, Model: "gemini-3-flash-preview"})
			if err != nil {
				t.Fatal(err)
			}
			cfg := agentserver.Config{Agent: a, Logger: slog.New(slog.DiscardHandler)}
			tc.config(&cfg)
			srv, err := agentserver.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close(context.Background())
			hs := httptest.NewServer(a2aagent.Handler(srv, nil))
			defer hs.Close()
			send := func(contextID string) (int, map[string]any) {
				t.Helper()
				body := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"messageId":"m","role":"user","contextId":"` +
					contextID + `","parts":[{"kind":"text","text":"hi"}]}}}`
				resp, err := http.Post(hs.URL+a2aagent.DefaultPath, "application/json", strings.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				var m map[string]any
				if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
					t.Fatal(err)
				}
				return resp.StatusCode, m
			}
			model.Enqueue(fake.Text("Hello."))
			if status, m := send("ctx1"); status != 200 || m["result"] == nil {
				t.Fatalf("the first message: %d %s", status, jsonOf(m))
			}
			status, m := send(tc.second)
			e, _ := m["error"].(map[string]any)
			data, _ := e["data"].(map[string]any)
			if status != 429 || e["code"] != -32000.0 || data["code"] != tc.code {
				t.Errorf("the second message: %d %s; want 429, a server error (-32000) of data.code %s", status, jsonOf(m), tc.code)
			}
			// 1.0, over JSON-RPC and HTTP+JSON: the same refusal, of the same status.
			msg := `{"messageId":"m","role":"ROLE_USER","contextId":"` + tc.second + `","parts":[{"text":"hi"}]}`
			for _, v1 := range []struct{ path, body, want string }{
				{a2aagent.DefaultPath + "/v1", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":` + msg + `}}`, `"code":-32000`},
				{a2aagent.DefaultPath + "/v1/rest/message:send", `{"message":` + msg + `}`, `"status":"RESOURCE_EXHAUSTED"`},
			} {
				resp, err := http.Post(hs.URL+v1.path, "application/json", strings.NewReader(v1.body))
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 429 || !strings.Contains(string(b), v1.want) || !strings.Contains(string(b), tc.code) {
					t.Errorf("1.0 at %s: %d %s; want 429, %s and %s", v1.path, resp.StatusCode, b, v1.want, tc.code)
				}
			}
		})
	}
}
