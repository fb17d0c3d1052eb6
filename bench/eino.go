package main

import (
	"context"
	"fmt"

	"github.com/cloudwego/eino-ext/components/model/gemini"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"
)

// The eino contestant is eino's ReAct agent (Generate) over eino-ext's
// Gemini chat model: eino runs the loop (tool calls in parallel, the
// default), the model component speaks to Gemini through a caller-built
// genai client.
func init() {
	register(contestant{
		key: "eino",
		name: "eino " + moduleVersion("github.com/cloudwego/eino") + " react agent + eino-ext gemini " +
			moduleVersion("github.com/cloudwego/eino-ext/components/model/gemini"),
		setup: setupEino,
	})
}

// setupEino builds the genai client, the chat model, the tools and the
// agent once.
func setupEino(url string, sc scenario) (func(context.Context) error, func(), error) {
	ctx := context.Background()
	client, err := newClient(url, nil)
	if err != nil {
		return nil, nil, err
	}
	chat, err := gemini.NewChatModel(ctx, &gemini.Config{Client: client, Model: benchModel})
	if err != nil {
		return nil, nil, err
	}
	var tools []tool.BaseTool
	for _, t := range sc.toolSpecs() {
		it, err := utils.InferTool(t.Name, t.Description, func(_ context.Context, in weatherIn) (string, error) {
			return weather(in.City), nil
		})
		if err != nil {
			return nil, nil, err
		}
		tools = append(tools, it)
	}
	agent, err := react.NewAgent(ctx, &react.AgentConfig{
		ToolCallingModel: chat,
		ToolsConfig:      compose.ToolsNodeConfig{Tools: tools},
		// One step per model call and per tool round, with room to spare.
		MaxStep: 2*sc.turns + 4,
	})
	if err != nil {
		return nil, nil, err
	}

	loop := func(ctx context.Context) error {
		msg, err := agent.Generate(ctx, []*schema.Message{schema.UserMessage(prompt)})
		if err != nil {
			return err
		}
		if msg == nil {
			return fmt.Errorf("eino: no message")
		}
		return checkAnswer(msg.Content)
	}
	return loop, nil, nil
}
