package openapitools_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/geminitest"
	"github.com/toolnexus/toolnexus-go/openapitools"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// BenchmarkParseLargest reads the largest shared description (Twilio's,
// 970 KB, 196 operations) and makes its tools: the cost of Parse.
func BenchmarkParseLargest(b *testing.B) {
	file := filepath.Join(sharedDir, "twilio.com_api--1.29.2--openapi.yaml")
	if !fileExists(file) {
		b.Skipf("%s is absent (the shared corpus of real descriptions)", file)
	}
	b.ReportAllocs()
	var api *openapitools.API
	for b.Loop() {
		var err error
		if api, err = openapitools.ParseFile(context.Background(), file, nil); err != nil {
			b.Fatal(err)
		}
		if len(api.Tools()) != 196 {
			b.Fatalf("%d tools", len(api.Tools()))
		}
	}
	b.ReportMetric(liveMB(func() any { a, _ := openapitools.ParseFile(context.Background(), file, nil); return a }), "live-MB")
}

// BenchmarkKinLoadLargest is the baseline: kin-openapi's loading of the
// same description alone, which Parse starts with.
func BenchmarkKinLoadLargest(b *testing.B) {
	file := filepath.Join(sharedDir, "twilio.com_api--1.29.2--openapi.yaml")
	if !fileExists(file) {
		b.Skipf("%s is absent (the shared corpus of real descriptions)", file)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := openapi3.NewLoader().LoadFromData(data); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(liveMB(func() any { d, _ := openapi3.NewLoader().LoadFromData(data); return d }), "live-MB")
}

// liveMB is the heap what make returns keeps alive, in MB.
func liveMB(make func() any) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := make()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(v)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / 1e6
}

// BenchmarkParseMostOperations reads the shared description with the most
// operations (GitLab's, Swagger 2.0, 358).
func BenchmarkParseMostOperations(b *testing.B) {
	file := filepath.Join(sharedDir, "gitlab.com--v3--swagger.yaml")
	if !fileExists(file) {
		b.Skipf("%s is absent (the shared corpus of real descriptions)", file)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := openapitools.ParseFile(context.Background(), file, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func fileExists(name string) bool {
	m, _ := filepath.Glob(name)
	return len(m) == 1
}

// resources names the resources of the synthetic API: 60, five operations
// each.
var resources = strings.Fields(`account address alert application attachment audit badge batch bill booking
	campaign card cart category channel comment contact contract coupon customer
	dashboard delivery department device discount document domain employee event export
	feedback file invoice item job label lead license location message
	note order organization payment permission plan policy product project quote
	receipt refund report review role schedule shipment subscription ticket webhook`)

// syntheticAPI is an OpenAPI description of 300 operations as a real one
// writes them: for each of 60 resources, list (paged, filtered), create,
// get, update and delete, with a shared schema per resource.
func syntheticAPI() string {
	var b strings.Builder
	b.WriteString("openapi: 3.0.3\ninfo: {title: Synthetic, version: \"1\"}\nservers: [{url: \"https://api.example.com/v1\"}]\npaths:\n")
	for _, r := range resources {
		R := strings.ToUpper(r[:1]) + r[1:]
		fmt.Fprintf(&b, `  /%[1]ss:
    get:
      operationId: list%[2]ss
      summary: List %[1]ss.
      description: Returns the %[1]ss of the account, newest first, a page at a time.
      tags: [%[1]ss]
      parameters:
        - {name: limit, in: query, description: How many %[1]ss to return at most., schema: {type: integer, minimum: 1, maximum: 100, default: 20}}
        - {name: cursor, in: query, description: Where the previous page ended., schema: {type: string}}
        - {name: status, in: query, description: Only the %[1]ss in this status., schema: {type: string, enum: [active, archived, draft]}}
      responses: {"200": {description: A page of %[1]ss., content: {application/json: {schema: {type: array, items: {$ref: "#/components/schemas/%[2]s"}}}}}}
    post:
      operationId: create%[2]s
      summary: Create a %[1]s.
      tags: [%[1]ss]
      requestBody: {required: true, content: {application/json: {schema: {$ref: "#/components/schemas/%[2]s"}}}}
      responses: {"201": {description: The %[1]s created.}}
  /%[1]ss/{%[1]sId}:
    parameters:
      - {name: %[1]sId, in: path, required: true, description: The %[1]s's id., schema: {type: string}}
    get:
      operationId: get%[2]s
      summary: Get a %[1]s by its id.
      tags: [%[1]ss]
      responses: {"200": {description: The %[1]s., content: {application/json: {schema: {$ref: "#/components/schemas/%[2]s"}}}}}
    patch:
      operationId: update%[2]s
      summary: Change some fields of a %[1]s.
      tags: [%[1]ss]
      requestBody: {required: true, content: {application/json: {schema: {$ref: "#/components/schemas/%[2]s"}}}}
      responses: {"200": {description: The %[1]s changed.}}
    delete:
      operationId: delete%[2]s
      summary: Delete a %[1]s.
      description: Deletes the %[1]s for good; it cannot be undone.
      tags: [%[1]ss]
      responses: {"204": {description: Deleted.}}
`, r, R)
	}
	b.WriteString("components:\n  schemas:\n")
	for _, r := range resources {
		R := strings.ToUpper(r[:1]) + r[1:]
		fmt.Fprintf(&b, `    %[2]s:
      type: object
      required: [name]
      properties:
        id: {type: string, readOnly: true}
        name: {type: string, description: The %[1]s's name., maxLength: 200}
        description: {type: string, description: What the %[1]s is for.}
        status: {type: string, enum: [active, archived, draft]}
        owner: {type: string, description: The id of the user who owns the %[1]s.}
        tags: {type: array, items: {type: string}, description: Labels to find the %[1]s by.}
        created: {type: string, format: date-time, readOnly: true}
        metadata: {type: object, additionalProperties: {type: string}, description: Your own key-value pairs.}
`, r, R)
	}
	return b.String()
}

// BenchmarkPromptTokens measures what a model call costs in prompt tokens
// with a 300-operation API declared whole, and in the search mode, for the
// same request ("delete invoice 42"), as the fake counts them (a token per
// 4 bytes of the request's contents, system instruction and tools: the
// approximation internal/fake applies). All declared: the model calls
// deleteInvoice, then answers (2 calls). Search mode: it searches, calls
// call_operation, then answers (3 calls).
func BenchmarkPromptTokens(b *testing.B) {
	rest := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer rest.Close()
	api, err := openapitools.Parse(context.Background(), []byte(syntheticAPI()), &openapitools.Options{BaseURL: rest.URL})
	if err != nil {
		b.Fatal(err)
	}
	if n := len(api.Tools()); n != 300 {
		b.Fatalf("%d tools", n)
	}
	for _, mode := range []struct {
		name    string
		tools   []*toolset.Tool
		replies []*geminitest.Reply
	}{
		{"declared", api.Tools(), []*geminitest.Reply{
			geminitest.Calls(geminitest.Call("deleteInvoice", map[string]any{"invoiceId": "42"})),
			geminitest.Text("Invoice 42 is deleted."),
		}},
		{"search", api.SearchTools(), []*geminitest.Reply{
			geminitest.Calls(geminitest.Call("search_operations", map[string]any{"query": "delete invoice"})),
			geminitest.Calls(geminitest.Call("call_operation", map[string]any{"operation": "deleteInvoice", "arguments": map[string]any{"invoiceId": "42"}})),
			geminitest.Text("Invoice 42 is deleted."),
		}},
	} {
		b.Run(mode.name, func(b *testing.B) {
			set := toolset.MustNew(mode.tools...)
			var calls, prompt, first int
			for b.Loop() {
				srv := geminitest.NewServer()
				srv.Enqueue(mode.replies...)
				res, err := agent.Run(context.Background(), agent.Config{Models: srv.Client().Models, Model: "gemini-2.5-flash", Tools: set},
					[]*genai.Content{genai.NewContentFromText("delete invoice 42", genai.RoleUser)})
				srv.Close()
				if err != nil {
					b.Fatal(err)
				}
				calls, prompt, first = len(res.Turns), res.Usage.PromptTokens, res.Turns[0].Usage.PromptTokens
			}
			b.ReportMetric(float64(first), "tokens-first-call")
			b.ReportMetric(float64(prompt)/float64(calls), "tokens/call")
			b.ReportMetric(float64(prompt), "tokens/run")
			b.ReportMetric(float64(calls), "calls/run")
		})
	}
	// A real API declared whole: GitLab's 358 operations, one model call.
	file := filepath.Join(sharedDir, "gitlab.com--v3--swagger.yaml")
	if !fileExists(file) {
		return
	}
	b.Run("declared-gitlab", func(b *testing.B) {
		gitlab, err := openapitools.ParseFile(context.Background(), file, nil)
		if err != nil {
			b.Fatal(err)
		}
		set := toolset.MustNew(gitlab.Tools()...)
		var prompt int
		for b.Loop() {
			srv := geminitest.NewServer()
			srv.Enqueue(geminitest.Text("ok"))
			res, err := agent.Run(context.Background(), agent.Config{Models: srv.Client().Models, Model: "gemini-2.5-flash", Tools: set},
				[]*genai.Content{genai.NewContentFromText("list my projects", genai.RoleUser)})
			srv.Close()
			if err != nil {
				b.Fatal(err)
			}
			prompt = res.Usage.PromptTokens
		}
		b.ReportMetric(float64(prompt), "tokens-first-call")
	})
}
