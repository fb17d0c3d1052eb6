package agent

import (
	"context"

	"google.golang.org/genai"
)

// A HistoryFunc prepares the contents a model call sends, so that a long
// conversation fits the model's context window (see Config.PrepareHistory).
// It is called on the run's goroutine before each turn's model call (the
// retries of a turn resend what it returned), and returns the contents to
// send: h.Contents itself when nothing needs to change, or new, shorter
// ones. It must not modify h.Contents or the contents it holds: they are
// the run's history, which Result.History returns whole. The contents it
// returns must form a history the API accepts: a function call's response
// must follow it, thought signatures must stay where the API put them.
//
// What it returns becomes the run's working history: later turns add to
// it, and the next call of the hook receives it with them. Result.History
// is never shortened: it holds the input and every turn, as without the
// hook. An error ends the run with it, wrapped.
type HistoryFunc func(ctx context.Context, h *HistoryInfo) ([]*genai.Content, error)

// HistoryInfo is what a [HistoryFunc] decides on.
type HistoryInfo struct {
	// Contents are about to be sent.
	Contents []*genai.Content

	// Turn is the model turn about to be made, from 0.
	Turn int

	// PromptTokens is the prompt token count the API reported for the
	// previous model call of the run (usageMetadata.promptTokenCount), or 0
	// before the first: the size, in the model's tokens, of what was sent
	// then, which Contents extends by one model turn and its tool answers.
	// For an answer continued over several requests, it is the first
	// request's: each later one re-reads the answer so far, and their sum,
	// which the API bills, is not the size of what was sent.
	PromptTokens int

	// Model is the model's name.
	Model string
}
