// Package serverapp is the demo agent's server of examples/server: the
// agent, its store and its routes (AG-UI, the AI SDK stream, A2A), and
// the serving loop with its graceful shutdown. It is a package of its own
// so that a command of another module reuses the wiring with another
// agentserver.Runner: temporalagent/examples/fleet serves the same agent
// through Temporal, as a fleet of instances.
package serverapp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus-go/a2aagent"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/agentserver/agui"
	"github.com/toolnexus/toolnexus-go/agentserver/aisdk"
	"github.com/toolnexus/toolnexus-go/agentserver/live"
	"github.com/toolnexus/toolnexus-go/artifact"
	"github.com/toolnexus/toolnexus-go/examples/internal/demotools"
	"github.com/toolnexus/toolnexus-go/examples/internal/httpserver"
	"github.com/toolnexus/toolnexus-go/examples/internal/stores"
	"github.com/toolnexus/toolnexus-go/internal/offline"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// DefaultModel is the model used with an API key, unless
// Options.Model says otherwise.
const DefaultModel = "gemini-3.5-flash"

// DefaultLiveModel is the Live model of the voice sessions (/live),
// unless Options.LiveModel says otherwise.
const DefaultLiveModel = "gemini-3.8-live"

// MaxFileBytesPerUser bounds the bytes of one user's files (the charts
// they asked for, the files they sent).
const MaxFileBytesPerUser = 64 << 20

// AgentName is the agent's name (agent.Config.Name: in its events, its
// traces and a dev UI) and on its A2A card: a remote-agent tool of it is
// called demo_agent.
const AgentName = "demo agent"

const systemPrompt = "You are a helpful assistant in a web chat. Use the tools when they help: " +
	"get_weather and weather_chart (their data is made up: say so), current_time and calculate; " +
	"load_artifacts shows you the files of the conversation. Answer briefly."

// Options configure the server.
type Options struct {
	Approve bool       // get_weather needs approval
	Model   string     // with an API key
	APIKey  string     // empty: the offline model
	DB      string     // the SQLite file or PostgreSQL URL of the threads; empty: memory
	CORS    OriginList // the origins whose pages may call the server
	// LiveModel is the model of the voice sessions at /live, with an API
	// key or LiveClient; empty: DefaultLiveModel. Offline, the voice
	// sessions are the offline model's (it hears speech but no words:
	// any spoken turn asks it the weather in Paris).
	LiveModel string

	// Models, when set, replaces both the API and the offline model
	// (tests script the fake with it).
	Models agent.Models
	// LiveClient, when set, is the Live client of the voice sessions
	// (tests give the fake's).
	LiveClient *genai.Client

	// Runner, when set, makes the Runner that hosts the runs, given the
	// agent and the threads' store (nil: the server's in-process runner).
	// The func it returns, if any, is called when the app closes, after
	// the server.
	Runner func(ctx context.Context, a *agent.Agent, store session.Store) (agentserver.Runner, func(), error)
}

// OriginList is the -cors flag: origins, repeated or comma-separated.
type OriginList []string

// String implements flag.Value.
func (l *OriginList) String() string { return strings.Join(*l, ",") }

// Set implements flag.Value.
func (l *OriginList) Set(s string) error {
	for o := range strings.SplitSeq(s, ",") {
		if o = strings.TrimSpace(o); o != "" {
			*l = append(*l, o)
		}
	}
	return nil
}

// App is the served agent: its server and its routes.
type App struct {
	// Server serves the agent; Handler holds its routes.
	Server  *agentserver.Server
	Handler http.Handler
	// Live serves the voice sessions at /live; nil without a Live client.
	Live *live.Handler
	// Model is the model's name.
	Model   string
	closers []io.Closer
	stops   []func()
}

// New makes the app: the agent on the Gemini API (opts.APIKey) or the
// offline model, its store, its server and routes. Close it once its
// server is closed.
func New(ctx context.Context, opts Options, logger *slog.Logger) (*App, error) {
	a := &App{}
	models, model := opts.Models, opts.Model
	liveClient, liveModel := opts.LiveClient, cmp.Or(opts.LiveModel, DefaultLiveModel)
	var uploader artifact.Uploader
	switch {
	case models != nil:
	case opts.APIKey != "":
		client, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: opts.APIKey, Backend: genai.BackendGeminiAPI})
		if err != nil {
			return nil, fmt.Errorf("connecting to Gemini: %w", err)
		}
		models, uploader = client.Models, client.Files
		if liveClient == nil {
			liveClient = client
		}
	default:
		fake := offline.NewServer()
		a.stops = append(a.stops, fake.Close)
		client, err := genai.NewClient(ctx, fake.ClientConfig())
		if err != nil {
			fake.Close()
			return nil, err
		}
		models, model, uploader = client.Models, offline.ModelName, client.Files
		if liveClient == nil { // voice sessions on the offline model too
			if liveClient, err = genai.NewClient(ctx, fake.LiveClientConfig()); err != nil {
				a.Close()
				return nil, err
			}
			liveModel = offline.LiveModelName
		}
		logger.Info("no GEMINI_API_KEY set: running on the built-in offline model")
	}
	a.Model = model
	// The files the agent makes (weather_chart's) and those users send
	// are kept beside the threads: in the -db file or database, else in
	// memory; larger ones reach Gemini through its Files API.
	var files artifact.Store = artifact.NewMemory(0)
	var store session.Store = session.NewMemory()
	if opts.DB != "" {
		db, _, err := stores.Open(ctx, opts.DB)
		if err != nil {
			a.Close()
			return nil, err
		}
		store = db
		a.closers = append(a.closers, db)
		if files, err = stores.Artifacts(ctx, db); err != nil {
			a.Close()
			return nil, err
		}
	}
	keeper := artifact.NewKeeper(files, artifact.KeeperOptions{Uploader: uploader, MaxBytesPerUser: MaxFileBytesPerUser})
	tools := slices.Concat(demotools.Set().Tools(), []*toolset.Tool{demotools.WeatherChart(), keeper.Tool()})
	cfg := agent.Config{
		Models: models,
		Model:  model,
		Name:   AgentName,
		Tools:  toolset.MustNew(tools...),
		GenerateConfig: &genai.GenerateContentConfig{
			SystemInstruction: genai.NewContentFromText(systemPrompt, genai.RoleUser),
		},
		ToolTimeout: 30 * time.Second,
	}
	if opts.Approve {
		cfg.NeedsApproval = func(call *genai.FunctionCall) bool { return call.Name == "get_weather" }
	}
	ag, err := agent.New(cfg)
	if err != nil {
		a.Close()
		return nil, err
	}
	var runner agentserver.Runner
	if opts.Runner != nil {
		r, stop, err := opts.Runner(ctx, ag, store)
		if err != nil {
			a.Close()
			return nil, err
		}
		runner = r
		if stop != nil {
			a.stops = append([]func(){stop}, a.stops...)
		}
	}
	a.Server, err = agentserver.New(agentserver.Config{Agent: ag, Store: store, Artifacts: keeper, Logger: logger, AllowedOrigins: opts.CORS, Runner: runner})
	if err != nil {
		a.Close()
		return nil, err
	}
	mux := http.NewServeMux()
	if liveClient != nil {
		// The voice sessions: the same tools and approvals, on a Live model.
		lcfg := cfg
		lcfg.Models, lcfg.Model = liveClient.Models, liveModel
		voice, err := agent.New(lcfg)
		if err == nil {
			a.Live, err = live.New(a.Server, live.Config{Client: liveClient, Agent: voice})
		}
		if err != nil {
			a.Server.Close(ctx)
			a.Close()
			return nil, err
		}
		mux.Handle("/live", a.Live)
	}
	aguiHandler := agui.Handler(a.Server)
	mux.Handle("/agui", aguiHandler)
	mux.Handle("/agui/", aguiHandler)                                         // POST /agui/connect, /agui/cancel; GET /agui/messages
	mux.Handle(agentserver.DefaultArtifactsPath, a.Server.ArtifactsHandler()) // the threads' files
	chat := aisdk.Handler(a.Server)
	mux.Handle("/api/chat", chat)
	mux.Handle("/api/chat/", chat) // GET (resume) and DELETE (stop) /api/chat/{id}/stream, GET /api/chat/{id}/messages
	// A2A: the card, which lists the 1.0 endpoints (under /a2a/v1) and
	// 0.3's (/a2a), on the host the card was asked of.
	a2a := a2aagent.Handler(a.Server, &a2aagent.Options{Name: AgentName,
		Description: "A demo agent: the (made-up) weather in a city, the time in a time zone, and arithmetic."})
	mux.Handle(a2aagent.CardPath, a2a)
	mux.Handle(a2aagent.DefaultPath, a2a)
	mux.Handle(a2aagent.DefaultPath+"/", a2a)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "toolnexus demo agent (%s)\n\nAG-UI:  POST /agui (RunAgentInput), POST /agui/connect, POST /agui/cancel (stop),\n"+
			"        GET /agui/messages?threadId= (the thread's messages)\n"+
			"AI SDK: POST /api/chat (useChat's body), GET /api/chat/{id}/stream (resume), DELETE /api/chat/{id}/stream (stop),\n"+
			"        GET /api/chat/{id}/messages (the chat's messages)\n"+
			"Files:  GET /artifacts/{thread} (a thread's files), GET /artifacts/{thread}/{name}[?version=N] (a file), PUT (upload), DELETE\n"+
			"A2A:    GET %s (the agent card), POST %s/v1 (1.0 JSON-RPC), %s/v1/rest/ (1.0 HTTP+JSON), POST %s (0.3 JSON-RPC)\n", model, a2aagent.CardPath, a2aagent.DefaultPath, a2aagent.DefaultPath, a2aagent.DefaultPath)
		if a.Live != nil {
			fmt.Fprintf(w, "Voice:  GET /live?thread= (a websocket: 16 kHz PCM in, 24 kHz PCM out; see package agentserver/live)\n")
		}
	})
	a.Handler = mux
	return a, nil
}

// Close releases what the app holds, once its server is closed: what
// Options.Runner made, the offline model, the store.
func (a *App) Close() {
	for _, stop := range a.stops {
		stop()
	}
	for _, c := range a.closers {
		c.Close()
	}
}

// Serve serves a new App of opts on ln until ctx is done, then shuts
// down: it stops taking requests and gives runs in flight some time to
// finish (each is saved).
func Serve(ctx context.Context, opts Options, ln net.Listener, logger *slog.Logger) error {
	app, err := New(ctx, opts, logger)
	if err != nil {
		ln.Close()
		return err
	}
	defer app.Close()
	hs := httpserver.New(app.Handler)
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	logger.Info("serving", "url", "http://"+ln.Addr().String(), "model", app.Model,
		"agui", "POST /agui, /agui/connect, /agui/cancel; GET /agui/messages", "aisdk", "POST /api/chat, GET and DELETE /api/chat/{id}/stream, GET /api/chat/{id}/messages",
		"a2a", "GET /.well-known/agent-card.json; 1.0: POST /a2a/v1, /a2a/v1/rest/; 0.3: POST /a2a", "approve", opts.Approve)
	var serveErr error
	select {
	case serveErr = <-done:
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if app.Live != nil {
		app.Live.Close(shutdown) // voice sessions end, their transcripts saved
	}
	err = app.Server.Close(shutdown) // runs end and are saved; streams end
	if herr := hs.Shutdown(shutdown); herr != nil && err == nil {
		err = herr
	}
	if serveErr == nil {
		serveErr = <-done
	}
	if !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return err
}
