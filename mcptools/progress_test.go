package mcptools_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/mcptools"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// countingServer is a go-sdk server (not NewServer) whose tool count
// sends n progress notifications for the call's token, then pings the
// client (which answers once it has handled the notifications before
// the ping: go-sdk hands a session's incoming messages to their handlers
// in order) and answers. Without a token, it says so.
func countingServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "counting", Version: "v1"}, nil)
	type in struct {
		N int `json:"n"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "count", Description: "counts to n, reporting each number"},
		func(ctx context.Context, req *mcp.CallToolRequest, args in) (*mcp.CallToolResult, any, error) {
			token := req.Params.GetProgressToken()
			if token == nil {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "no progress token"}}}, nil, nil
			}
			for i := 1; i <= args.N; i++ {
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: token, Progress: float64(i), Total: float64(args.N), Message: fmt.Sprint("number ", i)}); err != nil {
					return nil, nil, err
				}
			}
			if err := req.Session.Ping(ctx, nil); err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint("counted to ", args.N)}}}, nil, nil
		})
	return srv
}

// The progress notifications a server sends for a call become the
// call's progress events in a Stream, and reach the handler of
// ClientOptions too; a call nobody listens to asks for none.
func TestClientReportsServerProgress(t *testing.T) {
	var mu sync.Mutex
	theirs := 0
	c := connect(t, mcptools.InMemory(countingServer()), &mcptools.Options{ClientOptions: &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			theirs++
			mu.Unlock()
		}}})

	if r := call(t, c, "count", map[string]any{"n": 3}); r.Output != "no progress token" {
		t.Errorf("a call nobody listens to: %v; want no progress token asked", r.Output)
	}

	srv := newFake(t)
	srv.Enqueue(fake.Calls(fake.Call("count", map[string]any{"n": 5})), fake.Text("done"))
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: "gemini-3-flash-preview",
		Tools: toolset.MustNew(c.Tools()...), ProgressInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	var got []toolset.Progress
	resulted := false
	for e, err := range a.Stream(t.Context(), []*genai.Content{genai.NewContentFromText("count to 5", genai.RoleUser)}) {
		if err != nil {
			t.Fatal(err)
		}
		switch e.Kind {
		case agent.EventToolProgress:
			if resulted {
				t.Errorf("progress %+v after the result", e.Progress)
			}
			got = append(got, *e.Progress)
		case agent.EventToolResult:
			resulted = true
			if e.ToolResult.Output != "counted to 5" {
				t.Errorf("result = %v", e.ToolResult.Output)
			}
		}
	}
	// Coalesced while the consumer was busy, maybe; the last always.
	if len(got) == 0 || fmt.Sprint(got[len(got)-1]) != "{5 5 number 5}" {
		t.Fatalf("progress events = %v; want the server's notifications, ending with 5 of 5", got)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Done <= got[i-1].Done {
			t.Errorf("progress events out of order: %v", got)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if theirs != 5 {
		t.Errorf("ClientOptions.ProgressNotificationHandler saw %d notifications; want 5", theirs)
	}
}

// progressSet is a set of one tool, steps, that reports three increasing
// steps, waiting the server's interval between two, so that each is sent
// as it is made.
func progressSet() *toolset.Set {
	return toolset.MustNew(toolset.MustDefine(toolset.Tool{Name: "steps", Description: "works in three steps",
		Run: func(ctx context.Context, _ map[string]any) (any, error) {
			for i := 1; i <= 3; i++ {
				if i > 1 {
					select {
					case <-time.After(toolset.DefaultProgressInterval):
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}
				toolset.ReportProgress(ctx, float64(i), 3, fmt.Sprint("step ", i))
			}
			return "three steps done", nil
		}}))
}

// notifications is a go-sdk client handler that keeps the progress
// notifications it receives.
type notifications struct {
	mu   sync.Mutex
	got  []*mcp.ProgressNotificationParams
	more chan struct{}
}

func newNotifications() *notifications { return &notifications{more: make(chan struct{}, 1)} }

func (n *notifications) handle(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	n.mu.Lock()
	n.got = append(n.got, req.Params)
	n.mu.Unlock()
	select {
	case n.more <- struct{}{}:
	default:
	}
}

// wait waits until the last notification received has progress done.
func (n *notifications) wait(t *testing.T, done float64) []*mcp.ProgressNotificationParams {
	t.Helper()
	deadline := time.After(time.Minute) // a hang guard
	for {
		n.mu.Lock()
		got := append([]*mcp.ProgressNotificationParams(nil), n.got...)
		n.mu.Unlock()
		if len(got) > 0 && got[len(got)-1].Progress == done {
			return got
		}
		select {
		case <-n.more:
		case <-deadline:
			t.Fatalf("notifications so far: %d; the last with progress %v never came", len(got), done)
		}
	}
}

// serve connects a go-sdk client with handler n to our server for set,
// in memory.
func serve(t *testing.T, set *toolset.Set, n *notifications) *mcp.ClientSession {
	t.Helper()
	return sdkSession(t, mcptools.NewServer(set, nil), &mcp.ClientOptions{ProgressNotificationHandler: n.handle})
}

// Our server sends a tool's reports to a go-sdk client that asked for
// them, with its token, and none to one that did not.
func TestServerSendsProgress(t *testing.T) {
	n := newNotifications()
	cs := serve(t, progressSet(), n)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "steps", Meta: mcp.Meta{"progressToken": "tok-1"}})
	if err != nil || res.IsError {
		t.Fatalf("CallTool = %+v, %v", res, err)
	}
	got := n.wait(t, 3)
	if len(got) != 3 {
		t.Fatalf("%d notifications; want 3, one per step", len(got))
	}
	for i, p := range got {
		if p.ProgressToken != "tok-1" || p.Progress != float64(i+1) || p.Total != 3 || p.Message != fmt.Sprint("step ", i+1) {
			t.Errorf("notification %d = %+v; want token tok-1, %d of 3, step %d", i, p, i+1, i+1)
		}
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "steps"}); err != nil {
		t.Fatal(err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.got) != 3 {
		t.Errorf("a call without a token got %d notifications", len(n.got)-3)
	}
}

// A tool that reports a million times sends a number of notifications
// bounded by the time it took (one per interval, and the last), the last
// its last report; reports that do not increase are not sent.
func TestServerPacesProgress(t *testing.T) {
	const total = 1_000_000
	var took time.Duration
	flood := toolset.MustDefine(toolset.Tool{Name: "flood", Description: "reports a million times",
		Run: func(ctx context.Context, _ map[string]any) (any, error) {
			start := time.Now()
			for i := 1; i <= total; i++ {
				toolset.ReportProgress(ctx, float64(i), total, "")
			}
			took = time.Since(start)
			return "flooded", nil
		}})
	back := toolset.MustDefine(toolset.Tool{Name: "back", Description: "reports 5, then 3, then 7",
		Run: func(ctx context.Context, _ map[string]any) (any, error) {
			for i, done := range []float64{5, 3, 7} {
				if i > 0 {
					time.Sleep(toolset.DefaultProgressInterval) // each is handed on as it is made
				}
				toolset.ReportProgress(ctx, done, 10, "")
			}
			return "ok", nil
		}})
	n := newNotifications()
	cs := serve(t, toolset.MustNew(flood, back), n)
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "flood", Meta: mcp.Meta{"progressToken": 7}}); err != nil {
		t.Fatal(err)
	}
	got := n.wait(t, total)
	// The pacer's first report goes at once, then one per interval at
	// most, and the last at the end: this bounds the count whatever the
	// machine's speed.
	if bound := 3 + int(took/toolset.DefaultProgressInterval); len(got) > bound {
		t.Errorf("%d notifications for reports made over %v; want at most %d", len(got), took, bound)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Progress <= got[i-1].Progress {
			t.Errorf("notification %d: progress %v after %v", i, got[i].Progress, got[i-1].Progress)
		}
	}
	n.mu.Lock()
	n.got = nil
	n.mu.Unlock()
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "back", Meta: mcp.Meta{"progressToken": "b"}}); err != nil {
		t.Fatal(err)
	}
	got = n.wait(t, 7)
	if len(got) != 2 || got[0].Progress != 5 {
		t.Errorf("notifications %v; want 5 and 7, the 3 that went back left out", got)
	}
}

// Both ways, across processes: our client calls a toolset served by
// NewServer in a subprocess, and a Stream consumer sees the tool's
// reports as the call's progress events, the last one before the result
// (the server pings the client after the last notification, so that
// go-sdk's client has handled them all when the result comes).
func TestProgressAcrossSubprocess(t *testing.T) {
	// Both revisions: 2026-07-28 (stateless, the default) and 2025-11-25
	// (a session).
	for _, version := range []string{"", "2025-11-25"} {
		t.Run("version="+version, func(t *testing.T) {
			c := connect(t, serverCommand(t, "progress"), &mcptools.Options{Prefix: "remote_", ProtocolVersion: version})
			srv := newFake(t)
			srv.Enqueue(fake.Calls(fake.Call("remote_steps", nil)), fake.Text("done"))
			obs := agent.ObserverFunc(func(context.Context, *agent.Event) {})
			a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: "gemini-3-flash-preview",
				Tools: toolset.MustNew(c.Tools()...), Observer: obs})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for e, err := range a.Stream(t.Context(), []*genai.Content{genai.NewContentFromText("go", genai.RoleUser)}) {
				if err != nil {
					t.Fatal(err)
				}
				switch e.Kind {
				case agent.EventToolProgress:
					got = append(got, fmt.Sprintf("%v/%v %s", e.Progress.Done, e.Progress.Total, e.Progress.Message))
				case agent.EventToolResult:
					got = append(got, fmt.Sprint("result: ", e.ToolResult.Output))
				}
			}
			// The steps are an interval apart, as are the events the loop hands
			// out by default: each may come, the last one does, before the result.
			if n := len(got); n < 2 || got[n-2] != "3/3 step 3" || got[n-1] != "result: three steps done" {
				t.Errorf("events = %q; want the steps' progress, ending with step 3, then the result", got)
			}
		})
	}
}
