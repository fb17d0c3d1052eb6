package main

import (
	"context"

	"github.com/toolnexus/toolnexus-go/toolset"
)

// This file holds what the contestants built on this module (agent.Run,
// Agent.Stream; see agent.go) share.

// toolsetWeatherIn is the input of every tool for toolset.Func, whose
// schema inference (github.com/google/jsonschema-go) reads the jsonschema
// tag as the description itself.
type toolsetWeatherIn struct {
	City string `json:"city" jsonschema:"City name"`
}

// toolsetTools returns sc's tools as toolset tools: the same names,
// descriptions and input schema as every other contestant declares (see
// TestToolsetToolsMatchRaw), each running weather.
func toolsetTools(sc scenario) []*toolset.Tool {
	var tools []*toolset.Tool
	for _, t := range sc.toolSpecs() {
		tools = append(tools, toolset.MustFunc(t.Name, t.Description,
			func(_ context.Context, in toolsetWeatherIn) (string, error) {
				return weather(in.City), nil
			}))
	}
	return tools
}
