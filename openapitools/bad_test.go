package openapitools_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/geminiadapter"
	"github.com/toolnexus/toolnexus-go/openapitools"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// Whatever is not a description is a clear error.
func TestNotADescription(t *testing.T) {
	for name, data := range map[string]string{
		"empty":                  "",
		"json array":             "[1, 2]",
		"yaml without a version": "info: {title: x}\npaths: {}\n",
		"openapi 2":              `{"openapi": "2.0", "info": {"title": "t", "version": "1"}, "paths": {}}`,
		"swagger 3":              "swagger: '3.0'\ninfo: {title: t, version: '1'}\npaths: {}\n",
		"broken yaml":            "openapi: 3.0.0\npaths: {/a: [\n",
		"binary":                 "\x00\x01\x02openapi\xff",
		"paths not a map":        "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths: 7\n",
		"yaml alias bomb":        aliasBomb(),
		"nested too deep":        "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths: {}\nx-deep: " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "\n",
	} {
		_, err := openapitools.Parse(context.Background(), []byte(data), nil)
		if !errors.Is(err, openapitools.ErrInvalidDescription) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func aliasBomb() string {
	var b strings.Builder
	b.WriteString("openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths: {}\nx-a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	prev := "a"
	for i := 0; i < 9; i++ {
		name := fmt.Sprintf("b%d", i)
		fmt.Fprintf(&b, "x-%s: &%s [%s]\n", name, name, strings.TrimSuffix(strings.Repeat("*"+prev+", ", 9), ", "))
		prev = name
	}
	return b.String()
}

// describe wraps components in a description with one operation whose
// body is the schema A.
func describe(components string) string {
	return `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /a:
    post:
      operationId: op
      requestBody: {content: {application/json: {schema: {$ref: "#/components/schemas/A"}}}}
      responses: {"200": {description: ok}}
  /fine:
    get: {operationId: fine, responses: {"200": {description: ok}}}
components:
` + components
}

// A hostile schema costs its operation, with a reason, never the rest of
// the description, and never hangs or crashes.
func TestHostileSchemas(t *testing.T) {
	var laughs strings.Builder
	laughs.WriteString("  schemas:\n    A: {$ref: '#/components/schemas/L0'}\n")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&laughs, "    L%d: {type: object, properties: {a: {$ref: '#/components/schemas/L%d'}, b: {$ref: '#/components/schemas/L%d'}}}\n", i, i+1, i+1)
	}
	laughs.WriteString("    L40: {type: string}\n")
	deep := "  schemas:\n    A: " + strings.Repeat("{type: object, properties: {a: ", 200) + "{type: string}" + strings.Repeat("}}", 200) + "\n"
	for name, tc := range map[string]struct {
		components string
		want       error
	}{
		"a $ref cycle":      {"  schemas:\n    A: {$ref: '#/components/schemas/B'}\n    B: {$ref: '#/components/schemas/A'}\n", openapitools.ErrUnsupported},
		"a $ref to nothing": {"  schemas:\n    A: {$ref: '#/components/schemas/Nope'}\n", nil},
		"an allOf loop":     {"  schemas:\n    A: {allOf: [{$ref: '#/components/schemas/B'}]}\n    B: {allOf: [{$ref: '#/components/schemas/A'}]}\n", openapitools.ErrUnsupported},
		"billion laughs":    {laughs.String(), toolset.ErrSchemaTooLarge},
		"nested too deep":   {deep, openapitools.ErrUnsupported},
	} {
		t.Run(name, func(t *testing.T) {
			api, err := openapitools.Parse(context.Background(), []byte(describe(tc.components)), nil)
			if tc.want == nil {
				if !errors.Is(err, openapitools.ErrInvalidDescription) {
					t.Errorf("Parse: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			op, _ := api.Lookup("op")
			if op == nil || op.Tool != nil || !errors.Is(op.Err, tc.want) {
				t.Errorf("op: %+v, want an error wrapping %v", op, tc.want)
			}
			if fine, _ := api.Lookup("fine"); fine == nil || fine.Tool == nil {
				t.Error("the other operation is lost")
			}
		})
	}
	// A parameter $ref cycle too.
	api, err := openapitools.Parse(context.Background(), []byte(`openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /p: {get: {operationId: p, parameters: [{$ref: "#/components/parameters/P"}], responses: {"200": {description: ok}}}}
components:
  parameters:
    P: {$ref: "#/components/parameters/Q"}
    Q: {$ref: "#/components/parameters/P"}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if op, _ := api.Lookup("p"); op.Tool != nil || !errors.Is(op.Err, openapitools.ErrUnsupported) {
		t.Errorf("parameter cycle: %+v", op)
	}
}

// $refs to other documents are refused unless allowed; when allowed, URLs
// are fetched with the program's client, and files are read from the
// description's directory only.
func TestExternalRefs(t *testing.T) {
	var fetched []string
	schemas := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetched = append(fetched, r.URL.Path)
		w.Header().Set("Content-Type", "application/yaml")
		fmt.Fprintln(w, "Thing: {type: object, required: [name], properties: {name: {type: string}}}")
	}))
	defer schemas.Close()
	remote := strings.Replace(describe("  schemas:\n    A: {$ref: '"+schemas.URL+"/schemas.yaml#/Thing'}\n"), "", "", 1)
	if _, err := openapitools.Parse(context.Background(), []byte(remote), nil); !errors.Is(err, openapitools.ErrExternalRef) {
		t.Errorf("refused remote $ref: %v", err)
	}
	if len(fetched) != 0 {
		t.Fatalf("fetched %v", fetched)
	}
	api, err := openapitools.Parse(context.Background(), []byte(remote), &openapitools.Options{AllowExternalRefs: true, HTTPClient: schemas.Client()})
	if err != nil {
		t.Fatal(err)
	}
	if op, _ := api.Lookup("op"); op.Tool == nil || len(fetched) != 1 {
		t.Errorf("allowed remote $ref: %+v, fetched %v", op, fetched)
	}

	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "things.yaml"), []byte("Thing: {type: string}\n"), 0o600)
	os.MkdirAll(filepath.Join(dir, "api"), 0o700)
	os.WriteFile(filepath.Join(dir, "api", "ok.yaml"), []byte(describe("  schemas:\n    A: {$ref: 'parts.yaml#/Thing'}\n")), 0o600)
	os.WriteFile(filepath.Join(dir, "api", "parts.yaml"), []byte("Thing: {type: string}\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "api", "escape.yaml"), []byte(describe("  schemas:\n    A: {$ref: '../things.yaml#/Thing'}\n")), 0o600)
	os.WriteFile(filepath.Join(dir, "api", "absolute.yaml"), []byte(describe("  schemas:\n    A: {$ref: '/etc/passwd#/Thing'}\n")), 0o600)
	if _, err := openapitools.ParseFile(context.Background(), filepath.Join(dir, "api", "ok.yaml"), nil); !errors.Is(err, openapitools.ErrExternalRef) {
		t.Errorf("refused file $ref: %v", err)
	}
	if api, err := openapitools.ParseFile(context.Background(), filepath.Join(dir, "api", "ok.yaml"), &openapitools.Options{AllowExternalRefs: true}); err != nil {
		t.Errorf("allowed file $ref: %v", err)
	} else if op, _ := api.Lookup("op"); op.Tool == nil {
		t.Errorf("allowed file $ref: %v", op.Err)
	}
	for _, f := range []string{"escape.yaml", "absolute.yaml"} {
		if _, err := openapitools.ParseFile(context.Background(), filepath.Join(dir, "api", f), &openapitools.Options{AllowExternalRefs: true}); !errors.Is(err, openapitools.ErrExternalRef) {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// A description larger than the limit is refused as it is read: a server
// that sends without end is not read to its end.
func TestDescriptionTooLarge(t *testing.T) {
	endless := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths: {}\nx-pad: "))
		pad := []byte(strings.Repeat("x", 1<<16))
		for r.Context().Err() == nil {
			if _, err := w.Write(pad); err != nil {
				return
			}
		}
	}))
	defer endless.Close()
	_, err := openapitools.ParseURL(context.Background(), endless.URL+"/openapi.yaml", &openapitools.Options{MaxDescriptionBytes: 1 << 20, HTTPClient: endless.Client()})
	if !errors.Is(err, openapitools.ErrTooLarge) {
		t.Errorf("endless URL: %v", err)
	}
	file := filepath.Join(t.TempDir(), "big.yaml")
	os.WriteFile(file, []byte("openapi: 3.0.0\n"+strings.Repeat("#", 4096)), 0o600)
	if _, err := openapitools.ParseFile(context.Background(), file, &openapitools.Options{MaxDescriptionBytes: 1024}); !errors.Is(err, openapitools.ErrTooLarge) {
		t.Errorf("big file: %v", err)
	}
}

// ParseURL reads a description from a server, with the program's client,
// and takes relative server URLs from it.
func TestParseURL(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/spec/openapi.json":
			fmt.Fprint(w, `{"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "servers": [{"url": "/api"}],
				"paths": {"/ping": {"get": {"operationId": "ping", "responses": {"200": {"description": "ok"}}}}}}`)
		case "/api/ping":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "pong")
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	api, err := openapitools.ParseURL(context.Background(), srv.URL+"/spec/openapi.json", &openapitools.Options{HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	r := operation(t, api, "ping").Tool.Execute(context.Background(), nil)
	if r.IsError || r.Output.(*openapitools.Response).Body != "pong" {
		t.Errorf("ping: %+v", r)
	}
	if _, err := openapitools.ParseURL(context.Background(), "file:///etc/passwd", nil); err == nil {
		t.Error("a file URL was read")
	}
	// A description read from bytes with a relative server needs a base.
	api, err = openapitools.Parse(context.Background(), []byte(`{"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "servers": [{"url": "/api"}],
		"paths": {"/ping": {"get": {"operationId": "ping", "responses": {"200": {"description": "ok"}}}}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := operation(t, api, "ping").Tool.Execute(context.Background(), nil); !errors.Is(r.Err, openapitools.ErrNoServer) {
		t.Errorf("relative server without a base: %+v", r)
	}
}

// Server variables take their defaults, or the program's values, which
// must be in the variable's enum.
func TestServerVariables(t *testing.T) {
	api := parseFile(t, "shop31.yaml", &openapitools.Options{ServerVariables: map[string]string{"region": "us"},
		Credentials: map[string]openapitools.Credential{"key": openapitools.APIKey("k")},
		Prepare: func(ctx context.Context, op *openapitools.Operation, req *http.Request) error {
			return fmt.Errorf("stop before sending %s", req.URL)
		}})
	r := operation(t, api, "getItem").Tool.Execute(context.Background(), map[string]any{"itemId": "1"})
	if !strings.Contains(fmt.Sprint(r.Output), "stop before sending https://us.shop.example/api/v1/items/1") {
		t.Errorf("result %+v", r)
	}
	if _, err := openapitools.ParseFile(context.Background(), "testdata/shop31.yaml", &openapitools.Options{ServerVariables: map[string]string{"region": "mars"}}); err == nil {
		t.Error("a value outside the enum was taken")
	}
	if _, err := openapitools.ParseFile(context.Background(), "testdata/shop31.yaml", &openapitools.Options{ServerVariables: map[string]string{"planet": "mars"}}); err == nil {
		t.Error("an unknown variable was taken")
	}
}

// Every declaration of a hostile description is still one the adapter
// can make.
func checkDeclarations(t testing.TB, api *openapitools.API) {
	for _, tl := range api.Tools() {
		if _, err := geminiadapter.Declaration(tl); err != nil {
			t.Errorf("%s: %v", tl.Name, err)
		}
	}
}
