package main

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"google.golang.org/genai"
)

// The raw contestant is the floor: the loop a careful engineer writes by
// hand on the genai client, with no framework. Per turn: one
// GenerateContent call; the model's content appended to the history
// unchanged (so ids and thought signatures travel with it); the calls run
// concurrently (inline when there is only one); one user content of
// functionResponse parts, in call order, echoing each call's id.
func init() {
	register(contestant{
		key:   "raw",
		name:  "raw genai " + moduleVersion("google.golang.org/genai") + " hand loop",
		setup: setupRaw,
	})
}

// setupRaw builds the client and the declarations once; the loop reuses them.
func setupRaw(url string, sc scenario) (func(context.Context) error, func(), error) {
	client, err := newClient(url, nil)
	if err != nil {
		return nil, nil, err
	}
	_, tools := rawDeclarations(sc)
	return rawLoop(client, sc, tools), nil, nil
}

// rawLoop returns the raw loop on client, running sc's calls with tools.
func rawLoop(client *genai.Client, sc scenario, tools map[string]rawTool) func(context.Context) error {
	decls, _ := rawDeclarations(sc)
	config := &genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: decls}}}
	maxRequests := sc.requests() // a cap, as every loop needs one

	return func(ctx context.Context) error {
		contents := make([]*genai.Content, 1, 1+2*sc.turns)
		contents[0] = genai.NewContentFromText(prompt, genai.RoleUser)
		for range maxRequests {
			resp, err := client.Models.GenerateContent(ctx, benchModel, contents, config)
			if err != nil {
				return err
			}
			if len(resp.Candidates) == 0 || resp.Candidates[0].Content == nil {
				return errors.New("raw: response without a candidate")
			}
			content := resp.Candidates[0].Content
			calls := 0
			for _, p := range content.Parts {
				if p.FunctionCall != nil {
					calls++
				}
			}
			if calls == 0 {
				return checkAnswer(resp.Text())
			}
			contents = append(contents, content, &genai.Content{
				Role:  genai.RoleUser,
				Parts: runRawCalls(ctx, tools, content.Parts, calls),
			})
		}
		return fmt.Errorf("raw: no answer after %d requests", maxRequests)
	}
}

// A rawTool runs one call and returns its response object.
type rawTool func(ctx context.Context, args map[string]any) map[string]any

// runRawCalls runs the n function calls among parts, concurrently when there
// are several, and returns their functionResponse parts in call order.
func runRawCalls(ctx context.Context, tools map[string]rawTool, parts []*genai.Part, n int) []*genai.Part {
	out := make([]*genai.Part, 0, n)
	var wg sync.WaitGroup
	for _, p := range parts {
		fc := p.FunctionCall
		if fc == nil {
			continue
		}
		r := &genai.FunctionResponse{ID: fc.ID, Name: fc.Name}
		out = append(out, &genai.Part{FunctionResponse: r})
		run := func() {
			if tool, ok := tools[fc.Name]; ok {
				r.Response = tool(ctx, fc.Args)
			} else {
				r.Response = map[string]any{"error": "unknown tool " + fc.Name}
			}
		}
		if n == 1 {
			run()
		} else {
			wg.Add(1)
			go func() {
				defer wg.Done()
				run()
			}()
		}
	}
	wg.Wait()
	return out
}

// rawWeather is get_weather (and every filler) as a rawTool.
func rawWeather(_ context.Context, args map[string]any) map[string]any {
	city, _ := args["city"].(string)
	if city == "" {
		return map[string]any{"error": "missing argument city"}
	}
	return map[string]any{"output": weather(city)}
}

// rawDeclarations declares sc's tools by hand, as genai schemas, and returns
// the functions that run them by name.
func rawDeclarations(sc scenario) ([]*genai.FunctionDeclaration, map[string]rawTool) {
	params := &genai.Schema{
		Type:             genai.TypeObject,
		Properties:       map[string]*genai.Schema{"city": {Type: genai.TypeString, Description: cityDescription}},
		Required:         []string{"city"},
		PropertyOrdering: []string{"city"},
	}
	var decls []*genai.FunctionDeclaration
	tools := map[string]rawTool{}
	for _, t := range sc.toolSpecs() {
		decls = append(decls, &genai.FunctionDeclaration{Name: t.Name, Description: t.Description, Parameters: params})
		tools[t.Name] = rawWeather
	}
	return decls, tools
}
