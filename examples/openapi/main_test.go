package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
	"google.golang.org/genai"
)

func TestMain(m *testing.M) {
	// genai's dependencies start opencensus's stats worker at init.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"))
}

const shop = "../../openapitools/testdata/shop31.yaml"

func runCmd(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = run(context.Background(), args, &out, &errOut)
	return out.String(), errOut.String(), err
}

// -list prints a JSON line per tool, its declaration as genai's, and the
// counts last.
func TestList(t *testing.T) {
	out, _, err := runCmd(t, "-spec", shop, "-list")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if last := lines[len(lines)-1]; last != "operations=8 tools=8 skipped=0" {
		t.Errorf("last line %q", last)
	}
	for _, line := range lines[:len(lines)-1] {
		var got struct {
			Name        string
			Declaration *genai.FunctionDeclaration
		}
		if err := json.Unmarshal([]byte(line), &got); err != nil || got.Declaration == nil || got.Declaration.Name != got.Name {
			t.Errorf("line %s: %v", line, err)
		}
		if !strings.HasPrefix(line, `{"name":`) {
			t.Errorf("line %s does not start with the name", line)
		}
	}
	if len(lines) != 9 {
		t.Errorf("%d lines", len(lines))
	}
	out, _, err = runCmd(t, "-spec", shop, "-list", "-search")
	if err != nil || !strings.Contains(out, `{"name":"search_operations"`) || !strings.Contains(out, `{"name":"call_operation"`) {
		t.Errorf("-search: %v\n%s", err, out)
	}
	out, _, err = runCmd(t, "-spec", shop, "-list", "-method", "delete")
	if err != nil || !strings.HasSuffix(out, "operations=8 tools=1 skipped=7\n") {
		t.Errorf("-method: %v\n%s", err, out)
	}
}

// An operation that cannot be a tool is counted, and its reason printed.
func TestListSkipped(t *testing.T) {
	spec := filepath.Join(t.TempDir(), "cycle.json")
	os.WriteFile(spec, []byte(`{"openapi": "3.0.3", "info": {"title": "t", "version": "1"},
		"paths": {"/a": {"post": {"operationId": "loop", "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/A"}}}},
			"responses": {"200": {"description": "ok"}}}}, "/b": {"get": {"operationId": "fine", "responses": {"200": {"description": "ok"}}}}},
		"components": {"schemas": {"A": {"$ref": "#/components/schemas/B"}, "B": {"$ref": "#/components/schemas/A"}}}}`), 0o600)
	out, errOut, err := runCmd(t, "-spec", spec, "-list")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out, "operations=2 tools=1 skipped=1\n") || !strings.HasPrefix(errOut, "skipped loop (POST /a): ") || !strings.Contains(errOut, "does not resolve") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", out, errOut)
	}
}

// -call makes the request to -base and prints what the model reads.
func TestCall(t *testing.T) {
	var got *http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		got = r
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `[{"id": "1", "name": "lamp"}]`)
	}))
	defer srv.Close()
	out, _, err := runCmd(t, "-spec", shop, "-call", "listItems", "-args", `{"tags": ["red", "big"]}`, "-base", srv.URL, "-auth", "key=SECRET")
	if err != nil {
		t.Fatal(err)
	}
	var answer map[string]any
	if err := json.Unmarshal([]byte(out), &answer); err != nil {
		t.Fatal(err)
	}
	result, _ := answer["result"].(map[string]any)
	if result["status"] != 200.0 || got.URL.RequestURI() != "/items?tags=red%7Cbig&limit=20" || got.Header.Get("Key") != "SECRET" {
		t.Errorf("answer %s, request %s key %q", out, got.URL, got.Header.Get("Key"))
	}
	// Arguments that break the schema: the model reads why, nothing is sent.
	got = nil
	out, _, err = runCmd(t, "-spec", shop, "-call", "getItem", "-args", `{"itemId": 7}`, "-base", srv.URL, "-auth", "key=SECRET")
	if err != nil || !strings.Contains(out, `"error": "invalid arguments for getItem`) || got != nil {
		t.Errorf("invalid arguments: %v\n%s", err, out)
	}
	// The search mode's call tool.
	out, _, err = runCmd(t, "-spec", shop, "-call", "call_operation", "-args", `{"operation": "getItem", "arguments": {"itemId": "3"}}`, "-base", srv.URL, "-auth", "key=SECRET")
	if err != nil || got == nil || got.URL.Path != "/items/3" {
		t.Errorf("call_operation: %v\n%s", err, out)
	}
	for _, args := range [][]string{
		{"-spec", shop, "-call", "nope"},
		{"-spec", shop, "-call", "getItem", "-args", "[1]"},
		{"-spec", shop},
		{"-spec", shop, "-list", "-call", "getItem"},
		{"-spec", shop, "-list", "-auth", "nope=1"},
		{"-spec", "missing.yaml", "-list"},
	} {
		if _, _, err := runCmd(t, args...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}
