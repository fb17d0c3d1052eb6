package main

// -web ADDR serves the chat's agent to a browser: package devui's page,
// on package agentserver, with the same agent, tools (-mcp), approvals
// (-approve) and conversations (-session) as the terminal chat.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/agentserver/devui"
	"github.com/toolnexus/toolnexus-go/agentserver/live"
	"github.com/toolnexus/toolnexus-go/examples/internal/httpserver"
	"github.com/toolnexus/toolnexus-go/session"
	"google.golang.org/genai"
)

// serveWeb serves the dev UI for a on opts.web until ctx is done or an
// interrupt comes, then shuts down: runs in flight get a few seconds to
// end, and every run is saved.
// webLiveModel is the Live model of the page's voice sessions on Gemini.
const webLiveModel = "gemini-3.8-live"

// serveWeb's voice is the agent of the page's voice sessions on
// liveClient's Live API (nil: the page has no Voice button).
func serveWeb(ctx context.Context, opts options, a, voice *agent.Agent, liveClient *genai.Client, convs *conversations, out io.Writer) error {
	ln, err := net.Listen("tcp", opts.web)
	if err != nil {
		return err
	}
	rec := devui.NewRecorder(nil)
	logger := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var store session.Store = convs.store
	if convs.path != "" {
		store = sharedStore{convs.store} // the terminal's conversations are the page's threads
	}
	// One user, on their own machine, with their own conversations: the
	// per-user quotas of an open server are off.
	srv, err := agentserver.New(agentserver.Config{Agent: a, Store: store, Observer: rec, Logger: logger,
		MaxThreadsPerUser: -1, MaxBytesPerUser: -1})
	if err != nil {
		ln.Close()
		return err
	}
	// The page's user is the one who approves the calls (-approve): a tool
	// they run by hand from the Agent page is approved by that click, as
	// a call they approve in the chat.
	uiOpts := &devui.Options{Recorder: rec, Title: "chat · " + a.Steps().Model(), RunToolsNeedingApproval: true}
	var lh *live.Handler
	if voice != nil && liveClient != nil {
		if lh, err = live.New(srv, live.Config{Client: liveClient, Agent: voice}); err != nil {
			srv.Close(ctx)
			ln.Close()
			return err
		}
		uiOpts.Live = lh
	}
	if convs.path != "" {
		uiOpts.Thread = convs.name
	}
	hs := httpserver.New(devui.Handler(srv, uiOpts))
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	fmt.Fprintf(out, "Serving the dev UI at http://%s/ (Ctrl-C stops)\n", ln.Addr())
	if convs.path != "" {
		fmt.Fprintf(out, "Conversations are kept in %s; the page opens %q.\n", convs.path, convs.name)
	}

	var serveErr error
	select {
	case serveErr = <-served:
	case <-ctx.Done():
	case <-opts.interrupts:
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if lh != nil {
		lh.Close(shutdown) // voice sessions end, their transcripts saved
	}
	err = srv.Close(shutdown)
	if herr := hs.Shutdown(shutdown); herr != nil && err == nil {
		err = herr
	}
	if serveErr == nil {
		serveErr = <-served
	}
	if !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return err
}

// webPrefix starts the store id of every thread of the page's one user,
// "local" (agentserver's anonymous user): agentserver names the thread
// "chat" of user "local" "agentserver/local/chat".
const webPrefix = "agentserver/local/"

// sharedStore shows the terminal chat's conversations to the page as its
// threads, and the page's threads to the terminal chat as conversations:
// the thread "demo" is the conversation -session demo continues.
type sharedStore struct{ session.Store }

// The page lists threads through the store's index, as the terminal does.
var _ session.Lister = sharedStore{}

func (s sharedStore) name(id string) (string, error) {
	name, ok := strings.CutPrefix(id, webPrefix)
	if !ok {
		return "", session.ErrNotFound
	}
	return name, nil
}

func (s sharedStore) Load(ctx context.Context, id string) ([]*genai.Content, error) {
	name, err := s.name(id)
	if err != nil {
		return nil, err
	}
	return s.Store.Load(ctx, name)
}

func (s sharedStore) Append(ctx context.Context, id string, contents []*genai.Content) error {
	name, err := s.name(id)
	if err != nil {
		return fmt.Errorf("chat: conversation %q is not the page's: %w", id, err)
	}
	return s.Store.Append(ctx, name, contents)
}

func (s sharedStore) Delete(ctx context.Context, id string) error {
	name, err := s.name(id)
	if err != nil {
		return err
	}
	return s.Store.Delete(ctx, name)
}

// inner returns the prefix of the terminal's conversation names that
// prefix, a prefix of the page's thread ids, spans; ok is false when it
// spans none.
func (s sharedStore) inner(prefix string) (string, bool) {
	if name, ok := strings.CutPrefix(prefix, webPrefix); ok {
		return name, true
	}
	return "", strings.HasPrefix(webPrefix, prefix)
}

// ListPage lists the terminal's conversations as the page's threads, from
// the store's listing.
func (s sharedStore) ListPage(ctx context.Context, opts session.ListOptions) (session.Page, error) {
	var ok bool
	if opts.Prefix, ok = s.inner(opts.Prefix); !ok {
		return session.Page{}, nil
	}
	page, err := session.ListPage(ctx, s.Store, opts)
	for i := range page.Infos {
		page.Infos[i].ID = webPrefix + page.Infos[i].ID
	}
	return page, err
}

// Usage totals the terminal's conversations as the page's threads.
func (s sharedStore) Usage(ctx context.Context, prefix string) (session.Usage, error) {
	prefix, ok := s.inner(prefix)
	if !ok {
		return session.Usage{}, nil
	}
	return session.UsageOf(ctx, s.Store, prefix)
}

func (s sharedStore) List(ctx context.Context) ([]session.Info, error) {
	infos, err := s.Store.List(ctx)
	for i := range infos {
		infos[i].ID = webPrefix + infos[i].ID
	}
	return infos, err
}
