package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus-go/a2aagent"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/agentserver/agui"
	"github.com/toolnexus/toolnexus-go/agentserver/aisdk"
	"github.com/toolnexus/toolnexus-go/agentserver/live"
	"github.com/toolnexus/toolnexus-go/examples/internal/demotools"
	"github.com/toolnexus/toolnexus-go/examples/internal/stores"
	"github.com/toolnexus/toolnexus-go/internal/offline"
	"github.com/toolnexus/toolnexus-go/session"
	"google.golang.org/genai"
)

// defaultModel is the model used with an API key, unless -model says
// otherwise.
const defaultModel = "gemini-3.5-flash"

// defaultLiveModel is the Live model of the voice sessions (/live), unless
// -live-model says otherwise.
const defaultLiveModel = "gemini-3.8-live"

// agentName is the agent's name (agent.Config.Name: in its events, its
// traces and a dev UI) and on its A2A card: a remote-agent tool of it is
// called demo_agent.
const agentName = "demo agent"

const systemPrompt = "You are a helpful assistant in a web chat. Use the tools when they help: " +
	"get_weather (its data is made up: say so), current_time and calculate. Answer briefly."

// options configure the server.
type options struct {
	addr    string
	approve bool   // get_weather needs approval
	model   string // with an API key
	apiKey  string // empty: the offline model
	db      string // the SQLite file or PostgreSQL URL of the threads; empty: memory
	cors    originList
	// liveModel is the model of the voice sessions at /live, served with
	// an API key (or liveClient).
	liveModel string

	// models, when set, replaces both the API and the offline model
	// (tests script the fake with it).
	models agent.Models
	// liveClient, when set, is the Live client of the voice sessions
	// (tests give the fake's).
	liveClient *genai.Client
}

// originList is the -cors flag: origins, repeated or comma-separated.
type originList []string

func (l *originList) String() string { return strings.Join(*l, ",") }

func (l *originList) Set(s string) error {
	for o := range strings.SplitSeq(s, ",") {
		if o = strings.TrimSpace(o); o != "" {
			*l = append(*l, o)
		}
	}
	return nil
}

// app is the served agent: its server and its routes.
type app struct {
	srv     *agentserver.Server
	live    *live.Handler // nil: no voice sessions
	handler http.Handler
	model   string
	closers []io.Closer
	stops   []func()
}

func newApp(ctx context.Context, opts options, logger *slog.Logger) (*app, error) {
	a := &app{}
	models, model := opts.models, opts.model
	liveClient := opts.liveClient
	switch {
	case models != nil:
	case opts.apiKey != "":
		client, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: opts.apiKey, Backend: genai.BackendGeminiAPI})
		if err != nil {
			return nil, fmt.Errorf("connecting to Gemini: %w", err)
		}
		models = client.Models
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
		models, model = client.Models, offline.ModelName
		logger.Info("no GEMINI_API_KEY set: running on the built-in offline model")
	}
	a.model = model
	cfg := agent.Config{
		Models: models,
		Model:  model,
		Name:   agentName,
		Tools:  demotools.Set(),
		GenerateConfig: &genai.GenerateContentConfig{
			SystemInstruction: genai.NewContentFromText(systemPrompt, genai.RoleUser),
		},
		ToolTimeout: 30 * time.Second,
	}
	if opts.approve {
		cfg.NeedsApproval = func(call *genai.FunctionCall) bool { return call.Name == "get_weather" }
	}
	ag, err := agent.New(cfg)
	if err != nil {
		a.close()
		return nil, err
	}
	var store session.Store = session.NewMemory()
	if opts.db != "" {
		db, _, err := stores.Open(ctx, opts.db)
		if err != nil {
			a.close()
			return nil, err
		}
		store = db
		a.closers = append(a.closers, db)
	}
	a.srv, err = agentserver.New(agentserver.Config{Agent: ag, Store: store, Logger: logger, AllowedOrigins: opts.cors})
	if err != nil {
		a.close()
		return nil, err
	}
	mux := http.NewServeMux()
	if liveClient != nil {
		// The voice sessions: the same tools and approvals, on a Live model.
		lcfg := cfg
		lcfg.Models, lcfg.Model = liveClient.Models, cmp.Or(opts.liveModel, defaultLiveModel)
		voice, err := agent.New(lcfg)
		if err == nil {
			a.live, err = live.New(a.srv, live.Config{Client: liveClient, Agent: voice})
		}
		if err != nil {
			a.srv.Close(ctx)
			a.close()
			return nil, err
		}
		mux.Handle("/live", a.live)
	}
	aguiHandler := agui.Handler(a.srv)
	mux.Handle("/agui", aguiHandler)
	mux.Handle("/agui/", aguiHandler) // POST /agui/connect, /agui/cancel; GET /agui/messages
	chat := aisdk.Handler(a.srv)
	mux.Handle("/api/chat", chat)
	mux.Handle("/api/chat/", chat) // GET (resume) and DELETE (stop) /api/chat/{id}/stream, GET /api/chat/{id}/messages
	// A2A: the card, which lists the 1.0 endpoints (under /a2a/v1) and
	// 0.3's (/a2a), on the host the card was asked of.
	a2a := a2aagent.Handler(a.srv, &a2aagent.Options{Name: agentName,
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
			"A2A:    GET %s (the agent card), POST %s/v1 (1.0 JSON-RPC), %s/v1/rest/ (1.0 HTTP+JSON), POST %s (0.3 JSON-RPC)\n", model, a2aagent.CardPath, a2aagent.DefaultPath, a2aagent.DefaultPath, a2aagent.DefaultPath)
		if a.live != nil {
			fmt.Fprintf(w, "Voice:  GET /live?thread= (a websocket: 16 kHz PCM in, 24 kHz PCM out; see package agentserver/live)\n")
		}
	})
	a.handler = mux
	return a, nil
}

// close releases what the app holds, once its server is closed.
func (a *app) close() {
	for _, c := range a.closers {
		c.Close()
	}
	for _, stop := range a.stops {
		stop()
	}
}
