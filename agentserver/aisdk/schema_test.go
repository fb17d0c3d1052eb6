package aisdk_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/internal/schematest"
)

// TestToolSchemaTooLarge is issue 32's attack through the AI SDK's body:
// a browser tool whose $defs each refer twice to the one before. Both 14
// and 16 levels are a 400 schema_too_large, before anything runs.
func TestToolSchemaTooLarge(t *testing.T) {
	e := newEnv(t, nil)
	msg := `[{"id":"u1","role":"user","parts":[{"type":"text","text":"hi"}]}]`
	for _, levels := range []int{14, 16} {
		body := `{"id":"c1","messages":` + msg + `,"tools":[{"name":"t","inputSchema":` + schematest.Doubling(levels) + `}]}`
		r := e.do("POST", "/api/chat", body)
		if r.status != 400 || r.code() != "schema_too_large" || !strings.Contains(r.body, "too large") {
			t.Errorf("%d levels (%d bytes): %d %s; want 400 schema_too_large", levels, len(body), r.status, r.body)
		}
	}
	if n := len(e.Model.Requests()); n != 0 {
		t.Errorf("%d requests reached the model", n)
	}
}

// TestToolSchemaSharedDefs: a browser tool whose definition is shared by
// twenty properties reaches the model with its $defs.
func TestToolSchemaSharedDefs(t *testing.T) {
	e := newEnv(t, nil)
	e.Model.Enqueue(fake.Text("Planned."))
	body := `{"id":"c1","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"Plan the route"}]}],` +
		`"tools":[{"name":"deliver","description":"Plans a delivery","inputSchema":` + schematest.Shared(20) + `}]}`
	if r := e.do("POST", "/api/chat", body); r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	sent := e.Model.Requests()[0].Body
	if !bytes.Contains(sent, []byte(`"parametersJsonSchema":{"$defs":{"address":`)) || bytes.Count(sent, []byte(`"postcode"`)) != 1 {
		t.Errorf("the model's request (%d bytes) does not hold the tool with its $defs, the address once", len(sent))
	}
}

// TestToolSchemaTooDeep is issue 43's attack through the AI SDK's body: a
// browser tool whose schema nests 1,000 levels (21 KB), and one of 150
// KB, are a 400 schema_too_deep, found before any decoding.
func TestToolSchemaTooDeep(t *testing.T) {
	e := newEnv(t, nil)
	msg := `[{"id":"u1","role":"user","parts":[{"type":"text","text":"hi"}]}]`
	for _, schema := range []string{schematest.Nested(1000), schematest.NestedSize(150 << 10)} {
		body := `{"id":"c1","messages":` + msg + `,"tools":[{"name":"deep","inputSchema":` + schema + `}]}`
		r := e.do("POST", "/api/chat", body)
		if r.status != 400 || r.code() != "schema_too_deep" || !strings.Contains(r.body, `browser tool \"deep\": its schema nests more than 64 levels`) {
			t.Errorf("%d bytes: %d %s; want 400 schema_too_deep", len(body), r.status, r.body)
		}
	}
	if n := len(e.Model.Requests()); n != 0 {
		t.Errorf("%d requests reached the model", n)
	}
}

// TestToolSchemaDeepest: a browser tool as deep as a schema may nest is
// taken.
func TestToolSchemaDeepest(t *testing.T) {
	e := newEnv(t, nil)
	e.Model.Enqueue(fake.Text("Done."))
	body := `{"id":"c1","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"hi"}]}],` +
		`"tools":[{"name":"deep","inputSchema":{"type":"object","properties":{"a":` + schematest.Deep(61, 64<<10) + `}}}]}`
	if r := e.do("POST", "/api/chat", body); r.status != 200 || r.types()[len(r.types())-1] != "finish" {
		t.Fatalf("%d %s %v", r.status, r.body, r.types())
	}
}
