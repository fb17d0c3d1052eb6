package openapitools_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"testing"

	"github.com/toolnexus/toolnexus-go/openapitools"
)

// errStop stops a fuzzed call before it is sent.
var errStop = errors.New("stop")

// Parse never panics or hangs, whatever the bytes: a description is read,
// or refused with an error; each operation is a tool or has a reason; each
// tool has a declaration, and builds a request from the arguments its
// schema suggests without panicking.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"shop31.yaml", "legacy2.yaml", "forms30.json"} {
		data, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(describe("  schemas:\n    A: {$ref: '#/components/schemas/B'}\n    B: {$ref: '#/components/schemas/A'}\n")))
	f.Add([]byte(describe("  schemas:\n    A: {allOf: [{$ref: '#/components/schemas/A'}], discriminator: {propertyName: k}}\n")))
	f.Add([]byte(`swagger: "2.0"
info: {title: t, version: "1"}
paths: {/a/{b}: {post: {consumes: [multipart/form-data], parameters: [{name: b, in: path, type: array, items: {type: integer}, collectionFormat: pipes}, {name: f, in: formData, type: file}], responses: {"200": {description: ok}}}}}
`))
	f.Fuzz(func(t *testing.T, data []byte) {
		api, err := openapitools.Parse(context.Background(), data, &openapitools.Options{
			BaseURL: "http://127.0.0.1:1",
			Prepare: func(context.Context, *openapitools.Operation, *http.Request) error { return errStop },
		})
		if err != nil {
			return
		}
		checkDeclarations(t, api)
		for _, op := range api.Operations() {
			if (op.Tool == nil) == (op.Err == nil) {
				t.Fatalf("%s: tool %v, error %v", op.Name, op.Tool, op.Err)
			}
			if op.Tool != nil {
				op.Tool.Execute(context.Background(), argsFor(op.Tool.Schema()))
			}
		}
	})
}
