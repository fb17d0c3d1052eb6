package fake_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

// A two-turn conversation with parallel function calls. The model name
// starts with "gemini-3", so the server gives the calls ids and the first
// call a thought signature, and checks that the history sent back keeps
// them.
func Example() {
	srv := fake.NewServer()
	defer srv.Close()
	srv.Enqueue(
		fake.Calls(
			fake.Call("get_weather", map[string]any{"city": "Paris"}),
			fake.Call("get_weather", map[string]any{"city": "London"})),
		fake.Text("Sunny in Paris, rain in London."),
	)

	ctx := context.Background()
	client := srv.Client()
	const model = "gemini-3-flash-preview"
	cfg := &genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{
		Name:       "get_weather",
		Parameters: &genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{"city": {Type: genai.TypeString}}},
	}}}}}
	history := []*genai.Content{genai.NewContentFromText("Weather in Paris and London?", genai.RoleUser)}

	resp, err := client.Models.GenerateContent(ctx, model, history, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	history = append(history, resp.Candidates[0].Content) // keeps ids and signatures
	answers := &genai.Content{Role: genai.RoleUser}
	for _, call := range resp.FunctionCalls() {
		fmt.Println("call", call.ID, call.Name, call.Args["city"])
		part := genai.NewPartFromFunctionResponse(call.Name, map[string]any{"result": "sunny"})
		part.FunctionResponse.ID = call.ID
		answers.Parts = append(answers.Parts, part)
	}
	history = append(history, answers)

	resp, err = client.Models.GenerateContent(ctx, model, history, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Text())
	fmt.Println("rejections:", len(srv.Rejections()))
	// Output:
	// call fc-1 get_weather Paris
	// call fc-2 get_weather London
	// Sunny in Paris, rain in London.
	// rejections: 0
}

// A reply function computes replies from the request: here, an echo model.
func ExampleServer_SetReplyFunc() {
	srv := fake.NewServer()
	defer srv.Close()
	srv.SetReplyFunc(func(r *fake.Request) *fake.Reply {
		last := r.Contents[len(r.Contents)-1]
		return fake.Text(strings.ToUpper(last.Parts[0].Text))
	})

	resp, err := srv.Client().Models.GenerateContent(context.Background(), "gemini-2.5-flash",
		genai.Text("hello, fake"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Text())
	// Output: HELLO, FAKE
}

// A stream cut after two events: the client gets two chunks, then an error.
func ExampleReply_WithFault() {
	srv := fake.NewServer()
	defer srv.Close()
	srv.Enqueue(fake.Text("one two three").WithTextChunk(4).WithFault(fake.FaultCutStream, 2))

	for chunk, err := range srv.Client().Models.GenerateContentStream(context.Background(), "gemini-2.5-flash",
		genai.Text("count"), nil) {
		if err != nil {
			fmt.Println("error:", err)
			break
		}
		fmt.Printf("chunk %q\n", chunk.Text())
	}
	// Output:
	// chunk "one "
	// chunk "two "
	// error: unexpected EOF
}

// A 429 carries RetryInfo, which the SDK does not read: callers find it in
// the APIError's details.
func ExampleRateLimited() {
	srv := fake.NewServer()
	defer srv.Close()
	srv.Enqueue(fake.RateLimited(37 * time.Second))

	_, err := srv.Client().Models.GenerateContent(context.Background(), "gemini-2.5-flash", genai.Text("hi"), nil)
	var ae genai.APIError
	if errors.As(err, &ae) {
		for _, d := range ae.Details {
			if d["@type"] == "type.googleapis.com/google.rpc.RetryInfo" {
				fmt.Println(ae.Code, ae.Status, d["retryDelay"])
			}
		}
	}
	// Output: 429 RESOURCE_EXHAUSTED 37s
}

// Requests the real API rejects are rejected with its status and message,
// and recorded.
func ExampleServer_Rejections() {
	srv := fake.NewServer()
	defer srv.Close()

	cfg := &genai.GenerateContentConfig{Tools: []*genai.Tool{{}}} // sent as tools:[{}]
	_, err := srv.Client().Models.GenerateContent(context.Background(), "gemini-2.5-flash", genai.Text("hi"), cfg)
	fmt.Println(err != nil)
	for _, r := range srv.Rejections() {
		fmt.Printf("#%d %s %d %s\n", r.Seq, r.Rule, r.Err.Code, r.Err.Status)
	}
	// Output:
	// true
	// #1 tool-type 400 INVALID_ARGUMENT
}
