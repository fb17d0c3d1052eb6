package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/internal/schematest"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/temporalagent"
	"github.com/toolnexus/toolnexus-go/toolset"
	"go.temporal.io/sdk/worker"
	"google.golang.org/genai"
)

// locationTool is a browser tool, as AG-UI declares it.
func locationTool() map[string]any {
	return map[string]any{"name": "get_location", "description": "Where the user is, from the browser",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{
			"precision": map[string]any{"type": "string", "enum": []any{"city", "exact"}}}}}
}

// declared returns the names of the functions a model request declared.
func declared(req *fake.Request) []string {
	var names []string
	for _, tool := range req.Tools {
		for _, d := range tool.FunctionDeclarations {
			names = append(names, d.Name)
		}
	}
	return names
}

// inProcess returns an instance of the in-process runner, on a store of
// its own, with the fleet's agent.
func inProcess(t *testing.T, f *fleet) *instance {
	t.Helper()
	srv, err := agentserver.New(agentserver.Config{Agent: f.agent, Store: session.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	in := &instance{srv: srv, http: httptest.NewServer(routes(srv))}
	t.Cleanup(func() {
		srv.Close(context.Background())
		in.http.Close()
	})
	return in
}

// An AG-UI frontend tool on the fleet: the run started on A declares it,
// the model's call of it ends A's response with the pending call, and the
// tool message posted to B answers it: the run finishes there, the model
// reads the browser's result, and the events are those of one in-process
// server.
func TestBrowserToolAGUI(t *testing.T) {
	shared(t)
	before := ours()
	t.Cleanup(func() { noLeaks(t, before) })
	f := newFleet(t)
	conversation := func(first, second *instance, thread string) (seqs [][]string) {
		model.Enqueue(fake.Calls(fake.Call("get_location", map[string]any{"precision": "city"})), fake.Text("Sunny in Lyon."))
		msgs := []any{map[string]any{"id": "u1", "role": "user", "content": "Weather here?"}}
		input := func(run string) map[string]any {
			return map[string]any{"threadId": thread, "runId": run, "messages": msgs, "tools": []any{locationTool()}, "context": []any{}}
		}
		n := len(model.Requests())
		r1 := do(t, first, "POST", "/agui", input("r1"))
		outcome, _ := r1.events[len(r1.events)-1]["outcome"].(map[string]any)
		ids, _ := outcome["pendingToolCallIds"].([]any)
		if r1.status != http.StatusOK || len(ids) != 1 {
			t.Fatalf("first request: %d %v %s %v", r1.status, r1.types(), r1.body, outcome)
		}
		if names := declared(model.Requests()[n]); !slices.Equal(names, []string{"send_email", "get_location"}) {
			t.Errorf("the model was declared %v", names)
		}
		callID := ids[0].(string)
		msgs = append(msgs,
			map[string]any{"id": "a1", "role": "assistant", "toolCalls": []any{map[string]any{"id": callID, "type": "function",
				"function": map[string]any{"name": "get_location", "arguments": `{"precision":"city"}`}}}},
			map[string]any{"id": "tr1", "role": "tool", "toolCallId": callID, "content": `{"city":"Lyon"}`})
		r2 := do(t, second, "POST", "/agui", input("r2"))
		if r2.status != http.StatusOK || !slices.Contains(r2.types(), "TOOL_CALL_RESULT") || r2.types()[len(r2.types())-1] != "RUN_FINISHED" {
			t.Fatalf("the result: %d %v %s", r2.status, r2.types(), r2.body)
		}
		if got := requestResponse(model.Requests()[len(model.Requests())-1]); got != `get_location{"result":{"city":"Lyon"}}` {
			t.Errorf("the model read %s", got)
		}
		// The result again (the client's history holds it): the thread's
		// run is over, the result answers a call of the past.
		again := do(t, first, "POST", "/agui", input("r3"))
		return [][]string{r1.types(), r2.types(), {again.code()}}
	}
	fleetSeqs := conversation(f.a, f.b, id("agui-browser"))
	one := inProcess(t, f)
	localSeqs := conversation(one, one, id("agui-browser"))
	for i := range localSeqs {
		if !slices.Equal(fleetSeqs[i], localSeqs[i]) {
			t.Errorf("request %d: the fleet answered %v, one process %v", i, fleetSeqs[i], localSeqs[i])
		}
	}
	saved, err := f.store.Load(context.Background(), threadOf(t, f.store, id("agui-browser")))
	if err != nil || len(saved) != 4 {
		t.Fatalf("saved %d contents, %v", len(saved), err)
	}
	if n := f.sent.Load(); n != 0 {
		t.Errorf("send_email ran %d times", n)
	}
}

// The same through the AI SDK: its client tool's output-available part,
// posted to B, answers the call the run on A paused at; an output-error
// part answers with the browser's error, which the model reads as the
// call's error, not as a denial.
func TestBrowserToolAISDK(t *testing.T) {
	shared(t)
	before := ours()
	t.Cleanup(func() { noLeaks(t, before) })
	f := newFleet(t)
	tools := []any{map[string]any{"name": "get_location", "description": "Where the user is", "inputSchema": map[string]any{"type": "object"}}}
	conversation := func(first, second *instance, chat string) (seqs [][]string) {
		model.Enqueue(fake.Calls(fake.Call("get_location", nil)), fake.Text("You are in Lyon."),
			fake.Calls(fake.Call("get_location", nil)), fake.Text("I could not find you."))
		msgs := []any{userMessage("u1", "Where am I?")}
		for i, part := range []map[string]any{
			{"state": "output-available", "output": map[string]any{"city": "Lyon"}},
			{"state": "output-error", "errorText": "permission denied by the user"},
		} {
			r1 := do(t, first, "POST", "/api/chat", map[string]any{"id": chat, "messages": msgs, "tools": tools})
			if r1.status != http.StatusOK || len(r1.events) < 3 || r1.events[2]["type"] != "tool-input-available" {
				t.Fatalf("request %d: %d %v %s", i, r1.status, r1.types(), r1.body)
			}
			part["type"], part["toolCallId"], part["input"] = "tool-get_location", r1.events[2]["toolCallId"], map[string]any{}
			msgs = append(msgs, map[string]any{"id": r1.events[0]["messageId"], "role": "assistant", "parts": []any{part}})
			r2 := do(t, second, "POST", "/api/chat", map[string]any{"id": chat, "messages": msgs, "tools": tools})
			seqs = append(seqs, r1.types(), r2.types())
			msgs = append(msgs, userMessage("u2", "And now?"))
		}
		return seqs
	}
	n := len(model.Requests())
	fleetSeqs := conversation(f.a, f.b, id("chat-browser"))
	reqs := model.Requests()[n:]
	if len(reqs) != 4 {
		t.Fatalf("%d model requests", len(reqs))
	}
	if got := requestResponse(reqs[1]); got != `get_location{"result":{"city":"Lyon"}}` {
		t.Errorf("the model read %s", got)
	}
	if got := requestResponse(reqs[3]); got != `get_location{"error":"permission denied by the user"}` {
		t.Errorf("the model read %s", got)
	}
	one := inProcess(t, f)
	localSeqs := conversation(one, one, id("chat-browser"))
	for i := range localSeqs {
		if !slices.Equal(fleetSeqs[i], localSeqs[i]) {
			t.Errorf("response %d: the fleet answered %v, one process %v", i, fleetSeqs[i], localSeqs[i])
		}
	}
	want := []string{"start", "tool-output-available", "start-step", "text-start", "text-delta", "text-end", "finish-step", "finish"}
	if !slices.Equal(fleetSeqs[1], want) {
		t.Errorf("the result's response %v, want %v", fleetSeqs[1], want)
	}
}

// requestResponse returns the function response a model request ends
// with, as JSON.
func requestResponse(req *fake.Request) string {
	last := req.Contents[len(req.Contents)-1]
	for _, p := range last.Parts {
		if p.FunctionResponse != nil {
			b, _ := json.Marshal(p.FunctionResponse.Response)
			return p.FunctionResponse.Name + string(b)
		}
	}
	return ""
}

// A browser tool's call takes its result once, from the first request
// anywhere, and only a result that suits it: neither output nor error, or
// both, or an approval, or output that is not JSON, is refused (400
// bad_decision, nothing recorded); a second result is refused as
// decided. A call that needs approval takes no result.
func TestBrowserToolDecisions(t *testing.T) {
	shared(t)
	before := ours()
	t.Cleanup(func() { noLeaks(t, before) })
	f := newFleet(t)
	ctx := context.Background()
	model.Enqueue(fake.Calls(fake.Call("get_location", nil), fake.Call("send_email", map[string]any{"to": "lu"})),
		fake.Text("Sent to Lu, in Lyon."))
	decl := agentserver.ToolDecl{Name: "get_location", Description: "Where the user is"}
	thread := "/" + id("browser-decisions")
	info, cur, err := f.a.runner.Start(ctx, &agentserver.Input{Thread: thread, Conversation: id("browser-decisions"),
		Message: genai.NewContentFromText("Email Lu where I am", genai.RoleUser), Tools: []agentserver.ToolDecl{decl}})
	if err != nil {
		t.Fatal(err)
	}
	recs := readUntil(t, cur, agentserver.KindPause)
	cur.Close()
	pending := recs[len(recs)-1].Pending
	if len(pending) != 2 || pending[0].Kind != agentserver.WaitBrowser || pending[1].Kind != agentserver.WaitApproval {
		t.Fatalf("pending %+v", pending)
	}
	if c := recs[2].Call; recs[2].Kind != agentserver.KindToolCall || c.Wait != agentserver.WaitBrowser {
		t.Errorf("the browser tool's call record %+v", recs[2])
	}
	loc, mail := pending[0].Call.ID, pending[1].Call.ID
	for _, tc := range []struct {
		name string
		d    []agentserver.Decision
		code string
	}{
		{"neither output nor error", []agentserver.Decision{{CallID: loc}}, "bad_decision"},
		{"both output and error", []agentserver.Decision{{CallID: loc, Output: json.RawMessage(`1`), Error: "no"}}, "bad_decision"},
		{"output that is not JSON", []agentserver.Decision{{CallID: loc, Output: json.RawMessage(`{city`)}}, "bad_decision"},
		{"an approval's result", []agentserver.Decision{{CallID: mail, Output: json.RawMessage(`{}`)}}, "bad_decision"},
		{"a forged call", []agentserver.Decision{{CallID: info.ID + ".9.9", Output: json.RawMessage(`{}`)}}, "unknown_call"},
		{"an output over the limit", []agentserver.Decision{{CallID: loc, Output: json.RawMessage(`"` + strings.Repeat("x", 300<<10) + `"`)}}, "bad_decision"},
	} {
		_, err := f.b.runner.Decide(ctx, info.ID, tc.d)
		var se *agentserver.Error
		if !errors.As(err, &se) || se.Code != tc.code {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}
	// The browser's result on B, the approval on A: the run goes on when
	// both came.
	cur, err = f.b.runner.Decide(ctx, info.ID, []agentserver.Decision{{CallID: loc, Output: json.RawMessage(`{"city":"Lyon"}`)}})
	if err != nil {
		t.Fatal(err)
	}
	part := readUntil(t, cur, agentserver.KindPause)
	cur.Close()
	if len(part) != 2 || part[0].Kind != agentserver.KindDecision || part[0].Decision.Kind != agentserver.WaitBrowser ||
		string(part[0].Decision.Output) != `{"city":"Lyon"}` || len(part[1].Pending) != 1 || part[1].Pending[0].Call.ID != mail {
		t.Fatalf("after the result: %+v", part)
	}
	if _, err := f.a.runner.Decide(ctx, info.ID, []agentserver.Decision{{CallID: loc, Error: "late"}}); !errors.Is(err, agentserver.ErrDecided) {
		t.Errorf("a second result: %v", err)
	}
	cur, err = f.a.runner.Decide(ctx, info.ID, []agentserver.Decision{{CallID: mail, Approved: true}})
	if err != nil {
		t.Fatal(err)
	}
	rest := readUntil(t, cur, agentserver.KindDone)
	cur.Close()
	var results []*agentserver.CallResult
	for _, rec := range rest {
		if rec.Kind == agentserver.KindToolResult {
			results = append(results, rec.Result)
		}
	}
	if len(results) != 2 || string(results[0].Output) != `{"city":"Lyon"}` || results[0].Denied || string(results[1].Output) != `{"sent":"lu"}` {
		t.Errorf("results %+v", results)
	}
	if d := rest[len(rest)-1].Done; d.State != agentserver.StateDone || d.Text != "Sent to Lu, in Lyon." {
		t.Errorf("done %+v", d)
	}
	if n := f.sent.Load(); n != 1 {
		t.Errorf("send_email ran %d times", n)
	}
}

// Browser tools that could not be declared, or whose schema is over
// toolset's budget, refuse the request before anything runs, on the
// fleet as in process: through the server (400 schema_too_large, bad_tool)
// and through the Runner itself.
func TestBrowserToolsRefused(t *testing.T) {
	shared(t)
	before := ours()
	t.Cleanup(func() { noLeaks(t, before) })
	f := newFleet(t)
	ctx := context.Background()
	var huge map[string]any
	if err := json.Unmarshal([]byte(schematest.Doubling(16)), &huge); err != nil {
		t.Fatal(err)
	}
	n := len(model.Requests())
	for _, tc := range []struct {
		name string
		tool map[string]any
		code string
	}{
		{"a schema expanding 16 levels", map[string]any{"name": "x", "parameters": huge}, "schema_too_large"},
		{"a name of the agent's", map[string]any{"name": "send_email"}, "bad_tool"},
		{"a name Gemini refuses", map[string]any{"name": "get location"}, "bad_tool"},
	} {
		r := do(t, f.a, "POST", "/agui", map[string]any{"threadId": id("refused"), "runId": "r1",
			"messages": []any{map[string]any{"id": "u1", "role": "user", "content": "Hi"}}, "tools": []any{tc.tool}, "context": []any{}})
		if r.status != http.StatusBadRequest || r.code() != tc.code {
			t.Errorf("%s: %d %s, want 400 %s", tc.name, r.status, r.body, tc.code)
		}
	}
	var schema agentserver.ToolDecl
	if err := json.Unmarshal([]byte(`{"name":"x","parameters":`+schematest.Doubling(16)+`}`), &schema); err != nil {
		t.Fatal(err)
	}
	_, _, err := f.a.runner.Start(ctx, &agentserver.Input{Thread: "/" + id("refused"), Conversation: id("refused"),
		Message: genai.NewContentFromText("Hi", genai.RoleUser), Tools: []agentserver.ToolDecl{schema}})
	if !isError(err, http.StatusBadRequest, "schema_too_large") || !errors.Is(err, toolset.ErrSchemaTooLarge) {
		t.Errorf("Start with a schema over the budget: %v", err)
	}
	if len(model.Requests()) != n {
		t.Errorf("%d requests reached the model", len(model.Requests())-n)
	}
	if _, err := f.store.LoadRun(ctx, "/"+id("refused")); !errors.Is(err, session.ErrNoRun) {
		t.Errorf("the thread's journal: %v", err)
	}
}

// A browser tool's call whose result does not come before the agent's
// ApprovalTimeout is denied, its decision recorded as expired, and the
// run goes on to its answer; a result that comes later is refused as
// expired.
func TestBrowserToolExpires(t *testing.T) {
	ts := shared(t)
	before := ours()
	t.Cleanup(func() { noLeaks(t, before) })
	f := newFleet(t) // for its agent and store
	ctx := context.Background()
	opts := options{temporal: ts.GetFrontendHostPort(), namespace: ts.GetDefaultNamespace(),
		queue: fmt.Sprintf("fleet-expiry-%d", queues.Add(1)), runTimeout: time.Hour, approvalTimeout: time.Second}
	runner, stop, err := temporalRunner(opts, slog.New(slog.DiscardHandler))(ctx, f.agent, f.store)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	model.Enqueue(fake.Calls(fake.Call("get_location", nil)), fake.Text("I could not find you."))
	thread := "/" + id("browser-expiry")
	info, cur, err := runner.Start(ctx, &agentserver.Input{Thread: thread, Conversation: thread[1:],
		Message: genai.NewContentFromText("Where am I?", genai.RoleUser), Tools: []agentserver.ToolDecl{{Name: "get_location"}}})
	if err != nil {
		t.Fatal(err)
	}
	recs := readUntil(t, cur, agentserver.KindDone)
	cur.Close()
	want := []agentserver.Kind{"start", "step", "tool-call", "pause", "decision", "tool-result", "step-end", "step", "text", "step-end", "done"}
	if !slices.Equal(kinds(recs), want) {
		t.Fatalf("records %v, want %v", kinds(recs), want)
	}
	if d := recs[4].Decision; !d.Expired || d.Kind != agentserver.WaitBrowser {
		t.Errorf("decision %+v", d)
	}
	if r := recs[5].Result; !r.Denied || !strings.Contains(r.Error, "no result came before its deadline") {
		t.Errorf("result %+v", r)
	}
	if d := recs[len(recs)-1].Done; d.State != agentserver.StateDone || d.Text != "I could not find you." {
		t.Errorf("done %+v", d)
	}
	_, err = runner.Decide(ctx, info.ID, []agentserver.Decision{{CallID: recs[3].Pending[0].Call.ID, Output: json.RawMessage(`{"city":"Lyon"}`)}})
	if !errors.Is(err, agentserver.ErrExpired) {
		t.Errorf("a result after the deadline: %v", err)
	}
	if err := runner.Close(ctx); err != nil {
		t.Error(err)
	}
}

// The browser tools' declarations count in what a model call carries
// (Agent.MaxPayloadBytes): a run whose conversation and declarations
// would be over it fails before the call, rather than Temporal refusing
// the payload.
func TestBrowserToolsCountInPayload(t *testing.T) {
	shared(t)
	before := ours()
	t.Cleanup(func() { noLeaks(t, before) })
	f := newFleet(t)
	ctx := context.Background()
	queue := f.queue + "-payload"
	w := worker.New(f.a.c, queue, worker.Options{})
	if err := errors.Join(temporalagent.Register(w, temporalagent.Agent{Name: "mail", Agent: f.agent, MaxPayloadBytes: 8 << 10}),
		temporalagent.RegisterStore(w, f.store), w.Start()); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	runner, err := temporalagent.NewRunner(temporalagent.RunnerConfig{Client: f.a.c, TaskQueue: queue, Agent: "mail", Store: f.store,
		PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	n := len(model.Requests())
	for i, tc := range []struct {
		description string
		state       agentserver.State
	}{
		{strings.Repeat("Where the user is. ", 500), agentserver.StateFailed}, // 9,500 bytes
		{"Where the user is.", agentserver.StateDone},
	} {
		if tc.state == agentserver.StateDone {
			model.Enqueue(fake.Text("Hello."))
		}
		thread := id(fmt.Sprintf("browser-payload-%d", i))
		_, cur, err := runner.Start(ctx, &agentserver.Input{Thread: "/" + thread, Conversation: thread,
			Message: genai.NewContentFromText("Hi", genai.RoleUser), Tools: []agentserver.ToolDecl{{Name: "get_location", Description: tc.description}}})
		if err != nil {
			t.Fatal(err)
		}
		recs := readUntil(t, cur, agentserver.KindDone)
		cur.Close()
		if d := recs[len(recs)-1].Done; d.State != tc.state {
			t.Errorf("%d-byte declaration: done %+v", len(tc.description), d)
		}
	}
	if got := len(model.Requests()) - n; got != 1 {
		t.Errorf("%d model requests, want 1", got)
	}
}
