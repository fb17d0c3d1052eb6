package geminitest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/geminiinteractions"
	"github.com/toolnexus/toolnexus-go/geminitest"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// assistant is the code under test in these examples: a weather assistant
// an application builds on the agent loop. It takes its genai client from
// the caller, so that a test can hand it one that talks to the fake.
type assistant struct {
	client *genai.Client
}

type weatherIn struct {
	City string `json:"city" jsonschema:"the city"`
}

func (a assistant) config() agent.Config {
	weather := toolset.MustFunc("get_weather", "Current weather for a city",
		func(ctx context.Context, in weatherIn) (string, error) { return "sunny in " + in.City, nil })
	return agent.Config{
		Models: a.client.Models,
		Model:  "gemini-3-flash-preview",
		Tools:  toolset.MustNew(weather),
		Retry:  agent.RetryPolicy{InitialDelay: 10 * time.Millisecond},
	}
}

// Ask answers a question, calling tools as the model asks.
func (a assistant) Ask(ctx context.Context, question string) (string, error) {
	res, err := agent.Run(ctx, a.config(), genai.Text(question))
	if err != nil {
		return "", err
	}
	return res.Text, nil
}

// Stream answers a question, writing the answer as it arrives.
func (a assistant) Stream(ctx context.Context, question string, out *strings.Builder) error {
	ag, err := agent.New(a.config())
	if err != nil {
		return err
	}
	for ev, err := range ag.Stream(ctx, genai.Text(question)) {
		if err != nil {
			return err
		}
		if ev.Kind == agent.EventText {
			out.WriteString(ev.Text)
		}
	}
	return nil
}

// A test of the assistant: script the model's side of the conversation,
// run the assistant, then check the tool calls it answered and what it sent.
func Example() {
	srv := geminitest.NewServer() // in a test: srv := geminitest.Start(t)
	defer srv.Close()
	srv.Enqueue(
		geminitest.Calls(
			geminitest.Call("get_weather", map[string]any{"city": "Paris"}),
			geminitest.Call("get_weather", map[string]any{"city": "Tokyo"})),
		geminitest.Text("Sunny in Paris and in Tokyo."),
	)

	answer, err := assistant{srv.Client()}.Ask(context.Background(), "Weather in Paris and Tokyo?")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(answer)

	// The second request answered the model's two calls, echoing their ids.
	second := srv.Requests()[1]
	calls := second.FunctionCalls("get_weather")
	for i, r := range second.LastFunctionResponses("get_weather") {
		fmt.Printf("%s(%v) -> %v (id echoed: %t)\n", r.Name, calls[i].Args["city"], r.Response["result"], r.ID == calls[i].ID)
	}
	fmt.Println("declared:", second.FunctionDeclaration("get_weather").Description)
	// In a test, srv.AssertComplete(t) checks these three.
	fmt.Println("rejected:", len(srv.Rejections()), "unscripted:", srv.Unscripted(), "unused:", srv.Pending())
	// Output:
	// Sunny in Paris and in Tokyo.
	// get_weather(Paris) -> sunny in Paris (id echoed: true)
	// get_weather(Tokyo) -> sunny in Tokyo (id echoed: true)
	// declared: Current weather for a city
	// rejected: 0 unscripted: 0 unused: 0
}

// The assistant retries when the quota runs out, waiting what the 429's
// RetryInfo asks.
func Example_rateLimit() {
	srv := geminitest.NewServer()
	defer srv.Close()
	srv.Enqueue(
		geminitest.RateLimited(50*time.Millisecond),
		geminitest.Text("Sunny."),
	)

	start := time.Now()
	answer, err := assistant{srv.Client()}.Ask(context.Background(), "Weather?")
	fmt.Println(answer, err)
	fmt.Println("requests:", len(srv.Requests()), "waited the retry delay:", time.Since(start) >= 50*time.Millisecond)
	// Output:
	// Sunny. <nil>
	// requests: 2 waited the retry delay: true
}

// The assistant survives a stream cut before its first event: it asks
// again, and the answer streams in pieces.
func Example_cutStream() {
	srv := geminitest.NewServer()
	defer srv.Close()
	srv.Enqueue(
		geminitest.Text("Sunny in Paris.").WithTextChunk(6).WithFault(geminitest.FaultCutStream, 0),
		geminitest.Text("Sunny in Paris.").WithTextChunk(6),
	)

	var out strings.Builder
	err := assistant{srv.Client()}.Stream(context.Background(), "Weather in Paris?", &out)
	fmt.Printf("%q %v\n", out.String(), err)
	fmt.Println("requests:", len(srv.Requests()))
	// Output:
	// "Sunny in Paris." <nil>
	// requests: 2
}

// The same assistant on Vertex AI: the client sends the project and a
// bearer token to the Vertex AI routes, and the server answers as Vertex AI
// does, without function-call ids.
func ExampleServer_VertexClient() {
	srv := geminitest.NewServer()
	defer srv.Close()
	srv.Enqueue(
		geminitest.Calls(geminitest.Call("get_weather", map[string]any{"city": "Oslo"})),
		geminitest.Text("Sunny in Oslo."),
	)

	answer, err := assistant{srv.VertexClient()}.Ask(context.Background(), "Weather in Oslo?")
	fmt.Println(answer, err)
	req := srv.LastRequest()
	fmt.Println(req.Backend, req.APIVersion, req.Project, req.Location, req.Token != "")
	fmt.Println("rejected:", len(srv.Rejections()))
	// Output:
	// Sunny in Oslo. <nil>
	// BackendVertexAI v1beta1 fake-project us-central1 true
	// rejected: 0
}

// A client that drops the thought signature Gemini 3 requires gets the real
// API's 400, and the rejection says which rule it broke.
func ExampleServer_Rejections() {
	srv := geminitest.NewServer()
	defer srv.Close()

	history := []*genai.Content{
		genai.NewContentFromText("Weather in Paris?", genai.RoleUser),
		{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: geminitest.Call("get_weather", map[string]any{"city": "Paris"})}}},
		{Role: genai.RoleUser, Parts: []*genai.Part{genai.NewPartFromFunctionResponse("get_weather", map[string]any{"result": "sunny"})}},
	}
	_, err := srv.Client().Models.GenerateContent(context.Background(), "gemini-3-flash-preview", history, nil)
	var apiErr genai.APIError
	fmt.Println(errors.As(err, &apiErr), apiErr.Code, apiErr.Status)
	for _, r := range srv.Rejections() {
		fmt.Printf("#%d %s\n", r.Seq, r.Rule)
	}
	// Output:
	// true 400 INVALID_ARGUMENT
	// #1 thought-signature
}

// The same script serves the Interactions API: the agent runs on it through
// geminiinteractions, and the server keeps the conversation, so that the
// second request sends only the function results.
func Example_interactions() {
	srv := geminitest.NewServer() // in a test: srv := geminitest.Start(t)
	defer srv.Close()
	srv.Enqueue(
		geminitest.Calls(
			geminitest.Call("get_weather", map[string]any{"city": "Paris"}),
			geminitest.Call("get_weather", map[string]any{"city": "Tokyo"})),
		geminitest.Text("Sunny in Paris and in Tokyo."),
	)
	cfg := assistant{srv.Client()}.config()
	cfg.Models = geminiinteractions.New(srv.Client(), geminiinteractions.Config{})
	res, err := agent.Run(context.Background(), cfg, genai.Text("Weather in Paris and Tokyo?"))
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(res.Text)

	first, second := srv.Requests()[0], srv.Requests()[1]
	fmt.Println(second.Method, "continues the first:", second.PreviousInteractionID == first.InteractionID)
	fmt.Println("sent:", len(second.Input), "content, the conversation:", len(second.Contents), "contents")
	for _, r := range second.LastFunctionResponses("get_weather") {
		fmt.Printf("%s -> %v\n", r.Name, r.Response["result"])
	}
	// Output:
	// Sunny in Paris and in Tokyo.
	// interactions.create continues the first: true
	// sent: 1 content, the conversation: 3 contents
	// get_weather -> sunny in Paris
	// get_weather -> sunny in Tokyo
}

// An answer longer than one request holds: the server cuts it twice, and
// each continuation must come back with the token of the hop before it.
// The assistant's agent continues it, and the answer is whole.
func Example_longAnswer() {
	srv := geminitest.NewServer()
	defer srv.Close()
	srv.Enqueue(geminitest.Hops(geminitest.Text("Rain in the morning, "), geminitest.Text("sun at noon, "), geminitest.Text("wind at night."))...)

	answer, err := assistant{srv.Client()}.Ask(context.Background(), "The day's weather in Oslo, hour by hour?")
	fmt.Println(answer, err)
	reqs := srv.Requests()
	fmt.Println("requests:", len(reqs), "the last continues with a token:", len(reqs[2].ContinuationToken) > 0)
	// Output:
	// Rain in the morning, sun at noon, wind at night. <nil>
	// requests: 3 the last continues with a token: true
}

// A model that searches the web with Google Search, a tool the API runs
// itself, beside the assistant's own: the search's parts come back in the
// model's turn, and the server checks they go back as they came.
func Example_googleSearch() {
	srv := geminitest.NewServer()
	defer srv.Close()
	turn := append(geminitest.GoogleSearch("Oslo weather"), &genai.Part{FunctionCall: geminitest.Call("get_weather", map[string]any{"city": "Oslo"})})
	srv.Enqueue(geminitest.Parts(turn...), geminitest.Text("Sunny in Oslo."))

	cfg := assistant{srv.Client()}.config()
	cfg.BuiltinTools = []*genai.Tool{{GoogleSearch: &genai.GoogleSearch{}}}
	a, err := agent.New(cfg)
	if err != nil {
		panic(err)
	}
	res, err := a.Run(context.Background(), genai.Text("Weather in Oslo?"))
	fmt.Println(res.Text, err)
	sent := srv.LastRequest().Contents[1].Parts
	fmt.Println("sent back:", agent.ServerToolName(sent[0]), sent[0].ToolCall.ID == sent[1].ToolResponse.ID, "rejections:", len(srv.Rejections()))
	// Output:
	// Sunny in Oslo. <nil>
	// sent back: google_search true rejections: 0
}

// A test of code that caches: the server keeps the caches genai's Caches
// client makes, reports their tokens as cached in the usage of the requests
// that name them, expires them on its clock, and reports a prompt prefix
// sent again within a few minutes as implicitly cached.
func Example_caching() {
	srv := geminitest.NewServer() // in a test: srv := geminitest.Start(t)
	defer srv.Close()
	ctx := context.Background()
	client := srv.Client()
	const model = "gemini-2.5-flash"
	// Caching needs a long prompt: MinCacheTokens(model) tokens, about 4
	// bytes each.
	rules := genai.NewContentFromText(strings.Repeat("Answer in one short sentence. ", 300), "")
	srv.Enqueue(geminitest.Text("Paris."), geminitest.Text("Paris."), geminitest.Text("Rome."))

	// Explicit caching: the code under test makes a cache and names it.
	cache, err := client.Caches.Create(ctx, model, &genai.CreateCachedContentConfig{TTL: 10 * time.Minute, SystemInstruction: rules})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	resp, err := client.Models.GenerateContent(ctx, model, genai.Text("Capital of France?"),
		&genai.GenerateContentConfig{CachedContent: cache.Name})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	u := resp.UsageMetadata
	fmt.Printf("explicit: %d of %d prompt tokens cached; %d cache(s) kept, minimum %d tokens\n",
		u.CachedContentTokenCount, u.PromptTokenCount, len(srv.Caches()), geminitest.MinCacheTokens(model))

	// Ten minutes later the cache is gone, and the API's error says so.
	srv.AdvanceTime(10 * time.Minute)
	_, err = client.Models.GenerateContent(ctx, model, genai.Text("Capital of France?"),
		&genai.GenerateContentConfig{CachedContent: cache.Name})
	var apiErr genai.APIError
	if errors.As(err, &apiErr) {
		fmt.Println("expired:", apiErr.Code, apiErr.Message)
	}

	// Implicit caching: a second prompt with the same system instruction.
	cfg := &genai.GenerateContentConfig{SystemInstruction: rules}
	for _, q := range []string{"Capital of France?", "Capital of Italy?"} {
		resp, err := client.Models.GenerateContent(ctx, model, genai.Text(q), cfg)
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Printf("implicit: %d of %d prompt tokens cached\n", resp.UsageMetadata.CachedContentTokenCount, resp.UsageMetadata.PromptTokenCount)
	}
	// Output:
	// explicit: 2260 of 2274 prompt tokens cached; 1 cache(s) kept, minimum 2048 tokens
	// expired: 403 CachedContent not found (or permission denied)
	// implicit: 0 of 2274 prompt tokens cached
	// implicit: 2260 of 2274 prompt tokens cached
}
