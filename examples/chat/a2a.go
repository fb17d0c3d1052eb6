package main

// The chat's remote agents: -a2a URL makes the A2A agent there a tool,
// through a2aagent.RemoteTool.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/toolnexus/toolnexus-go/a2aagent"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// a2aSource is where /tools says a remote agent's tool comes from
// (followed by its -a2a value).
const a2aSource = "A2A "

// withA2A adds a tool for each -a2a agent to tools: its name is the
// agent card's ("demo agent" is demo_agent), or the one "name=URL" gives.
// A name another tool has already is an error. sources gains where each
// comes from, for /tools.
func withA2A(ctx context.Context, specs []string, tools *toolset.Set, sources map[string]string, out io.Writer) (*toolset.Set, error) {
	if len(specs) == 0 {
		return tools, nil
	}
	list := tools.Tools()
	for _, spec := range specs {
		name, url := splitName(spec)
		name = strings.TrimSuffix(name, "_")
		if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
			return nil, fmt.Errorf("-a2a %q: not an http:// or https:// URL", spec)
		}
		cctx, cancel := context.WithTimeout(ctx, connectTimeout)
		t, err := a2aagent.RemoteTool(cctx, url, &a2aagent.RemoteOptions{HTTPClient: http.DefaultClient, Name: name})
		cancel()
		if err != nil {
			return nil, fmt.Errorf("-a2a %q: %w", spec, err)
		}
		if from, ok := sources[t.Name]; ok {
			return nil, fmt.Errorf("-a2a %q: its tool %s has the name of another tool (%s): give it another, as in -a2a \"name=URL\"", spec, t.Name, from)
		}
		list = append(list, t)
		sources[t.Name] = a2aSource + spec
		fmt.Fprintf(out, "A2A agent %q: tool %s.\n", spec, t.Name)
	}
	return toolset.New(list...)
}
