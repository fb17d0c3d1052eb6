package openapitools_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/geminitest"
	"github.com/toolnexus/toolnexus-go/openapitools"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// The search mode lists the operations that match, best first, with their
// arguments' schemas; call_operation calls one, its arguments checked
// against that operation's schema before any request.
func TestSearchMode(t *testing.T) {
	rec := newRecorder(t)
	api := parseFile(t, "shop31.yaml", &openapitools.Options{BaseURL: rec.URL, Prefix: "shop_",
		Credentials: map[string]openapitools.Credential{"key": openapitools.APIKey("k")}})
	tools := api.SearchTools()
	search, call := tools[0], tools[1]
	if search.Name != "shop_search_operations" || call.Name != "shop_call_operation" || !search.ReadOnly || call.SafeToRepeat() {
		t.Fatalf("tools %s (read-only %v), %s (safe %v)", search.Name, search.ReadOnly, call.Name, call.SafeToRepeat())
	}
	r := search.Execute(context.Background(), map[string]any{"query": "delete an item"})
	if r.IsError {
		t.Fatal(r.Output)
	}
	out := fmt.Sprintf("%+v", r.Output)
	first := strings.Index(out, "shop_deleteItem")
	if first < 0 || first > strings.Index(out, "shop_getItem") || !strings.Contains(out, "itemId") {
		t.Errorf("search for deleting an item: %s", out)
	}
	if r := search.Execute(context.Background(), map[string]any{"query": "shop_plantTree", "limit": 1.0}); !strings.Contains(fmt.Sprintf("%+v", r.Output), "Name:shop_plantTree") ||
		strings.Contains(fmt.Sprintf("%+v", r.Output), "shop_getItem") {
		t.Errorf("search by name: %+v", r.Output)
	}
	if r := search.Execute(context.Background(), map[string]any{"query": "zebra"}); !strings.Contains(fmt.Sprint(r.Output), "no operation matches") {
		t.Errorf("search for nothing: %+v", r.Output)
	}

	r = call.Execute(context.Background(), map[string]any{"operation": "shop_getItem", "arguments": map[string]any{"itemId": "9"}})
	if r.IsError || rec.last(t).URI != "/items/9" {
		t.Fatalf("call: %+v", r)
	}
	n := len(rec.all())
	for _, args := range []map[string]any{
		{"operation": "shop_getItem", "arguments": map[string]any{"itemId": 9.0}},
		{"operation": "shop_getItem", "arguments": map[string]any{}},
		{"operation": "shop_nope", "arguments": map[string]any{}},
		{"operation": "shop_getItem"},
	} {
		r := call.Execute(context.Background(), args)
		if !r.IsError {
			t.Errorf("call %v: %+v", args, r)
		}
		if args["operation"] == "shop_getItem" && !errors.Is(r.Err, toolset.ErrInvalidArguments) {
			t.Errorf("call %v: error %v, want invalid arguments", args, r.Err)
		}
	}
	if len(rec.all()) != n {
		t.Errorf("refused calls reached the server")
	}
	// Approval follows the operation called.
	for op, want := range map[string]bool{"shop_getItem": false, "shop_deleteItem": true, "shop_nope": true} {
		if got := api.NeedsApproval(&genai.FunctionCall{Name: call.Name, Args: map[string]any{"operation": op}}); got != want {
			t.Errorf("approval of %s through %s: %v", op, call.Name, got)
		}
	}
}

// A model finds an operation and calls it, through an agent, on the real
// genai client.
func TestSearchModeAgent(t *testing.T) {
	rec := newRecorder(t)
	api := parseFile(t, "shop31.yaml", &openapitools.Options{BaseURL: rec.URL,
		Credentials: map[string]openapitools.Credential{"key": openapitools.APIKey("k")}})
	set := toolset.MustNew(api.SearchTools()...)
	srv := geminitest.Start(t)
	srv.Enqueue(
		geminitest.Calls(geminitest.Call("search_operations", map[string]any{"query": "list items"})),
		geminitest.Calls(geminitest.Call("call_operation", map[string]any{"operation": "listItems", "arguments": map[string]any{"tags": []any{"red"}}})),
		geminitest.Text("There is one item."),
	)
	res, err := agent.Run(context.Background(), agent.Config{Models: srv.Client().Models, Model: "gemini-2.5-flash", Tools: set,
		NeedsApproval: api.NeedsApproval}, []*genai.Content{genai.NewContentFromText("what items are there?", genai.RoleUser)})
	if err != nil {
		t.Fatal(err)
	}
	srv.AssertComplete(t)
	if res.Text != "There is one item." || rec.last(t).URI != "/items?tags=red&limit=20" {
		t.Errorf("answer %q, request %+v", res.Text, rec.last(t))
	}
}
