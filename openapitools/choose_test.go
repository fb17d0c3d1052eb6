package openapitools_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/geminiadapter"
	"github.com/toolnexus/toolnexus-go/geminitest"
	"github.com/toolnexus/toolnexus-go/openapitools"
	"google.golang.org/genai"
)

func toolNames(api *openapitools.API) []string {
	var names []string
	for _, tl := range api.Tools() {
		names = append(names, tl.Name)
	}
	return names
}

// Tags, methods, paths and a predicate choose the operations; the others
// are reported as excluded.
func TestFilters(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts openapitools.Options
		want []string
	}{
		{"tags", openapitools.Options{Tags: []string{"items"}}, []string{"listItems", "createItem", "getItem", "replaceItem", "deleteItem"}},
		{"methods", openapitools.Options{Methods: []string{"get"}}, []string{"listItems", "getItem", "styles"}},
		{"paths", openapitools.Options{Paths: []string{"/items/*", "/pets"}}, []string{"getItem", "replaceItem", "deleteItem", "addPet"}},
		{"include", openapitools.Options{Include: func(op *openapitools.Operation) bool { return op.ReadOnly }}, []string{"listItems", "getItem", "styles"}},
		{"all of them", openapitools.Options{Tags: []string{"items"}, Methods: []string{"GET", "DELETE"}, Paths: []string{"/items/{itemId}"}},
			[]string{"getItem", "deleteItem"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := parseFile(t, "shop31.yaml", &tc.opts)
			if got := toolNames(api); !slices.Equal(got, tc.want) {
				t.Errorf("tools %v, want %v", got, tc.want)
			}
			if len(api.Tools())+len(api.Skipped()) != len(api.Operations()) {
				t.Errorf("%d tools and %d skipped of %d operations", len(api.Tools()), len(api.Skipped()), len(api.Operations()))
			}
			for _, op := range api.Skipped() {
				if !errors.Is(op.Err, openapitools.ErrExcluded) {
					t.Errorf("%s: %v", op.Name, op.Err)
				}
			}
		})
	}
}

// GET and HEAD are read-only: safe to repeat, and no approval by default;
// any other method needs one. Options.NeedsApproval overrides.
func TestApprovalPolicy(t *testing.T) {
	api := parseFile(t, "shop31.yaml", nil)
	for _, op := range api.Operations() {
		read := op.Method == "GET" || op.Method == "HEAD"
		if op.ReadOnly != read || op.NeedsApproval == read || op.Tool.SafeToRepeat() != read {
			t.Errorf("%s %s: ReadOnly %v, NeedsApproval %v, SafeToRepeat %v", op.Method, op.Path, op.ReadOnly, op.NeedsApproval, op.Tool.SafeToRepeat())
		}
		if got := api.NeedsApproval(&genai.FunctionCall{Name: op.Name}); got != op.NeedsApproval {
			t.Errorf("%s: API.NeedsApproval %v", op.Name, got)
		}
	}
	if api.NeedsApproval(&genai.FunctionCall{Name: "someone_elses_tool"}) || api.NeedsApproval(nil) {
		t.Error("a tool that is not the API's needs approval")
	}
	onlyDelete := parseFile(t, "shop31.yaml", &openapitools.Options{NeedsApproval: func(op *openapitools.Operation) bool { return op.Method == "DELETE" }})
	for _, op := range onlyDelete.Operations() {
		if op.NeedsApproval != (op.Method == "DELETE") {
			t.Errorf("%s: NeedsApproval %v", op.Name, op.NeedsApproval)
		}
	}
}

// Given to an agent, the API's policy lets reads run and holds the rest:
// with agent.Run and no one to approve, a delete is denied and never
// reaches the server.
func TestAgentApprovals(t *testing.T) {
	rec := newRecorder(t)
	api := parseFile(t, "shop31.yaml", &openapitools.Options{BaseURL: rec.URL,
		Credentials: map[string]openapitools.Credential{"key": openapitools.APIKey("k")}})
	set, err := api.Set()
	if err != nil {
		t.Fatal(err)
	}
	srv := geminitest.Start(t)
	srv.Enqueue(
		geminitest.Calls(
			geminitest.Call("getItem", map[string]any{"itemId": "7"}),
			geminitest.Call("deleteItem", map[string]any{"itemId": "7"}),
		),
		geminitest.Text("I read it; deleting needs your approval."),
	)
	_, err = agent.Run(context.Background(), agent.Config{Models: srv.Client().Models, Model: "gemini-2.5-flash", Tools: set,
		NeedsApproval: api.NeedsApproval}, []*genai.Content{genai.NewContentFromText("read and delete item 7", genai.RoleUser)})
	if err != nil {
		t.Fatal(err)
	}
	srv.AssertComplete(t)
	var methods []string
	for _, r := range rec.all() {
		methods = append(methods, r.Method+" "+r.URI)
	}
	if !slices.Equal(methods, []string{"GET /items/7"}) {
		t.Errorf("requests %v, want the GET only", methods)
	}
	responses := srv.LastRequest().LastFunctionResponses("deleteItem")
	if len(responses) != 1 {
		t.Fatalf("deleteItem responses: %v", responses)
	}
	if _, denied := geminiadapter.Denied(responses[0]); !denied {
		t.Errorf("deleteItem answered %v, want a denial", responses[0].Response)
	}
}

// Names: the operationId made to follow Gemini's rule, or the method and
// path; unique, at most 64 characters, with the prefix. Descriptions: the
// summary and the description, trimmed, cut at a word.
func TestNamesAndDescriptions(t *testing.T) {
	long := strings.Repeat("word ", 400)
	desc := `openapi: 3.0.0
info: {title: Names, version: "1"}
paths:
  /a/{id}/b:
    get: {responses: {"200": {description: ok}}}
    post: {operationId: "create thing/v2", summary: "  Create a thing.  ", description: "` + long + `", responses: {"200": {description: ok}}}
    put: {operationId: "9lives", deprecated: true, summary: Replace, responses: {"200": {description: ok}}}
  /a/id/b:
    get: {responses: {"200": {description: ok}}}
  /x:
    get: {operationId: "` + strings.Repeat("verylongname", 10) + `", responses: {"200": {description: ok}}}
    put: {operationId: "` + strings.Repeat("verylongname", 10) + `", responses: {"200": {description: ok}}}
`
	api, err := openapitools.Parse(context.Background(), []byte(desc), &openapitools.Options{Prefix: "svc_"})
	if err != nil {
		t.Fatal(err)
	}
	names := toolNames(api)
	// Paths in order (/a/id/b before /a/{id}/b), then methods (GET, PUT,
	// POST...).
	want := []string{"svc_get_a_id_b", "svc_get_a_id_b_2", "svc_9lives", "svc_create_thing_v2"}
	if !slices.Equal(names[:4], want) {
		t.Errorf("names %v, want %v first", names, want)
	}
	if a, b := names[4], names[5]; a == b || len(a) > 64 || len(b) > 64 || !strings.HasPrefix(a, "svc_verylongname") {
		t.Errorf("long names %q and %q", a, b)
	}
	create := operation(t, api, "svc_create_thing_v2")
	if d := create.Tool.Description; !strings.HasPrefix(d, "Create a thing.\n\nword word") || len(d) > openapitools.DefaultMaxDescriptionLen || !strings.HasSuffix(d, "word…") {
		t.Errorf("description %q", d)
	}
	if d := operation(t, api, "svc_9lives").Tool.Description; d != "Deprecated.\n\nReplace" {
		t.Errorf("description %q", d)
	}
	if d := operation(t, api, "svc_get_a_id_b_2").Tool.Description; d != "GET /a/{id}/b" {
		t.Errorf("description %q", d)
	}
}
