package agui_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/internal/schematest"
)

// TestToolSchemaTooLarge is issue 32's attack through AG-UI: a frontend
// tool whose $defs each refer twice to the one before. 14 levels (1.6 KB
// of body) became a 967 KB declaration sent with every model call; 16
// levels took seconds and hundreds of megabytes per request. Both are a
// 400 schema_too_large now, before anything runs.
func TestToolSchemaTooLarge(t *testing.T) {
	e := newEnv(t, nil)
	ok := `"threadId":"t1","runId":"r1","messages":[{"id":"u","role":"user","content":"hi"}]`
	for _, levels := range []int{14, 16} {
		body := `{` + ok + `,"tools":[{"name":"t","description":"x","parameters":` + schematest.Doubling(levels) + `}]}`
		r := e.post("/agui", body)
		if r.status != 400 || r.code() != "schema_too_large" || !strings.Contains(r.body, "too large") {
			t.Errorf("%d levels (%d bytes): %d %s; want 400 schema_too_large", levels, len(body), r.status, r.body)
		}
	}
	if n := len(e.Model.Requests()); n != 0 {
		t.Errorf("%d requests reached the model", n)
	}
}

// TestToolSchemaSharedDefs: a frontend tool whose definition is shared by
// twenty properties reaches the model with its $defs, not inlined twenty
// times.
func TestToolSchemaSharedDefs(t *testing.T) {
	e := newEnv(t, nil)
	e.Model.Enqueue(fake.Text("Planned."))
	body := `{"threadId":"t1","runId":"r1","messages":[{"id":"u","role":"user","content":"Plan the route"}],` +
		`"tools":[{"name":"deliver","description":"Plans a delivery","parameters":` + schematest.Shared(20) + `}]}`
	if r := e.post("/agui", body); r.last()["type"] != "RUN_FINISHED" {
		t.Fatalf("%d %s", r.status, r.body)
	}
	sent := e.Model.Requests()[0].Body
	if !bytes.Contains(sent, []byte(`"parametersJsonSchema":{"$defs":{"address":`)) || bytes.Count(sent, []byte(`"postcode"`)) != 1 {
		t.Errorf("the model's request does not hold the tool with its $defs, the address once (%d bytes)", len(sent))
	}
}

// TestToolSchemaTooDeep is issue 43's attack through AG-UI: a frontend
// tool whose schema nests 1,000 levels (21 KB) took jsonschema-go's
// decoding 2.9 s and 235 MB, one of 150 KB 82 s and 1.4 GB, before the
// request was even checked. Both are a 400 schema_too_deep now, found in
// one pass over the bytes before any decoding, and nothing runs.
func TestToolSchemaTooDeep(t *testing.T) {
	e := newEnv(t, nil)
	ok := `"threadId":"t1","runId":"r1","messages":[{"id":"u","role":"user","content":"hi"}]`
	for _, schema := range []string{schematest.Nested(1000), schematest.NestedSize(150 << 10)} {
		body := `{` + ok + `,"tools":[{"name":"deep","description":"x","parameters":` + schema + `}]}`
		r := e.post("/agui", body)
		if r.status != 400 || r.code() != "schema_too_deep" || !strings.Contains(r.body, `browser tool \"deep\": its schema nests more than 64 levels`) {
			t.Errorf("%d bytes: %d %s; want 400 schema_too_deep", len(body), r.status, r.body)
		}
	}
	if n := len(e.Model.Requests()); n != 0 {
		t.Errorf("%d requests reached the model", n)
	}
}

// TestToolSchemaDeepest: a frontend tool as deep as a schema may nest,
// with its bytes at the bottom, is taken.
func TestToolSchemaDeepest(t *testing.T) {
	e := newEnv(t, nil)
	e.Model.Enqueue(fake.Text("Done."))
	body := `{"threadId":"t1","runId":"r1","messages":[{"id":"u","role":"user","content":"hi"}],` +
		`"tools":[{"name":"deep","description":"x","parameters":{"type":"object","properties":{"a":` + schematest.Deep(61, 64<<10) + `}}}]}`
	if r := e.post("/agui", body); r.last()["type"] != "RUN_FINISHED" {
		t.Fatalf("%d %s", r.status, r.body)
	}
}
