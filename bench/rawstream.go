package main

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/genai"
)

// The raw-stream contestant is the floor for streaming loops: raw's hand
// loop on GenerateContentStream, with the chunks of a turn gathered into one
// model content (their parts appended in order, the text of each chunk
// passed on as it arrives).
func init() {
	register(contestant{
		key:   "raw-stream",
		name:  "raw genai " + moduleVersion("google.golang.org/genai") + " streaming hand loop",
		setup: setupRawStream,
	})
}

func setupRawStream(url string, sc scenario) (func(context.Context) error, func(), error) {
	client, err := newClient(url, nil)
	if err != nil {
		return nil, nil, err
	}
	_, tools := rawDeclarations(sc)
	return rawStreamLoop(client, sc, tools), nil, nil
}

// rawStreamLoop returns the raw streaming loop on client, running sc's
// calls with tools.
func rawStreamLoop(client *genai.Client, sc scenario, tools map[string]rawTool) func(context.Context) error {
	decls, _ := rawDeclarations(sc)
	config := &genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: decls}}}
	maxRequests := sc.requests()

	return func(ctx context.Context) error {
		contents := make([]*genai.Content, 1, 1+2*sc.turns)
		contents[0] = genai.NewContentFromText(prompt, genai.RoleUser)
		for range maxRequests {
			content := &genai.Content{Role: genai.RoleModel}
			text, calls := "", 0
			for chunk, err := range client.Models.GenerateContentStream(ctx, benchModel, contents, config) {
				if err != nil {
					return err
				}
				if len(chunk.Candidates) == 0 || chunk.Candidates[0].Content == nil {
					continue
				}
				for _, p := range chunk.Candidates[0].Content.Parts {
					content.Parts = append(content.Parts, p)
					text += p.Text // what a UI would print as it arrives
					if p.FunctionCall != nil {
						calls++
					}
				}
			}
			if len(content.Parts) == 0 {
				return errors.New("raw-stream: a turn without parts")
			}
			if calls == 0 {
				return checkAnswer(text)
			}
			contents = append(contents, content, &genai.Content{
				Role:  genai.RoleUser,
				Parts: runRawCalls(ctx, tools, content.Parts, calls),
			})
		}
		return fmt.Errorf("raw-stream: no answer after %d requests", maxRequests)
	}
}
