package main

// The chat's MCP servers: -mcp "command args" and -mcp-http URL add the
// tools of MCP servers to the built-in ones, through mcptools.

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolnexus/toolnexus-go/mcptools"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// listFlag is a repeatable string flag.
type listFlag []string

func (f *listFlag) String() string { return strings.Join(*f, ", ") }

func (f *listFlag) Set(v string) error {
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("empty value")
	}
	*f = append(*f, v)
	return nil
}

// connectTimeout bounds the start of one MCP server: a "go run" command
// compiles first.
const connectTimeout = 2 * time.Minute

// The sources /tools shows: the chat's own tools, and an MCP server's
// (followed by its -mcp or -mcp-http value).
const (
	builtIn   = "built in"
	mcpSource = "MCP "
)

// serverNameRE is the optional "name=" in front of an -mcp or -mcp-http
// value, whose tools are then called name_tool.
var serverNameRE = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_]*)=(.*)$`)

// mcpServer is one -mcp or -mcp-http value.
type mcpServer struct {
	spec   string // as given, for messages and /tools
	prefix string // from "name=", with its "_"
	dial   mcptools.Dial
	url    string // for -mcp-http
}

// parseServers reads the -mcp and -mcp-http values.
func parseServers(commands, urls []string) ([]mcpServer, error) {
	var out []mcpServer
	for _, spec := range commands {
		prefix, rest := splitName(spec)
		args := strings.Fields(rest)
		if len(args) == 0 {
			return nil, fmt.Errorf("-mcp %q: no command", spec)
		}
		out = append(out, mcpServer{spec: spec, prefix: prefix, dial: mcptools.Command(args[0], args[1:]...)})
	}
	for _, spec := range urls {
		prefix, url := splitName(spec)
		if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
			return nil, fmt.Errorf("-mcp-http %q: not an http:// or https:// URL", spec)
		}
		out = append(out, mcpServer{spec: spec, prefix: prefix, url: url})
	}
	return out, nil
}

// splitName splits "name=rest" into "name_" and rest; a value without a
// name is returned whole.
func splitName(spec string) (prefix, rest string) {
	if m := serverNameRE.FindStringSubmatch(strings.TrimSpace(spec)); m != nil {
		return m[1] + "_", m[2]
	}
	return "", strings.TrimSpace(spec)
}

// withMCP connects to the MCP servers opts names and returns the chat's
// tools: the built-in ones, then each server's. A server's tool replaces a
// built-in tool of the same name; two servers' tools of the same name are
// an error. sources says where each tool comes from, for /tools. closeAll
// ends every server. elicit answers the servers' questions to the user,
// whatever the protocol revision.
func withMCP(ctx context.Context, opts options, native *toolset.Set, out io.Writer,
	elicit func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) (tools *toolset.Set, sources map[string]string, closeAll func(), err error) {
	var clients []*mcptools.Client
	closeClients := func() {
		for _, c := range clients {
			c.Close()
		}
	}
	defer func() {
		if err != nil {
			closeClients()
		}
	}()
	servers, err := parseServers(opts.mcp, opts.mcpHTTP)
	if err != nil {
		return nil, nil, nil, err
	}
	list := native.Tools()
	sources = map[string]string{}
	for _, t := range list {
		sources[t.Name] = builtIn
	}
	var logins *logins
	for _, s := range servers {
		timeout := connectTimeout
		if s.url != "" {
			if logins == nil {
				logins = newLogins(opts)
			}
			login, err := logins.login(s.spec, s.url)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("MCP server %q: %w", s.spec, err)
			}
			s.dial = mcptools.NewHTTP(s.url, &mcptools.HTTPOptions{OAuth: login})
			timeout += logins.timeout // the user may have to log in first
		}
		cctx, cancel := context.WithTimeout(ctx, timeout)
		c, err := mcptools.Connect(cctx, s.dial, &mcptools.Options{Prefix: s.prefix,
			ClientOptions: &mcp.ClientOptions{ElicitationHandler: elicit}})
		cancel()
		if err != nil {
			return nil, nil, nil, fmt.Errorf("MCP server %q: %w", s.spec, err)
		}
		clients = append(clients, c)
		var names, replaced []string
		for _, t := range c.Tools() {
			switch from, ok := sources[t.Name]; {
			case !ok:
				list = append(list, t)
			case from == builtIn:
				replaced = append(replaced, t.Name)
				for i, old := range list {
					if old.Name == t.Name {
						list[i] = t
					}
				}
			default:
				return nil, nil, nil, fmt.Errorf("MCP servers %q and %q both have a tool %s: give one a name, as in -mcp \"name=command\"",
					strings.TrimPrefix(from, mcpSource), s.spec, t.Name)
			}
			sources[t.Name] = mcpSource + s.spec
			names = append(names, t.Name)
		}
		line := fmt.Sprintf("MCP server %q: %s", s.spec, strings.Join(names, ", "))
		if len(names) == 0 {
			line = fmt.Sprintf("MCP server %q: no tools", s.spec)
		}
		if len(replaced) > 0 {
			line += fmt.Sprintf(" (in place of the built-in %s)", strings.Join(replaced, ", "))
		}
		fmt.Fprintln(out, line+".")
		for _, sk := range c.Skipped() {
			fmt.Fprintf(out, "MCP server %q: tool %q left out: %v\n", s.spec, sk.Name, sk.Err)
		}
	}
	tools, err = toolset.New(list...)
	if err != nil {
		return nil, nil, nil, err
	}
	return tools, sources, closeClients, nil
}
