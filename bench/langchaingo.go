package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/googleai"
	"google.golang.org/api/option"
)

// The langchaingo contestant is a hand loop over langchaingo's googleai
// provider (langchaingo has no agent loop for it): GenerateContent with the
// tools, the AI message with its tool calls appended, the calls run
// concurrently (inline when there is only one), one tool message of
// responses appended, until the model answers with text.
//
// The provider sits on the legacy github.com/google/generative-ai-go SDK
// over REST, whose wire differs from google.golang.org/genai's: every
// request goes to :streamGenerateContent without alt=sse (the reply is a
// JSON array), the key travels as ?key=, enums are numbers, and calls carry
// neither ids nor thought signatures.
func init() {
	register(contestant{
		key:   "langchaingo",
		name:  "langchaingo " + moduleVersion("github.com/tmc/langchaingo") + " hand loop over googleai",
		setup: setupLangchaingo,
	})
}

// setupLangchaingo builds the provider and the tool definitions once.
//
// The provider has no base-URL option. option.WithEndpoint is appended to
// its Options.ClientOptions, with googleai.WithRest() so that it speaks
// REST to a plain HTTP server. (googleai.WithHTTPClient would also reach the
// server, but the legacy SDK then drops the API key.)
func setupLangchaingo(url string, sc scenario) (func(context.Context) error, func(), error) {
	llm, err := googleai.New(context.Background(),
		googleai.WithAPIKey(apiKey),
		googleai.WithRest(),
		func(o *googleai.Options) { o.ClientOptions = append(o.ClientOptions, option.WithEndpoint(url)) },
		googleai.WithDefaultModel(benchModel),
	)
	if err != nil {
		return nil, nil, err
	}
	params := map[string]any{
		"type":       "object",
		"properties": map[string]any{"city": map[string]any{"type": "string", "description": cityDescription}},
		"required":   []string{"city"},
	}
	var tools []llms.Tool
	for _, t := range sc.toolSpecs() {
		tools = append(tools, llms.Tool{Type: "function", Function: &llms.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: params,
		}})
	}
	maxRequests := sc.requests() // a cap, as every loop needs one

	loop := func(ctx context.Context) error {
		messages := make([]llms.MessageContent, 1, 1+2*sc.turns)
		messages[0] = llms.TextParts(llms.ChatMessageTypeHuman, prompt)
		for range maxRequests {
			resp, err := llm.GenerateContent(ctx, messages, llms.WithTools(tools))
			if err != nil {
				return err
			}
			if len(resp.Choices) == 0 {
				return errors.New("langchaingo: no choice")
			}
			choice := resp.Choices[0]
			if len(choice.ToolCalls) == 0 {
				return checkAnswer(choice.Content)
			}
			ai := llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: make([]llms.ContentPart, len(choice.ToolCalls))}
			for i, tc := range choice.ToolCalls {
				ai.Parts[i] = tc
			}
			messages = append(messages, ai, llms.MessageContent{
				Role:  llms.ChatMessageTypeTool,
				Parts: runLangchaingoCalls(choice.ToolCalls),
			})
		}
		return fmt.Errorf("langchaingo: no answer after %d requests", maxRequests)
	}
	return loop, func() { llm.Close() }, nil
}

// runLangchaingoCalls runs the calls, concurrently when there are several,
// and returns their responses in call order.
func runLangchaingoCalls(calls []llms.ToolCall) []llms.ContentPart {
	out := make([]llms.ContentPart, len(calls))
	run := func(i int) {
		tc := calls[i]
		var in weatherIn
		content := ""
		if err := json.Unmarshal([]byte(tc.FunctionCall.Arguments), &in); err != nil || in.City == "" {
			content = "error: missing argument city"
		} else {
			content = weather(in.City)
		}
		out[i] = llms.ToolCallResponse{ToolCallID: tc.ID, Name: tc.FunctionCall.Name, Content: content}
	}
	if len(calls) == 1 {
		run(0)
		return out
	}
	var wg sync.WaitGroup
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(i)
		}()
	}
	wg.Wait()
	return out
}
