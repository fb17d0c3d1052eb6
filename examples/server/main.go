// The server command serves the demo agent (the chat's tools: made-up
// weather, the time in a time zone, arithmetic) to web frontends, on both
// protocols they speak: AG-UI (CopilotKit, @ag-ui/client) at POST /agui,
// with POST /agui/connect, POST /agui/cancel (a stop button) and GET
// /agui/messages?threadId= (a thread's messages, after a reload), and the
// AI SDK's UI message stream (useChat) at POST /api/chat, with its resume
// route GET /api/chat/{id}/stream, DELETE on it to stop the run, and GET
// /api/chat/{id}/messages; and to other agents over A2A:
// its card at GET /.well-known/agent-card.json, which lists A2A 1.0's
// JSON-RPC at POST /a2a/v1 and HTTP+JSON under /a2a/v1/rest/ first, then
// 0.3's JSON-RPC at POST /a2a (the card's url, for 0.3 clients); push
// notifications go to public addresses only.
//
// Usage:
//
//	go run ./examples/server [-addr localhost:8080] [-approve] [-model gemini-3.5-flash] [-db file|postgres://…] [-cors origin]
//	go run ./examples/server -temporal host:port -db postgres://… [-namespace default] [-queue toolnexus-fleet] [-run-timeout 48h] [-approval-timeout 24h] [-sticky-timeout 1s] [flags above]
//
// With GEMINI_API_KEY (or GOOGLE_API_KEY) set it talks to the Gemini API;
// without one it runs on the built-in offline model (an in-process fake of
// the API), which understands questions like "What's the weather in Paris
// and Tokyo?". With -approve, get_weather needs a person's approval: the
// response ends with the protocol's approval request, and the next
// request carries the decision. Threads are kept in memory, or with -db in
// a SQLite file or a PostgreSQL database (-db postgres://user:pw@host/db,
// or a key=value connection string, -db 'host=db dbname=app user=me';
// anything else that is not a file's path is refused). Every request is
// the one local user: the server is meant
// for localhost (see agentserver.Config.Authenticate to serve users).
// GET /live?thread=ID is a websocket for voice sessions (package
// agentserver/live): the same tools and approvals on a Live model
// (-live-model, gemini-3.8-live by default, with an API key; offline, the
// offline model, which takes any speech for "What is the weather in
// Paris?"), microphone audio in, the model's speech, transcripts and tool
// calls out.
// With -cors http://localhost:5173 (repeated, or origins separated by
// commas) the pages of those origins, such as a Vite dev server's, may
// call it (agentserver.Config.AllowedOrigins).
//
//	curl -N localhost:8080/api/chat -H 'content-type: application/json' \
//	  -d '{"id":"chat-1","messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"What is the weather in Paris?"}]}]}'
//
// A2A, with the chat as the other agent (its -a2a flag makes this agent a
// tool of the chat's):
//
//	printf 'Ask the demo agent: what is the weather in Paris?\n' | go run ./examples/chat -a2a http://localhost:8080
//
// With -temporal (and -db, which every instance shares) the server is one
// instance of a fleet: its runs are workflows on that Temporal server, and
// any request of any protocol reaches any instance (docs/fleet.md). The
// root module never requires Temporal, so this runs the fleet command of
// the temporalagent/examples module, with the same flags: the one built
// beside this binary (named fleet, as the guides build it) if there is
// one, else one it builds into the user's cache directory. Either is
// built from the clone first when it is not up to date (the first build
// compiles the Temporal SDK's client; a build that finds it up to date
// takes seconds), one build at a time for instances started together.
//
// docs/serving.md has curl lines for an approval and a resume.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/toolnexus/toolnexus-go/examples/server/serverapp"
)

// options configure the command: the app's, and where it listens.
type options struct {
	serverapp.Options
	addr string
}

func main() {
	var opts options
	flag.StringVar(&opts.addr, "addr", "localhost:8080", "listen on `host:port`")
	flag.BoolVar(&opts.Approve, "approve", false, "get_weather needs approval")
	flag.StringVar(&opts.Model, "model", serverapp.DefaultModel, "Gemini model to use with an API key")
	flag.StringVar(&opts.LiveModel, "live-model", serverapp.DefaultLiveModel, "Gemini Live model of the voice sessions (/live), with an API key (offline: the offline model's)")
	flag.StringVar(&opts.DB, "db", "", "keep the threads in this SQLite `file`, or the PostgreSQL database of this postgres:// URL or key=value connection string ('host=… dbname=…'; default: in memory)")
	flag.Var(&opts.CORS, "cors", "let pages of this `origin` (e.g. http://localhost:5173) call the server; repeat it, or separate origins with commas")
	temporal := flag.String("temporal", "", "serve as an instance of a fleet: the runs on the Temporal server at `host:port`, the threads in -db (shared by every instance); run by "+fleetModule+"/fleet, which this builds")
	flag.String("namespace", "default", "with -temporal: the Temporal `namespace`")
	flag.String("queue", "toolnexus-fleet", "with -temporal: the task `queue` of the fleet's workers")
	flag.Duration("run-timeout", 48*time.Hour, "with -temporal: how long a run may take, its waits for approvals included")
	flag.Duration("approval-timeout", 24*time.Hour, "with -temporal: how long a call waits for its approval before it is denied and the run goes on (0: until -run-timeout)")
	flag.Duration("sticky-timeout", time.Second, "with -temporal: how long a run's next step waits for the instance that last ran it (killed, say) before another takes it")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: server [-addr host:port] [-approve] [-model name] [-live-model name] [-db file|postgres://…] [-cors origin]\n"+
			"       server -temporal host:port -db postgres://… [-namespace ns] [-queue name] [-run-timeout d] [-approval-timeout d] [-sticky-timeout d] [flags above]\n\n"+
			"Serves the demo agent over AG-UI (POST /agui), the AI SDK's UI message stream (POST /api/chat,\n"+
			"GET and DELETE /api/chat/{id}/stream) and A2A (GET /.well-known/agent-card.json; 1.0: POST /a2a/v1, /a2a/v1/rest/;\n"+
			"0.3: POST /a2a), on Gemini when "+
			"GEMINI_API_KEY or GOOGLE_API_KEY is set, offline otherwise.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if *temporal != "" {
		err := execFleet(os.Args[1:])
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
	flag.Visit(func(f *flag.Flag) {
		if slices.Contains(fleetFlags, f.Name) {
			fmt.Fprintf(os.Stderr, "server: -%s needs -temporal\n", f.Name)
			os.Exit(2)
		}
	})
	opts.APIKey = os.Getenv("GEMINI_API_KEY")
	if opts.APIKey == "" {
		opts.APIKey = os.Getenv("GOOGLE_API_KEY")
	}
	// genai writes stream hiccups to the standard logger.
	log.SetOutput(io.Discard)
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", opts.addr)
	if err != nil {
		logger.Error("server: " + err.Error())
		os.Exit(1)
	}
	if err := serve(ctx, opts, ln, logger); err != nil {
		logger.Error("server: " + err.Error())
		os.Exit(1)
	}
}

// serve serves on ln until ctx is done, then shuts down (see
// serverapp.Serve).
func serve(ctx context.Context, opts options, ln net.Listener, logger *slog.Logger) error {
	return serverapp.Serve(ctx, opts.Options, ln, logger)
}
