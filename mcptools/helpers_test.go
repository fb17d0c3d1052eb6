package mcptools_test

import (
	"context"
	"errors"
	"testing"

	"github.com/toolnexus/toolnexus-go/mcptools"
	"github.com/toolnexus/toolnexus-go/toolset"
)

type weatherIn struct {
	City string `json:"city" jsonschema:"the city, e.g. Paris"`
	Days int    `json:"days,omitempty" jsonschema:"days of forecast"`
}

type weatherOut struct {
	City  string `json:"city"`
	TempC int    `json:"temp_c"`
}

type echoIn struct {
	Text string `json:"text"`
}

// Media the "draw" tool returns.
var (
	pngData = []byte("\x89PNG\r\n\x1a\nimage")
	wavData = []byte("RIFF....WAVEfmt ")
	pdfData = []byte("%PDF-1.7 ...")
)

// demoSet is the set the tests serve: a struct output, a string output, a
// failure, and media.
func demoSet() *toolset.Set {
	weather := toolset.MustFunc("get_weather", "Current weather for a city",
		func(_ context.Context, in weatherIn) (weatherOut, error) {
			if in.City == "Atlantis" {
				return weatherOut{}, errors.New("no weather for Atlantis: it is under water")
			}
			return weatherOut{City: in.City, TempC: 10 + len(in.City)}, nil
		})
	echo := toolset.MustFunc("echo", "Repeat the text", func(_ context.Context, in echoIn) (string, error) {
		return in.Text, nil
	})
	draw := toolset.MustDefine(toolset.Tool{Name: "draw", Description: "Draw a picture, read it aloud, print it",
		Run: func(context.Context, map[string]any) (any, error) {
			return toolset.MediaOutput{Output: "a red dot", Media: []toolset.Media{
				{MIMEType: "image/png", Data: pngData},
				{MIMEType: "audio/wav", Data: wavData},
				{MIMEType: "application/pdf", Data: pdfData},
			}}, nil
		}})
	return toolset.MustNew(weather, echo, draw)
}

// connect connects to dial, closing the client when the test ends.
func connect(t testing.TB, dial mcptools.Dial, opts *mcptools.Options) *mcptools.Client {
	t.Helper()
	c, err := mcptools.Connect(context.Background(), dial, opts)
	if err != nil {
		t.Fatalf("Connect() = %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// lookup returns the tool named name among tools.
func lookup(t testing.TB, tools []*toolset.Tool, name string) *toolset.Tool {
	t.Helper()
	for _, tool := range tools {
		if tool.Name == name {
			return tool
		}
	}
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	t.Fatalf("no tool %q among %v", name, names)
	return nil
}

// call runs the named tool of c with args.
func call(t *testing.T, c *mcptools.Client, name string, args map[string]any) toolset.Result {
	t.Helper()
	return lookup(t, c.Tools(), name).Execute(context.Background(), args)
}
