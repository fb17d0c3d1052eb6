package mcptools_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolnexus/toolnexus-go/mcptools"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// A server's tools, here one written with go-sdk and reached in memory,
// become toolset tools; the model sees Gemini-safe names.
func ExampleConnect() {
	type greetIn struct {
		Name string `json:"name" jsonschema:"who to greet"`
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "v1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "say hi", Description: "Greet someone"},
		func(_ context.Context, _ *mcp.CallToolRequest, in greetIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Hi " + in.Name}}}, nil, nil
		})

	ctx := context.Background()
	client, err := mcptools.Connect(ctx, mcptools.InMemory(srv), &mcptools.Options{Prefix: "greeter_"})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	set := toolset.MustNew(client.Tools()...)
	fmt.Println(set.Names())

	tool, _ := set.Lookup("greeter_say_hi")
	fmt.Println(tool.Execute(ctx, map[string]any{"name": "Ada"}).Output)
	fmt.Println(tool.Execute(ctx, map[string]any{}).Output)
	// Output:
	// [greeter_say_hi]
	// Hi Ada
	// invalid arguments for greeter_say_hi: required: missing properties: ["name"]
}

// A toolset served over MCP, here to go-sdk's own client.
func ExampleNewServer() {
	type addIn struct {
		A float64 `json:"a"`
		B float64 `json:"b"`
	}
	add := toolset.MustFunc("add", "Add two numbers", func(_ context.Context, in addIn) (float64, error) {
		return in.A + in.B, nil
	})
	srv := mcptools.NewServer(toolset.MustNew(add), &mcp.Implementation{Name: "calculator", Version: "v1"})

	ctx := context.Background()
	serverSide, clientSide := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, serverSide, nil); err != nil {
		log.Fatal(err)
	}
	session, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "v1"}, nil).Connect(ctx, clientSide, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()
	for _, args := range []map[string]any{{"a": 2, "b": 40}, {"a": "two"}} {
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: args})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(res.IsError, res.Content[0].(*mcp.TextContent).Text)
	}
	// Output:
	// false 42
	// true invalid arguments for add: argument "a": two has type "string", want "number"
}

// A local server started as a subprocess; Close ends it.
func ExampleCommand() {
	ctx := context.Background()
	client, err := mcptools.Connect(ctx, mcptools.Command("go", "run", "./examples/mcpserver"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	for _, t := range client.Tools() {
		fmt.Println(t.Name)
	}
}

// A toolset served only to the clients with a valid token for this
// server: the others are told where its metadata is, and a tool sees who
// calls it.
func ExampleAuthOptions() {
	hello := toolset.MustDefine(toolset.Tool{Name: "hello", Description: "Greet the caller",
		Run: func(ctx context.Context, _ map[string]any) (any, error) {
			return "hello " + mcptools.TokenInfo(ctx).UserID, nil
		}})
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	defer ts.Close()
	authOpts := &mcptools.AuthOptions{
		Resource:             ts.URL + "/mcp",
		AuthorizationServers: []string{"https://login.example.com"},
		// A real verifier checks a JWT or asks the authorization server.
		Verify: func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
			if token != "token-of-ada" {
				return nil, auth.ErrInvalidToken
			}
			return &auth.TokenInfo{UserID: "ada", Expiration: time.Now().Add(time.Hour),
				Extra: map[string]any{"aud": ts.URL + "/mcp"}}, nil
		},
	}
	mux.Handle("/mcp", mcptools.NewHTTPHandler(toolset.MustNew(hello), nil, &mcptools.HandlerOptions{Auth: authOpts}))
	mux.Handle(authOpts.MetadataPath(), authOpts.MetadataHandler())

	resp, err := http.Post(ts.URL+"/mcp", "application/json", strings.NewReader("{}"))
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, strings.Replace(resp.Header.Get("WWW-Authenticate"), ts.URL, "http://HOST", 1))

	client, err := mcptools.Connect(context.Background(),
		mcptools.HTTP(ts.URL+"/mcp", &http.Client{Transport: bearer{"token-of-ada"}}), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	fmt.Println(client.Tools()[0].Execute(context.Background(), nil).Output)
	// Output:
	// 401 Bearer resource_metadata="http://HOST/.well-known/oauth-protected-resource/mcp"
	// hello ada
}

// A served tool asks its client's user with Elicit. A 2026-07-28 client
// (the default) is answered input_required and calls again with the
// answer; an older one is asked on its session. Either way the client's
// ElicitationHandler answers.
func ExampleElicit() {
	book := toolset.MustDefine(toolset.Tool{Name: "book", Description: "Book a table",
		Run: func(ctx context.Context, _ map[string]any) (any, error) {
			res, err := mcptools.Elicit(ctx, "guests", &mcp.ElicitParams{Message: "For how many?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}}})
			if err != nil {
				return nil, err // ErrInputRequired: the client will call again
			}
			return fmt.Sprintf("booked for %v", res.Content["n"]), nil
		}})
	ts := httptest.NewServer(mcptools.NewHTTPHandler(toolset.MustNew(book), nil, nil))
	defer ts.Close()

	for _, version := range []string{"", "2025-11-25"} {
		client, err := mcptools.Connect(context.Background(), mcptools.HTTP(ts.URL, nil), &mcptools.Options{
			ProtocolVersion: version,
			ClientOptions: &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"n": 4}}, nil
			}},
		})
		if err != nil {
			log.Fatal(err)
		}
		r := client.Tools()[0].Execute(context.Background(), nil)
		fmt.Println(client.ProtocolVersion(), r.Output)
		client.Close()
	}
	// Output:
	// 2026-07-28 booked for 4
	// 2025-11-25 booked for 4
}
