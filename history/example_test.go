package history_test

import (
	"fmt"
	"strings"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/history"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

// A history past the threshold loses its old tool output first; the
// current exchange stays whole.
func ExampleTrimmer() {
	long := strings.Repeat("row ", 2000)
	contents := []*genai.Content{
		genai.NewContentFromText("Summarize the table.", genai.RoleUser),
		genai.NewContentFromFunctionCall("read_table", map[string]any{"name": "sales"}, genai.RoleModel),
		genai.NewContentFromFunctionResponse("read_table", map[string]any{"result": long}, genai.RoleUser),
		genai.NewContentFromText("Sales grew.", genai.RoleModel),
		genai.NewContentFromText("And costs?", genai.RoleUser),
		genai.NewContentFromFunctionCall("read_table", map[string]any{"name": "costs"}, genai.RoleModel),
		genai.NewContentFromFunctionResponse("read_table", map[string]any{"result": long}, genai.RoleUser),
	}
	trim := history.Trimmer{MaxTokens: 5000, KeepToolOutputs: 1}
	fmt.Println("before:", history.Estimate(contents...), "tokens")

	out, err := trim.Prepare(ctx, &agent.HistoryInfo{Contents: contents})
	if err != nil {
		panic(err)
	}
	fmt.Println("after: ", history.Estimate(out...), "tokens,", len(out), "contents")
	old := out[2].Parts[0].FunctionResponse.Response["result"].(string)
	fmt.Println(old[:strings.Index(old, "]")+1])
	// Output:
	// before: 5531 tokens
	// after:  3032 tokens, 7 contents
	// [shortened to save context: the output was 8000 bytes; its first 419 bytes follow]
}

// A history past the threshold loses its oldest exchanges, and the model
// writes a summary of them, which is sent in their place. (The model here
// is the offline fake, which answers the summary call with a fixed text.)
func ExampleSummarizer() {
	srv := fake.NewServer()
	defer srv.Close()
	srv.SetReplyFunc(func(*fake.Request) *fake.Reply {
		return fake.Text("The user asked about sales (they grew 4%) and costs (flat).")
	})

	long := strings.Repeat("row ", 2000)
	var contents []*genai.Content
	for _, table := range []string{"sales", "costs", "staff"} {
		contents = append(contents,
			genai.NewContentFromText("Read the "+table+" table.", genai.RoleUser),
			genai.NewContentFromFunctionCall("read_table", map[string]any{"name": table}, genai.RoleModel),
			genai.NewContentFromFunctionResponse("read_table", map[string]any{"result": long}, genai.RoleUser),
			genai.NewContentFromText("Done.", genai.RoleModel))
	}
	sum := &history.Summarizer{
		Trimmer: history.Trimmer{MaxTokens: 5000, ToolOutputBytes: 1 << 20, DropFirstMessage: true},
		Models:  srv.Client().Models,
	}
	out, err := sum.Prepare(ctx, &agent.HistoryInfo{Contents: contents, Model: "gemini-3.5-flash"})
	if err != nil {
		panic(err)
	}
	fmt.Println(len(contents), "contents,", history.Estimate(contents...), "tokens, became", len(out), "contents,", history.Estimate(out...), "tokens")
	fmt.Print(out[0].Parts[0].Text, "\n")
	fmt.Println("summary calls:", sum.Stats().Summaries)
	// Output:
	// 12 contents, 8325 tokens, became 5 contents, 2833 tokens
	// [Summary of the earlier conversation, which was removed to save context]
	// The user asked about sales (they grew 4%) and costs (flat).
	// summary calls: 1
}
