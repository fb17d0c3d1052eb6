package history_test

import (
	"fmt"
	"strings"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/history"
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
