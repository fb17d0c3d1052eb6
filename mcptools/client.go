package mcptools

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// ErrClosed is the error of a call made after [Client.Close].
var ErrClosed = errors.New("mcptools: client is closed")

// ErrNameCollision is wrapped by the error [Connect] returns when two of the
// server's tools would reach the model under the same name.
var ErrNameCollision = errors.New("mcptools: tool name collision")

// refreshTimeout bounds the tools/list calls [Client.Tools] makes after the
// server said its list changed, since Tools has no context.
const refreshTimeout = 30 * time.Second

// Options configure a [Client]. The zero value is ready to use.
type Options struct {
	// Prefix is put before the name of each of the server's tools, e.g.
	// "github_", so that the tools of several servers cannot collide in one
	// set. Characters Gemini refuses are replaced as in the names.
	Prefix string

	// Filter, when set, keeps only the tools it returns true for. It sees
	// each tool as the server describes it, under its original name.
	Filter func(*mcp.Tool) bool

	// MapResult, when set, replaces [Output] for every call: it turns the
	// server's answer into what the tool returns, which the model receives.
	// Return a [toolset.MediaOutput] to hand back media, and an error for
	// a failure the model should read. It may call Output itself. It is
	// called concurrently.
	MapResult func(ctx context.Context, tool *mcp.Tool, res *mcp.CallToolResult) (any, error)

	// Logger receives reconnections, retries and skipped tools, at Warn.
	// Nil means silent.
	Logger *slog.Logger

	// ClientOptions configure go-sdk's client beyond the tools: handlers
	// for what a server may ask of the client (ElicitationHandler to ask
	// the user, CreateMessageHandler for sampling), for its log messages
	// and notifications, its capabilities, keepalive… They are used as
	// they are, except that ToolListChangedHandler is called after the
	// client has marked its tools for listing again, and
	// ProgressNotificationHandler after the client has reported the
	// notification as the progress of the call it is for. Nil means
	// go-sdk's defaults: the client offers the server nothing but roots.
	ClientOptions *mcp.ClientOptions

	// ProtocolVersion, when set, is the protocol revision the client asks
	// for, e.g. "2025-11-25" to keep to sessions with a server that speaks
	// 2026-07-28 too; the server may answer with another it speaks. Empty
	// means the latest go-sdk speaks: the client asks the server which
	// revisions it speaks (server/discover) and uses 2026-07-28, without
	// a session, with one that speaks it, and falls back to a session
	// (initialize) with one that does not.
	ProtocolVersion string
}

// A SkippedTool is a tool of the server that [Client.Tools] leaves out,
// because it cannot be used, and why.
type SkippedTool struct {
	Name string // the server's name for it
	Err  error
}

// A Client holds a session with one MCP server and offers the server's
// tools as toolset tools. It is safe for concurrent use.
type Client struct {
	dial   Dial
	opts   Options
	logger *slog.Logger
	mcp    *mcp.Client

	// stale is set when the server said its tool list changed, and after
	// a reconnection: the next Tools call lists the tools again.
	stale atomic.Bool

	// mu guards what follows; it is never held while talking to the
	// server or waiting for a process.
	mu       sync.Mutex
	session  *mcp.ClientSession // nil while disconnected
	ended    chan struct{}      // closed when session's connection ends
	dialing  *attempt           // the connection in progress, if any
	retiring chan struct{}      // closed once the last session dropped is closed
	sessions int                // sessions started so far
	closed   bool
	tools    []*toolset.Tool
	skipped  []SkippedTool
	fresh    time.Time // with a ttlMs, when the tools listed need listing again (zero: on change only)

	// workers counts the goroutines that outlive a call: a watcher per
	// session until it ends, the connections in progress, and the closing
	// of dropped sessions. Close waits for them all.
	workers sync.WaitGroup

	// progress holds the calls in flight whose progress someone listens
	// to, by the progress token sent with them: the server's progress
	// notifications are reported under the call's context.
	progress   sync.Map // string -> context.Context
	progressID atomic.Uint64
}

// An attempt is a connection in progress. The calls that need a session
// wait for it together, each until its own context ends; it is abandoned,
// and a command's process ended, when the last of them leaves or the
// client is closed.
type attempt struct {
	cancel  context.CancelFunc
	waiters int           // calls waiting for it; guarded by Client.mu
	done    chan struct{} // closed once session or err is set
	session *mcp.ClientSession
	err     error
}

// Connect starts a session with the server dial reaches and lists its
// tools, following every page. A tool whose input schema cannot be used is
// left out and reported by [Client.Skipped], never an error. Two tools that
// would reach the model under the same name are an error (wrapping
// [ErrNameCollision]): set [Options.Filter] to drop one.
//
// The listing follows the server's cursors for at most 1000 pages, and a
// server that gives a cursor a second time is an error: a list that never
// ends cannot keep Connect (or [Client.Tools]) listing.
//
// opts may be nil. ctx bounds the connection and the listing only; the
// session lasts until [Client.Close]. When ctx ends first, for instance
// while a command's server is still starting, Connect returns its error
// once the server's process is ended (see [Command]).
func Connect(ctx context.Context, dial Dial, opts *Options) (*Client, error) {
	if dial == nil {
		return nil, errors.New("mcptools: Connect: dial is nil")
	}
	c := &Client{dial: dial}
	if opts != nil {
		c.opts = *opts
	}
	c.logger = c.opts.Logger
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	var sdkOpts mcp.ClientOptions
	if c.opts.ClientOptions != nil {
		sdkOpts = *c.opts.ClientOptions
	}
	changed := sdkOpts.ToolListChangedHandler
	sdkOpts.ToolListChangedHandler = func(ctx context.Context, req *mcp.ToolListChangedRequest) {
		c.stale.Store(true)
		if changed != nil {
			changed(ctx, req)
		}
	}
	progressed := sdkOpts.ProgressNotificationHandler
	sdkOpts.ProgressNotificationHandler = func(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
		c.reportProgress(req.Params)
		if progressed != nil {
			progressed(ctx, req)
		}
	}
	c.mcp = mcp.NewClient(&mcp.Implementation{Name: "toolnexus-go", Version: "v1"}, &sdkOpts)
	session, err := c.live(ctx)
	if err != nil {
		c.Close()
		return nil, err
	}
	if err := c.refresh(ctx, session); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Tools returns a tool for each of the server's tools, in the server's
// order, ready for toolset.New: its name follows Gemini's rule (with
// Options.Prefix), its description and input schema are the server's, its
// arguments are validated before the server is called, and it calls the
// server under the tool's original name.
//
// After the server said its tool list changed, or after a reconnection,
// Tools lists the tools again first (for at most 30 seconds); if that
// fails, it returns the tools it had and tries again on the next call. A
// set already built keeps the tools it was built with.
func (c *Client) Tools() []*toolset.Tool {
	c.mu.Lock()
	expired := !c.fresh.IsZero() && !time.Now().Before(c.fresh)
	c.mu.Unlock()
	if c.stale.Load() || expired {
		ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
		defer cancel()
		session, err := c.live(ctx)
		if err == nil {
			err = c.refresh(ctx, session)
		}
		if err != nil {
			c.stale.Store(true)
			c.logger.Warn("mcptools: listing the tools again failed; keeping the previous list", slog.Any("error", err))
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.tools)
}

// Skipped returns the tools of the last listing that Tools leaves out, and
// why.
func (c *Client) Skipped() []SkippedTool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.skipped)
}

// Close ends the session; for a command, the server's process is ended
// (see [Command]) and waited for, so that nothing is left running. A
// connection in progress is abandoned, its process ended too. Calls in
// progress fail, with [ErrClosed] when they were waiting for the
// connection. Close is idempotent; every call returns once nothing is left
// running.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		c.workers.Wait()
		return nil
	}
	c.closed = true
	session := c.session
	c.session, c.ended = nil, nil
	if a := c.dialing; a != nil {
		c.dialing = nil
		a.cancel()
	}
	c.mu.Unlock()
	var err error
	if session != nil {
		err = session.Close()
	}
	c.workers.Wait()
	return err
}

// refresh lists the server's tools on session and makes the tools the
// model gets.
func (c *Client) refresh(ctx context.Context, session *mcp.ClientSession) error {
	c.stale.Store(false) // a change announced from now on is seen again
	listed := time.Now()
	remote, ttl, err := listTools(ctx, session)
	if err != nil {
		return fmt.Errorf("mcptools: listing tools: %w", err)
	}
	var tools []*toolset.Tool
	var skipped []SkippedTool
	byName := map[string]string{} // model's name -> server's name
	for _, rt := range remote {
		if c.opts.Filter != nil && !c.opts.Filter(rt) {
			continue
		}
		t, err := c.tool(rt)
		if err != nil {
			skipped = append(skipped, SkippedTool{Name: rt.Name, Err: err})
			c.logger.Warn("mcptools: skipping a tool that cannot be used", slog.String("tool", rt.Name), slog.Any("error", err))
			continue
		}
		if other, dup := byName[t.Name]; dup {
			return fmt.Errorf("%w: the server's tools %q and %q would both be called %q; drop one with Options.Filter",
				ErrNameCollision, other, rt.Name, t.Name)
		}
		byName[t.Name] = rt.Name
		tools = append(tools, t)
	}
	c.mu.Lock()
	c.tools, c.skipped = tools, skipped
	c.fresh = time.Time{}
	if ttl >= 0 && stateless(session) {
		// Without a session, the server cannot say that its tools
		// changed: the list is fresh for its ttlMs.
		c.fresh = listed.Add(time.Duration(ttl) * time.Millisecond)
	}
	c.mu.Unlock()
	return nil
}

// ProtocolVersion returns the protocol revision of the client's current
// connection with the server, e.g. "2026-07-28" (stateless) or
// "2025-11-25" (a session); empty while disconnected.
func (c *Client) ProtocolVersion() string {
	c.mu.Lock()
	session := c.session
	c.mu.Unlock()
	if session == nil || session.InitializeResult() == nil {
		return ""
	}
	return session.InitializeResult().ProtocolVersion
}

// stateless reports whether session speaks a revision without sessions.
func stateless(session *mcp.ClientSession) bool {
	r := session.InitializeResult()
	return r != nil && r.ProtocolVersion >= revisionStateless
}

// tool makes the toolset tool for the server's tool rt.
func (c *Client) tool(rt *mcp.Tool) (*toolset.Tool, error) {
	schema, err := inputSchema(rt.InputSchema)
	if err != nil {
		return nil, err
	}
	description := rt.Description
	if description == "" {
		description = rt.Title
	}
	if description == "" && rt.Annotations != nil {
		description = rt.Annotations.Title
	}
	t := toolset.Tool{
		Name:        geminiName(c.opts.Prefix, rt.Name),
		Description: description,
		InputSchema: schema,
	}
	if a := rt.Annotations; a != nil {
		t.ReadOnly, t.Idempotent = a.ReadOnlyHint, a.IdempotentHint
	}
	var tool *toolset.Tool // the tool defined, whose hints a caller may have cleared
	t.Run = func(ctx context.Context, args map[string]any) (any, error) {
		return c.call(ctx, rt, tool.SafeToRepeat(), args)
	}
	tool, err = toolset.Define(t)
	return tool, err
}

// call calls the server's tool rt. A call whose connection was lost is
// made again, once, after reconnecting, when it certainly did not run (the
// server no longer knew the session) or when the tool is safe to repeat
// (read-only or idempotent, by its annotations); any other such call is
// answered with an error saying that it may or may not have run.
//
// When someone listens to the call's progress (toolset.WantsProgress),
// the call asks the server for it, with a progress token, and the
// server's notifications/progress for it are reported under ctx until
// the call returns.
func (c *Client) call(ctx context.Context, rt *mcp.Tool, safe bool, args map[string]any) (any, error) {
	params := &mcp.CallToolParams{Name: rt.Name, Arguments: args}
	if toolset.WantsProgress(ctx) {
		token := "toolnexus-" + strconv.FormatUint(c.progressID.Add(1), 10)
		params.SetProgressToken(token)
		c.progress.Store(token, ctx)
		defer c.progress.Delete(token)
	}
	res, err := c.callOnce(ctx, params)
	var lost *lostError
	if errors.As(err, &lost) && (errors.Is(err, mcp.ErrSessionMissing) || safe) && ctx.Err() == nil {
		c.logger.Warn("mcptools: calling again on a new session", slog.String("tool", rt.Name), slog.Any("error", lost.err))
		res, err = c.callOnce(ctx, params)
	}
	if err != nil {
		return nil, err
	}
	if c.opts.MapResult != nil {
		return c.opts.MapResult(ctx, rt, res)
	}
	return Output(res)
}

// lostError is the error of a call whose connection failed while it was in
// flight.
type lostError struct {
	tool string
	err  error
}

func (e *lostError) Error() string {
	return fmt.Sprintf("the connection to the MCP server was lost during the call, so %s may or may not have run: %v", e.tool, e.err)
}

func (e *lostError) Unwrap() error { return e.err }

// reportProgress reports a progress notification of the server under the
// context of the call it is for, if that call is in flight.
func (c *Client) reportProgress(p *mcp.ProgressNotificationParams) {
	token, ok := p.ProgressToken.(string)
	if !ok {
		return
	}
	if ctx, ok := c.progress.Load(token); ok {
		toolset.ReportProgress(ctx.(context.Context), p.Progress, p.Total, p.Message)
	}
}

// callOnce makes one call on the live session, connecting first if needed.
func (c *Client) callOnce(ctx context.Context, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	name := params.Name
	session, err := c.live(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s was not run: %w", name, err)
	}
	res, err := session.CallTool(ctx, params)
	switch {
	case err == nil:
		return res, nil
	case ctx.Err() != nil:
		return nil, err
	case errors.Is(err, ErrRefreshFailed), errors.Is(err, ErrClientRejected):
		// The request was not sent: the session is fine.
		return nil, fmt.Errorf("%s was not run: %w", name, err)
	}
	var refused *jsonrpc.Error
	if errors.As(err, &refused) {
		// The server answered: the session is fine, the call was refused.
		return nil, fmt.Errorf("the MCP server refused the call of %s: %s", name, refused.Message)
	}
	c.drop(session)
	return nil, &lostError{tool: name, err: err}
}

// live returns the session, starting a new one when there is none or the
// last one ended (the process exited, the connection dropped). A call that
// needs a new session waits for the connection in progress, or starts
// one, until it is made or ctx ends.
func (c *Client) live(ctx context.Context) (*mcp.ClientSession, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	if c.session != nil {
		select {
		case <-c.ended:
			c.logger.Warn("mcptools: the MCP session ended; reconnecting")
			c.retireLocked()
		default:
			session := c.session
			c.mu.Unlock()
			return session, nil
		}
	}
	if err := ctx.Err(); err != nil {
		c.mu.Unlock()
		return nil, fmt.Errorf("mcptools: connecting to the MCP server: %w", err)
	}
	a := c.dialing
	if a == nil {
		t := c.dial()
		if t == nil {
			c.mu.Unlock()
			return nil, errors.New("mcptools: the Dial returned no transport")
		}
		a = c.startLocked(ctx, t)
	}
	a.waiters++
	c.mu.Unlock()

	select {
	case <-a.done:
		return a.session, a.err
	case <-ctx.Done():
		c.mu.Lock()
		if a.waiters--; a.waiters == 0 && c.dialing == a {
			// Nobody waits for it any more: the next call starts afresh.
			c.dialing = nil
			a.cancel()
		}
		c.mu.Unlock()
		return nil, fmt.Errorf("mcptools: connecting to the MCP server: %w", ctx.Err())
	}
}

// startLocked starts connecting on t, in the background, with the values
// of ctx, the context of the call that needs the connection, but not its
// end: the connection is the client's, for every call.
func (c *Client) startLocked(ctx context.Context, t mcp.Transport) *attempt {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	a := &attempt{cancel: cancel, done: make(chan struct{})}
	c.dialing = a
	retiring := c.retiring
	c.workers.Add(1)
	go func() {
		defer c.workers.Done()
		defer cancel()
		if retiring != nil {
			// One server at a time: the session dropped goes first (for
			// a command, its process is reaped).
			select {
			case <-retiring:
			case <-ctx.Done():
			}
		}
		session, err := connectSession(ctx, c.mcp, t, c.opts.ProtocolVersion)
		c.finish(a, session, err)
	}()
	return a
}

// finish ends the attempt a, which made session or failed with err: the
// session becomes the client's, unless a was abandoned or the client
// closed meanwhile, and a's waiters are woken.
func (c *Client) finish(a *attempt, session *mcp.ClientSession, err error) {
	c.mu.Lock()
	current := c.dialing == a
	if current {
		c.dialing = nil
	}
	switch {
	case c.closed:
		err = ErrClosed
	case err != nil:
	case current:
		ended := make(chan struct{})
		c.workers.Add(1)
		go func() {
			defer c.workers.Done()
			_ = session.Wait()
			close(ended)
		}()
		if c.sessions > 0 {
			c.stale.Store(true) // a new session: the list may have changed
		}
		c.sessions++
		c.session, c.ended = session, ended
		a.session = session
	default:
		// Abandoned by its callers, and maybe replaced: no one will use it.
		err = errors.New("mcptools: the connection was abandoned")
	}
	a.err = err
	c.mu.Unlock()
	if a.session == nil && session != nil {
		_ = session.Close()
	}
	close(a.done)
}

// drop discards session if it is still the current one.
func (c *Client) drop(session *mcp.ClientSession) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.session == session {
		c.logger.Warn("mcptools: the connection to the MCP server failed; reconnecting on the next call")
		c.retireLocked()
	}
}

// retireLocked forgets the current session and closes it in the
// background, which reaps a command's process; the next connection waits
// for that.
func (c *Client) retireLocked() {
	session := c.session
	c.session, c.ended = nil, nil
	done := make(chan struct{})
	c.retiring = done
	c.workers.Add(1)
	go func() {
		defer c.workers.Done()
		defer close(done)
		_ = session.Close() // the error of a session that already failed says nothing new
	}()
}

// connectSession starts a session on t. Whatever step fails, a connection
// t made is closed, so that no process is left running.
func connectSession(ctx context.Context, client *mcp.Client, t mcp.Transport, version string) (*mcp.ClientSession, error) {
	ctx = context.WithValue(ctx, connectingKey{}, &connecting{})
	tracked := &trackedTransport{Transport: t}
	session, err := client.Connect(ctx, tracked, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		if tracked.conn != nil {
			_ = tracked.conn.Close() // closing twice is harmless: the SDK's connections close once
		}
		return nil, fmt.Errorf("mcptools: connecting to the MCP server: %w", err)
	}
	return session, nil
}

// connecting is what the requests of one connection attempt share, in
// their context: a login that failed during the attempt (the protocol's
// server/discover, then initialize, would ask the user twice).
type connecting struct {
	mu          sync.Mutex
	loginFailed error
}

type connectingKey struct{}

// trackedTransport remembers the connection its transport made.
type trackedTransport struct {
	mcp.Transport
	conn mcp.Connection
}

func (t *trackedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	t.conn = conn
	return conn, err
}

// maxToolPages bounds the pages of one listing of the tools.
const maxToolPages = 1000

// listTools lists the server's tools, following its cursors: at most
// maxToolPages pages, and never the same cursor twice. ttl is the least
// ttlMs of the pages.
func listTools(ctx context.Context, session *mcp.ClientSession) (tools []*mcp.Tool, ttl int, err error) {
	seen := map[string]bool{}
	params := &mcp.ListToolsParams{}
	for page := 1; ; page++ {
		res, err := session.ListTools(ctx, params)
		if err != nil {
			return nil, 0, err
		}
		if page == 1 || res.TTLMs < ttl {
			ttl = res.TTLMs
		}
		tools = append(tools, res.Tools...)
		next := res.NextCursor
		switch {
		case next == "":
			return tools, ttl, nil
		case seen[next]:
			return nil, 0, fmt.Errorf("after page %d, the server gave the cursor %s again: its list would never end", page, quoteCursor(next))
		case page == maxToolPages:
			return nil, 0, fmt.Errorf("the server's list goes on for more than %d pages", maxToolPages)
		}
		seen[next] = true
		params.Cursor = next
	}
}

// quoteCursor quotes a cursor for an error, cut short if it is long.
func quoteCursor(cursor string) string {
	const limit = 64
	if len(cursor) > limit {
		return strconv.Quote(cursor[:limit]) + "…"
	}
	return strconv.Quote(cursor)
}
