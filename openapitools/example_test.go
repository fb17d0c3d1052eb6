package openapitools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/toolnexus/toolnexus-go/openapitools"
)

const petstore = `openapi: 3.0.3
info: {title: Pets, version: "1"}
servers: [{url: "https://pets.example/v1"}]
security: [{key: []}]
paths:
  /pets/{petId}:
    get:
      operationId: getPet
      summary: Get a pet by its id.
      parameters:
        - {name: petId, in: path, required: true, schema: {type: integer}}
        - {name: fields, in: query, style: form, explode: false, schema: {type: array, items: {type: string}}}
      responses: {"200": {description: the pet, content: {application/json: {schema: {type: object}}}}}
    delete:
      operationId: deletePet
      parameters: [{name: petId, in: path, required: true, schema: {type: integer}}]
      responses: {"204": {description: deleted}}
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-API-Key}
`

// Each operation is a tool; its arguments are the parameters (and "body").
func Example() {
	api, err := openapitools.Parse(context.Background(), []byte(petstore), &openapitools.Options{
		Credentials: map[string]openapitools.Credential{"key": openapitools.APIKey("secret")},
	})
	if err != nil {
		panic(err)
	}
	for _, op := range api.Operations() {
		schema, _ := json.Marshal(op.Tool.InputSchema)
		fmt.Printf("%s (%s %s, approval: %v)\n  %s\n", op.Name, op.Method, op.Path, op.NeedsApproval, schema)
	}
	// Output:
	// getPet (GET /pets/{petId}, approval: false)
	//   {"type":"object","properties":{"petId":{"type":"integer"},"fields":{"type":"array","items":{"type":"string"}}},"required":["petId"],"additionalProperties":false}
	// deletePet (DELETE /pets/{petId}, approval: true)
	//   {"type":"object","properties":{"petId":{"type":"integer"}},"required":["petId"],"additionalProperties":false}
}

// A call makes the request and returns what the model reads: the status
// and the body.
func ExampleOperation_call() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"request": %q, "key": %q}`, r.URL.RequestURI(), r.Header.Get("X-API-Key"))
	}))
	defer srv.Close()
	api, err := openapitools.Parse(context.Background(), []byte(petstore), &openapitools.Options{
		BaseURL:     srv.URL,
		Credentials: map[string]openapitools.Credential{"key": openapitools.APIKey("secret")},
	})
	if err != nil {
		panic(err)
	}
	op, _ := api.Lookup("getPet")
	r := op.Tool.Execute(context.Background(), map[string]any{"petId": 7.0, "fields": []any{"name", "age"}})
	answer, _ := json.Marshal(r.Output)
	fmt.Println(string(answer))
	// Output:
	// {"status":200,"content_type":"application/json","body":{"key":"secret","request":"/pets/7?fields=name,age"}}
}

// The search mode declares two tools however large the API.
func ExampleAPI_SearchTools() {
	api, err := openapitools.Parse(context.Background(), []byte(petstore), nil)
	if err != nil {
		panic(err)
	}
	tools := api.SearchTools()
	r := tools[0].Execute(context.Background(), map[string]any{"query": "delete a pet"})
	var found struct {
		Operations []struct{ Name, Method, Path string }
	}
	b, _ := json.Marshal(r.Output)
	json.Unmarshal(b, &found)
	fmt.Println(tools[0].Name, tools[1].Name)
	for _, op := range found.Operations {
		fmt.Println(op.Name, op.Method, op.Path)
	}
	// Output:
	// search_operations call_operation
	// deletePet DELETE /pets/{petId}
	// getPet GET /pets/{petId}
}
