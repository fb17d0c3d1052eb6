// The chat command is a terminal chat with Gemini that can call tools: the
// (made-up) weather, the time in a time zone, and arithmetic.
//
// Usage:
//
//	go run ./examples/chat [-model gemini-3.5-flash] [-api interactions] [-live] [-v] [-approve] [-search] [-trace]
//	                       [-session name] [-session-db file] [-web host:port] [-mcp "[name=]command args"]... [-mcp-http [name=]URL]...
//	                       [-a2a [name=]URL]... [-openapi [name=]FILE|URL]... [-openapi-auth scheme=secret]... [-openapi-base URL]
//
// With GEMINI_API_KEY (or GOOGLE_API_KEY) set it talks to the Gemini API;
// with GOOGLE_GENAI_USE_VERTEXAI=true, GOOGLE_CLOUD_PROJECT and
// GOOGLE_CLOUD_LOCATION set it talks to Gemini on Vertex AI, with
// Application Default Credentials (gcloud auth application-default login).
// Without either it runs on a built-in offline model, served by an in-process
// fake of the API, which answers through the same agent loop, HTTP client
// and real tool calls; it understands questions like "What's the weather in
// Paris and Tokyo?" (and a follow-up: "And in Oslo?"), "what time is it in
// UTC" and "what is (12+7)*3".
//
// With -api interactions it talks to Gemini's Interactions API instead of
// generateContent (package geminiinteractions): the server keeps the
// conversation, and each turn sends only what the server lacks. It works
// on the offline model too, which the fake serves on that API as well:
//
//	printf 'What is the weather in Paris and Tokyo?\n' | go run ./examples/chat -api interactions
//
// With -live it talks over Gemini's Live API instead (package geminilive):
// one live session for the whole chat, on gemini-3.8-live unless -model
// names another Live model. Live models answer in speech: the chat prints
// the transcription of what the model says, plays nothing, and sends what
// you type as text. Tool calls and -approve work as they do without -live.
// Offline, the fake serves the Live API too, and the offline model answers
// over it by the same rules. -live goes with none of -web, -session (the
// live conversation is not kept) and -api interactions; /reset, /history
// and the conversation commands do not apply to the live session:
//
//	printf 'What is the weather in Paris and Tokyo?\nAnd in Oslo?\n' | go run ./examples/chat -live
//
// /trip Lisbon plans a day in a city: a typed answer (agent.RunTyped) from
// a planner agent that asks a weather researcher, another agent it calls as
// a tool (agent.AsTool).
//
// -mcp starts an MCP server as a subprocess (the value is split at spaces)
// and -mcp-http reaches one over streamable HTTP; their tools join the
// built-in ones, replacing a built-in tool of the same name. With "name="
// in front, a server's tools are called name_tool. /tools lists every tool
// and where it comes from. The demo tools are also served over MCP by
// examples/mcpserver:
//
//	printf 'What is the weather in Paris and Tokyo?\n' | go run ./examples/chat -mcp "go run ./examples/mcpserver"
//
// An -mcp-http server that asks for OAuth 2.1 (it answers 401, as remote
// servers for many users do) has you log in, if the server lets programs
// register themselves (dynamic client registration): the chat prints the authorization URL on standard error and
// opens it in your browser where there is one ($BROWSER, or the system's),
// waits up to 5 minutes for the browser to come back to a loopback port,
// and keeps the tokens in chat-mcp-logins.json in your config directory,
// under toolnexus (readable by you alone), refreshing them as they expire,
// so that you log in once. It never prints a token:
//
//	go run ./examples/chat -mcp-http tracker=https://mcp.example.com/mcp
//
// -a2a makes the A2A agent at a URL (its base URL, or its card's) a tool
// (package a2aagent): the model hands it requests and reads its answers,
// one remote conversation per chat conversation; when the agent asks
// something (say, to approve a call of its own), the model relays the
// question, and the next answer goes back to it. The tool is named after
// the agent's card ("demo agent" is demo_agent), or "name=" in front.
// examples/server serves such an agent; the offline model hands a
// question that names the agent to it:
//
//	go run ./examples/server -approve &
//	printf 'Ask the demo agent: what is the weather in Paris?\nyes\n' | go run ./examples/chat -a2a http://localhost:8080
//
// -openapi makes a tool of each operation of an OpenAPI description (a
// file or a URL; package openapitools): a call that changes something (any
// method but GET and HEAD) asks first, as -approve asks for every call.
// -openapi-auth gives a security scheme's credential (an API key,
// user:password, or a token), -openapi-base the server to call instead of
// the description's. The offline model calls a tool by name when asked
// "call NAME {arguments}":
//
//	printf 'call listItems {"tags": ["red"]}\n' | go run ./examples/chat -openapi openapitools/testdata/shop31.yaml \
//		-openapi-auth key=SECRET -openapi-base http://localhost:8080
//
// It streams the answer as it is generated and shows each tool call and its
// result, each result cut to the terminal's width (80 columns when it is
// not a terminal). Type /help for the commands. On a terminal, the input
// line can be edited (the arrow keys, Home, End, Ctrl-A, Ctrl-E, Ctrl-K,
// Ctrl-U…) and up and down recall the earlier lines (the last 500); a
// spinner shows while the model thinks. Ctrl-C stops the answer in
// progress; Ctrl-C at the prompt, or Ctrl-D, exits. When standard input is
// not a terminal, each line is one message, and nothing but the
// conversation is printed:
//
//	printf 'What is the weather in Paris and Tokyo?\n' | go run ./examples/chat
//
// With -approve it asks before each tool call runs; y runs it, anything
// else refuses it. Piped, the answer is the next input line:
//
//	printf 'What is the weather in Paris and Tokyo?\ny\nn\n' | go run ./examples/chat -approve
//
// With -v it shows the model's thoughts, and after each answer a usage
// line: the model turns, the tool calls, the input tokens with what of
// them is billed at the full input price and what was read from a cache
// (explicit or implicit, billed at the cached price), the output and
// thinking tokens, and the time taken.
//
// With -search the model may also search the web with Google Search, a
// tool Gemini runs itself (agent.Config.BuiltinTools): each search shows
// as a line of its own, and the pages that ground the answer follow it.
// The offline model plays a search for a question that asks for one:
//
//	printf 'search the latest Go release\n' | go run ./examples/chat -search
//
// With -session NAME the conversation is kept in a SQLite file (in the
// user's config directory, or the one -session-db names; -session-db may
// also be a postgres:// URL, for a PostgreSQL database) and continued the
// next time the chat starts with that name; /sessions lists the kept
// conversations, /new starts another. Long conversations are trimmed to
// fit the model's context (see package history); the file keeps them whole:
//
//	printf 'What is the weather in Paris?\n' | go run ./examples/chat -session demo
//	printf '/history\n' | go run ./examples/chat -session demo
//
// With -web ADDR the chat is served in the browser instead, by package
// agentserver/devui: the same agent, with the same -mcp, -approve and
// -session, the offline model without a key. Open the address it prints to
// chat, approve calls, see each run as a timeline of its model and tool
// calls (with each model call's exact request and response), browse the
// conversations and the agent's tools, and run a tool by hand (under
// -approve too: the page's user is the one who approves):
//
//	go run ./examples/chat -web localhost:8080
//
// With -session NAME the page opens that conversation, and its threads are
// the terminal chat's conversations, in the same file.
//
// With -trace, each answer is traced with OpenTelemetry (package otelagent,
// and otelhttp around the client's HTTP transport) and its span tree is
// printed to standard error: the run, each model call with its HTTP
// request, each tool call with the spans the tool starts, one per line
// with its duration and key attributes. With OTEL_EXPORTER_OTLP_ENDPOINT
// set, the spans and metrics are exported over OTLP/HTTP instead (to a
// collector, Jaeger, Tempo…), configured by the standard OTEL_EXPORTER_OTLP_*
// and OTEL_SERVICE_NAME variables:
//
//	printf 'What is the weather in Paris and Tokyo?\n' | go run ./examples/chat -trace
//	OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 go run ./examples/chat -trace
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"strings"
)

func main() {
	opts := options{}
	flag.StringVar(&opts.model, "model", defaultModel, "Gemini model to use with an API key")
	flag.StringVar(&opts.api, "api", apiGenerateContent, "the Gemini `API` to talk to: generatecontent or interactions")
	flag.BoolVar(&opts.liveAPI, "live", false, "talk over Gemini's Live API (default model "+defaultLiveModel+"), text in and out")
	flag.BoolVar(&opts.verbose, "v", false, "show thoughts and a usage line after each answer")
	flag.BoolVar(&opts.trace, "trace", false, "print each answer's span tree to stderr (with OTEL_EXPORTER_OTLP_ENDPOINT set: export over OTLP/HTTP instead)")
	flag.BoolVar(&opts.approve, "approve", false, "ask before each tool call runs (piped: the answer is the next input line)")
	flag.BoolVar(&opts.search, "search", false, "let the model search the web with Google Search, a tool Gemini runs itself, beside its own tools")
	flag.StringVar(&opts.session, "session", "", "keep the conversation `name`d so in a file, and continue it")
	flag.StringVar(&opts.sessionDB, "session-db", "", "the SQLite `file`, or the PostgreSQL database of a postgres:// URL, -session keeps conversations in (default: chat-sessions.db in the user's config directory, under toolnexus)")
	flag.StringVar(&opts.web, "web", "", "serve the chat in the browser at `host:port` (the dev UI: chat, timelines, conversations, the agent) instead of the terminal")
	flag.Var((*listFlag)(&opts.mcp), "mcp", "add the tools of the MCP server that `command` starts; \"name=command\" calls them name_tool (repeatable)")
	flag.Var((*listFlag)(&opts.mcpHTTP), "mcp-http", "add the tools of the MCP server at `URL`, over streamable HTTP, logging in with OAuth if it asks; \"name=URL\" calls them name_tool (repeatable)")
	flag.Var((*listFlag)(&opts.a2a), "a2a", "add the A2A agent at `URL` (its base URL or its card's) as a tool; \"name=URL\" names the tool (repeatable)")
	flag.Var((*listFlag)(&opts.openAPI), "openapi", "add a tool per operation of the OpenAPI description in `file` (or at a URL); \"name=file\" calls them name_operation (repeatable)")
	flag.Var((*listFlag)(&opts.openAPIAuth), "openapi-auth", "the credential of an -openapi security scheme, `scheme=secret`: an API key, user:password, or a token (repeatable)")
	flag.StringVar(&opts.openAPIBase, "openapi-base", "", "send the -openapi tools' calls to this base `URL` instead of their descriptions' servers")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: chat [-model name] [-api interactions] [-live] [-v] [-approve] [-search] [-trace] [-session name] [-session-db file] [-web host:port] [-mcp command]... [-mcp-http URL]... [-a2a URL]... [-openapi file]...\n\n"+
			"Chats with Gemini when GEMINI_API_KEY or GOOGLE_API_KEY is set, on Vertex AI when GOOGLE_GENAI_USE_VERTEXAI=true\n"+
			"(with GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION), with a built-in offline model otherwise.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	opts.apiKey = os.Getenv("GEMINI_API_KEY")
	if opts.apiKey == "" {
		opts.apiKey = os.Getenv("GOOGLE_API_KEY")
	}
	// The test genai applies to the variable.
	switch strings.ToLower(os.Getenv("GOOGLE_GENAI_USE_VERTEXAI")) {
	case "1", "true":
		opts.vertex = true
	}
	opts.interactive = isTerminal(os.Stdin)
	opts.color = isTerminal(os.Stdout) && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
	opts.live = isTerminal(os.Stdout) && os.Getenv("TERM") != "dumb"
	opts.width = stdoutWidth
	if opts.interactive && opts.live {
		// Both ends are a terminal that understands escape codes: a line
		// editor reads the input.
		opts.term, opts.raw = stdTerminal{}, rawMode(os.Stdin)
		opts.resizes = resizeSignals()
	}

	// genai writes stream hiccups ("Error context canceled" when an answer
	// is stopped) to the standard logger; they would garble the chat.
	log.SetOutput(io.Discard)

	interrupts := make(chan os.Signal, 1)
	signal.Notify(interrupts, os.Interrupt)
	opts.interrupts = interrupts

	if err := run(context.Background(), opts, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "chat:", err)
		os.Exit(1)
	}
}

// isTerminal reports whether f is a terminal (a character device).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
