package wire

import "github.com/toolnexus/toolnexus-go/agent"

// Tokens returns a run's input and output totals, as both protocols count
// them: the prompt with the tool-use prompt, and the answer with the
// thoughts; the thoughts and the cached tokens are parts of them, never
// added to them.
func Tokens(u agent.Usage) (input, output int64) {
	return int64(u.PromptTokens + u.ToolUsePromptTokens), int64(u.CandidatesTokens + u.ThoughtsTokens)
}
