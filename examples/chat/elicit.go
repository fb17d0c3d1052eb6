package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An elicitor answers an MCP server's questions to the user (elicitation:
// a server's request up to protocol revision 2025-11-25, an
// input_required result from 2026-07-28 on; go-sdk hands both to the
// handler) by asking them in the chat, a field at a time. Until the chat
// is set (and in the web UI, which has no terminal to ask in), it
// declines.
type elicitor struct {
	mu sync.Mutex
	c  *chat
}

func (e *elicitor) set(c *chat) {
	e.mu.Lock()
	e.c = c
	e.mu.Unlock()
}

// handle is the MCP clients' ElicitationHandler.
func (e *elicitor) handle(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	e.mu.Lock()
	c := e.c
	e.mu.Unlock()
	if c == nil || req.Params == nil {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	return c.elicit(ctx, req.Params)
}

// elicit shows the server's message and asks for each field of its
// schema on a line of its own: an empty answer leaves a field out, and
// no answer at all declines; the end of the input or Ctrl-C cancels.
func (c *chat) elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	c.inputMu.Lock() // one question at a time, the calls of a turn run at once
	defer c.inputMu.Unlock()
	var schema struct {
		Properties map[string]struct {
			Type        string `json:"type"`
			Description string `json:"description"`
			Title       string `json:"title"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if b, err := json.Marshal(p.RequestedSchema); err == nil {
		_ = json.Unmarshal(b, &schema)
	}
	fmt.Fprintln(c.out, c.st.dim("an MCP server asks: ")+p.Message)
	names := make([]string, 0, len(schema.Properties))
	for name := range schema.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	content := map[string]any{}
	for _, name := range names {
		field := schema.Properties[name]
		label := name
		if d := cmpOr(field.Title, field.Description); d != "" {
			label += " (" + d + ")"
		}
		if slices.Contains(schema.Required, name) {
			label += "*"
		}
		prompt := c.st.prompt("  " + label + ": ")
		if !c.opts.interactive {
			fmt.Fprint(c.out, prompt)
		}
		line, err := c.readLineLocked(ctx, prompt)
		if err != nil {
			if !c.opts.interactive {
				fmt.Fprintln(c.out)
			}
			return &mcp.ElicitResult{Action: "cancel"}, nil
		}
		answer := strings.TrimSpace(line)
		if !c.opts.interactive {
			fmt.Fprintln(c.out, answer)
		}
		if answer == "" {
			continue
		}
		v, err := fieldValue(field.Type, answer)
		if err != nil {
			fmt.Fprintln(c.out, c.st.dim(fmt.Sprintf("  (%s: %v; left out)", name, err)))
			continue
		}
		content[name] = v
	}
	if len(content) == 0 {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}, nil
}

// fieldValue is answer as a value of the JSON Schema type typ.
func fieldValue(typ, answer string) (any, error) {
	switch typ {
	case "integer":
		return strconv.ParseInt(answer, 10, 64)
	case "number":
		return strconv.ParseFloat(answer, 64)
	case "boolean":
		switch strings.ToLower(answer) {
		case "y", "yes", "true":
			return true, nil
		case "n", "no", "false":
			return false, nil
		}
		return nil, fmt.Errorf("%q is not yes or no", answer)
	}
	return answer, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
