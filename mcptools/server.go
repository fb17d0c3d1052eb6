package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolnexus/toolnexus-go/internal/bodytimeout"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// NewServer returns an MCP server offering every tool of set, under its
// name, with its description and input schema, and, for a tool that is
// [toolset.Tool.ReadOnly] or [toolset.Tool.Idempotent], annotations that
// say so (readOnlyHint, idempotentHint). A call runs the tool's
// [toolset.Tool.Execute]: the arguments are validated against the schema
// and a call that fails, invalid arguments included, is answered with
// isError and the same message a model would read from the agent, so that
// the client's model can correct itself; a tool whose error wraps a
// *jsonrpc.Error (such as -32021, a client capability missing) is
// answered with that protocol error instead.
//
// A successful call's output is sent as text (a string as it is, any other
// value as JSON) and, when it is a JSON object, as structured content too;
// the result's media follow as image, audio or embedded resource content
// (the text of a text/* one as text). A tool asks its client's user or
// model through [Input], in every protocol revision, and reaches the rest
// of MCP (logging to the client) through [Request].
//
// A client that asks for a call's progress (a progressToken in the
// request's _meta) is sent the tool's reports ([toolset.ReportProgress])
// as notifications/progress: paced, at most one per
// toolset.DefaultProgressInterval, the latest report kept, the last one
// sent before the result; a report whose done is not more than the last
// one sent is not sent, since the protocol asks progress to increase.
// After the last, the server pings the client before it sends the
// result, so that a client that handles a session's messages in order
// has handled them all when the result comes. A call without a token
// reports to no one.
//
// impl names the server to its clients; nil means {Name: "toolnexus-go"}.
// The server can be run on any transport: see [ServeStdio] and
// [HTTPHandler] for the usual two.
func NewServer(set *toolset.Set, impl *mcp.Implementation) *mcp.Server {
	return newServer(set, impl, nil, newStateKeeper(nil, 0))
}

// DefaultToolListTTL is how long a client of protocol revision 2026-07-28
// may keep the tool list of a server [NewServer] made (its ttlMs): a
// toolset's tools do not change.
const DefaultToolListTTL = 5 * time.Minute

// newServer is NewServer speaking versions (nil: every one go-sdk
// speaks), signing the requestState of stateless calls with states.
func newServer(set *toolset.Set, impl *mcp.Implementation, versions []string, states *stateKeeper) *mcp.Server {
	if impl == nil {
		impl = &mcp.Implementation{Name: "toolnexus-go", Version: "v1"}
	}
	srv := mcp.NewServer(impl, &mcp.ServerOptions{
		SupportedProtocolVersions: versions,
		SetCacheable: func(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
			if _, ok := req.(*mcp.ListToolsRequest); ok {
				c.TTLMs, c.CacheScope = int(DefaultToolListTTL.Milliseconds()), "public"
			}
		},
	})
	for _, t := range set.Tools() {
		mt := &mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: objectSchema(t.Schema())}
		if t.ReadOnly || t.Idempotent {
			mt.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: t.ReadOnly, IdempotentHint: t.Idempotent}
		}
		srv.AddTool(mt, handler(t, states))
	}
	return srv
}

// ServeStdio serves the tools of set over standard input and output, as a
// local MCP server started by its client, until the client closes the
// connection or ctx is done.
func ServeStdio(ctx context.Context, set *toolset.Set, impl *mcp.Implementation) error {
	return NewServer(set, impl).Run(ctx, &mcp.StdioTransport{})
}

// HTTPHandler serves the tools of set over MCP's streamable HTTP transport,
// one session per client up to protocol revision 2025-11-25 and none from 2026-07-28 on, with the default [HandlerOptions]: it is
// NewHTTPHandler(set, impl, nil). Mount it where clients will dial it,
// behind whatever authentication the deployment needs.
func HTTPHandler(set *toolset.Set, impl *mcp.Implementation) http.Handler {
	return NewHTTPHandler(set, impl, nil)
}

// DefaultSessionTimeout is how long a session [NewHTTPHandler] serves may
// stay idle before it is closed, unless [HandlerOptions] say otherwise.
const DefaultSessionTimeout = 30 * time.Minute

// DefaultBodyTimeout is how long [NewHTTPHandler] waits for a request's
// body, unless [HandlerOptions] say otherwise.
const DefaultBodyTimeout = 30 * time.Second

// HandlerOptions configure [NewHTTPHandler]. The zero value is ready to
// use.
type HandlerOptions struct {
	// Streamable configures go-sdk's streamable HTTP handler, which serves
	// the sessions (JSON responses, stateless mode, an event store for
	// resumption, the request body limit, logging…). Its fields are used
	// as they are, except a zero SessionTimeout, which means
	// DefaultSessionTimeout: set SessionTimeout negative to keep idle
	// sessions until their clients end them (go-sdk's zero). Nil means
	// go-sdk's defaults, with SessionTimeout DefaultSessionTimeout.
	Streamable *mcp.StreamableHTTPOptions

	// MaxSessions bounds the sessions the handler keeps at a time: a
	// request that would open one more (an initialize) is refused with
	// 503 until a session ends or times out, so that clients that open
	// sessions without end cannot exhaust the server's memory. With Auth,
	// MaxSessionsPerUser bounds those of one verified user (429 beyond),
	// so that one user cannot take them all. Zero means
	// DefaultMaxSessions (10,000) and DefaultMaxSessionsPerUser (100);
	// negative, no bound. A session counts from the moment its initialize
	// is admitted, before it is served, so that initializes sent at once
	// cannot open more. A stateless handler keeps no session, and neither
	// applies.
	MaxSessions, MaxSessionsPerUser int

	// BodyTimeout bounds the reading of a request's body, from the moment
	// the handler takes the request (through http.ResponseController: the
	// connection's read deadline, lifted once the body is read, so that
	// the event stream that answers is not cut): a client that sends part
	// of its body and stalls is refused (go-sdk answers 400, failed to
	// read body) and its connection closed. Zero means DefaultBodyTimeout
	// (30 s); negative, no bound.
	BodyTimeout time.Duration

	// Auth, when set, admits only requests with a valid OAuth bearer token
	// for this server, and the verified token reaches each call's tool
	// through [TokenInfo]; see [AuthOptions]. Nil serves whoever reaches
	// the handler.
	Auth *AuthOptions

	// ProtocolVersions, when set, are the only protocol revisions served
	// (go-sdk's ServerOptions.SupportedProtocolVersions): leave out
	// "2026-07-28" to serve every client with a session, as before that
	// revision. Nil means every revision go-sdk speaks, 2026-07-28
	// statelessly and the older ones with sessions.
	ProtocolVersions []string

	// StateKey signs the requestState of the input_required results of
	// stateless calls ([Input]), so that a client cannot forge the answers
	// a call carries from round to round: the state is bound to the call
	// (its tool, its arguments, its verified user) and to the answers of
	// the rounds before it, which stand whatever the next round's
	// inputResponses say of the same questions. At least 32 random
	// bytes, kept secret. Give every instance of a server behind a load balancer the
	// same key, so that any of them takes the next round of a call. Nil
	// means a random key for this handler.
	//
	// A state is not single-use: within StateTTL a client may echo one
	// again (a round retried, or answered otherwise), and the tool runs
	// again from the start with the answers it carries. Every answer is
	// the client's own anyway; what the signature guarantees is that a
	// state says what this server wrote in it, not that a round happens
	// once. A tool that must act once per call keeps that record itself.
	StateKey []byte

	// StateTTL is how long a requestState stays valid: a client that
	// answers later is refused and calls again without it. Zero means
	// DefaultStateTTL (10 minutes).
	StateTTL time.Duration
}

// NewHTTPHandler serves the tools of set over MCP's streamable HTTP
// transport: one session per client up to protocol revision 2025-11-25, each request on its own from 2026-07-28 on (see the package doc); impl is as for [NewServer], and opts
// may be nil. Mount it where clients will dial it. With opts.Auth, only
// clients with a valid bearer token are served (see [AuthOptions]; it
// panics when opts.Auth has no Verify or no absolute Resource URL, rather
// than serve unprotected); without, put it behind whatever authentication
// the deployment needs.
//
// A session ends when its client deletes it, and when it has been idle
// (no request from its client in progress: an open event stream does not
// count) for the session timeout, DefaultSessionTimeout unless opts say
// otherwise, so that the sessions of clients that vanished are reclaimed.
// A client that comes back after that is told its session is unknown
// (404) and, as the protocol asks, starts a new one; this package's
// [Client] does so on its own. A client that stays connected without
// calling for longer can send pings to keep its session. The handler
// keeps at most DefaultMaxSessions sessions, DefaultMaxSessionsPerUser of
// one user with opts.Auth, unless opts say otherwise: a client that would
// open more is refused (503, or 429 for the user's). A request's body must
// arrive within DefaultBodyTimeout unless opts say otherwise.
func NewHTTPHandler(set *toolset.Set, impl *mcp.Implementation, opts *HandlerOptions) http.Handler {
	var o HandlerOptions
	if opts != nil {
		o = *opts
	}
	var streamable mcp.StreamableHTTPOptions
	if o.Streamable != nil {
		streamable = *o.Streamable
	}
	if streamable.SessionTimeout == 0 {
		streamable.SessionTimeout = DefaultSessionTimeout
	}
	if o.StateKey != nil && len(o.StateKey) < 32 {
		panic("mcptools: NewHTTPHandler: HandlerOptions.StateKey must have at least 32 bytes")
	}
	srv := newServer(set, impl, o.ProtocolVersions, newStateKeeper(o.StateKey, o.StateTTL))
	getServer := func(*http.Request) *mcp.Server { return srv }
	h := http.Handler(mcp.NewStreamableHTTPHandler(getServer, &streamable))
	if !streamable.Stateless {
		h = &sessionLimit{srv: srv, next: h, max: limit(o.MaxSessions, DefaultMaxSessions),
			perUser: limit(o.MaxSessionsPerUser, DefaultMaxSessionsPerUser), opening: map[string]int{}, sessions: map[string]string{}}
		if o.ProtocolVersions == nil || slices.Contains(o.ProtocolVersions, revisionStateless) {
			stateless := streamable
			stateless.Stateless, stateless.EventStore = true, nil
			h = &byRevision{stateless: mcp.NewStreamableHTTPHandler(getServer, &stateless), sessions: h,
				maxBody: streamable.MaxRequestBodyBytes}
		}
	}
	if o.Auth != nil {
		h = o.Auth.protect(h)
	}
	timeout := DefaultBodyTimeout
	if o.BodyTimeout != 0 {
		timeout = o.BodyTimeout
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bodytimeout.Limit(w, r, timeout) // first: a body refused unread (401, 429…) is drained within it too
		h.ServeHTTP(w, r)
	})
}

// limit is a limit of HandlerOptions: zero means def, negative none (0).
func limit(n, def int) int {
	switch {
	case n == 0:
		return def
	case n < 0:
		return 0
	}
	return n
}

// objectSchema returns s with its type written as the single string
// "object", the form the MCP SDK requires; s itself is not modified.
func objectSchema(s *jsonschema.Schema) *jsonschema.Schema {
	if s.Type == "object" {
		return s
	}
	c := s.CloneSchemas()
	c.Type, c.Types = "object", nil
	return c
}

// handler runs t for a call. A stateless call (protocol revision
// 2026-07-28 on) whose tool asked the client for input ([Input]) is
// answered with the questions, and a requestState signed by states that
// carries the answers the tool read.
func handler(t *toolset.Tool, states *stateKeeper) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx = context.WithValue(ctx, requestKey{}, req)
		var args map[string]any
		if raw := req.Params.Arguments; len(raw) > 0 {
			if err := json.Unmarshal(raw, &args); err != nil {
				return errorResult(fmt.Sprintf("invalid arguments for %s: they must be a JSON object", t.Name)), nil
			}
		}
		canonical, _ := json.Marshal(args) // a state is for these arguments, however the client writes them
		in := &inputs{req: req, legacy: req.ProtocolVersion() != "" && req.ProtocolVersion() < revisionStateless}
		user := ""
		if req.Extra != nil && req.Extra.TokenInfo != nil {
			user = req.Extra.TokenInfo.UserID
		}
		if !in.legacy {
			prior, err := states.open(req.Params.RequestState, t.Name, canonical, user)
			if err != nil {
				return nil, invalidState(err)
			}
			in.answers, in.used = map[string]json.RawMessage{}, map[string]json.RawMessage{}
			for k, v := range req.Params.InputResponses {
				if b, err := json.Marshal(v); err == nil && v != nil {
					in.answers[k] = b
				}
			}
			// The answers of earlier rounds the state carries, signed,
			// stand: inputResponses answer only what they do not.
			maps.Copy(in.answers, prior)
		}
		ctx = context.WithValue(ctx, inputsKey{}, in)
		if token := req.Params.GetProgressToken(); token != nil && req.Session != nil {
			// The client asked for the call's progress: the tool's
			// reports are paced, and the last one is sent before the
			// result.
			n := &progressNotifier{ctx: ctx, session: req.Session, token: token}
			pacer := &toolset.ProgressPacer{Interval: toolset.DefaultProgressInterval, To: n}
			defer n.flush(pacer)
			ctx = toolset.WithProgress(ctx, pacer)
		}
		r := t.Execute(ctx, args)
		if len(in.asked) > 0 {
			state, err := states.seal(t.Name, canonical, user, in.used)
			if err != nil {
				return errorResult(err.Error()), nil
			}
			return &mcp.CallToolResult{InputRequests: in.asked, RequestState: state}, nil
		}
		var protocol *jsonrpc.Error
		if r.IsError && errors.As(r.Err, &protocol) {
			// The tool refused the request itself (a capability the
			// client did not declare, -32021…): a protocol error.
			return nil, protocol
		}
		return callResult(r), nil
	}
}

// revisionStateless is the first protocol revision without sessions,
// whose servers ask their clients through input_required results.
const revisionStateless = "2026-07-28"

// callResult is the MCP result of a tool's result.
func callResult(r toolset.Result) *mcp.CallToolResult {
	if r.IsError {
		msg, ok := r.Output.(string)
		if !ok {
			b, _ := json.Marshal(r.Output)
			msg = string(b)
		}
		return errorResult(msg)
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{}}
	switch out := r.Output.(type) {
	case nil:
	case string:
		res.Content = append(res.Content, &mcp.TextContent{Text: out})
	default:
		b, err := json.Marshal(out)
		if err != nil { // Execute has checked the output encodes
			return errorResult(fmt.Sprintf("the output cannot be encoded as JSON: %v", err))
		}
		res.Content = append(res.Content, &mcp.TextContent{Text: string(b)})
		if len(b) > 0 && b[0] == '{' {
			res.StructuredContent = json.RawMessage(b)
		}
	}
	for i, m := range r.Media {
		switch {
		case strings.HasPrefix(m.MIMEType, "image/"):
			res.Content = append(res.Content, &mcp.ImageContent{MIMEType: m.MIMEType, Data: m.Data})
		case strings.HasPrefix(m.MIMEType, "audio/"):
			res.Content = append(res.Content, &mcp.AudioContent{MIMEType: m.MIMEType, Data: m.Data})
		case strings.HasPrefix(m.MIMEType, "text/") && utf8.Valid(m.Data):
			res.Content = append(res.Content, &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
				URI: fmt.Sprintf("media:%d", i+1), MIMEType: m.MIMEType, Text: string(m.Data)}})
		default:
			res.Content = append(res.Content, &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
				URI: fmt.Sprintf("media:%d", i+1), MIMEType: m.MIMEType, Blob: m.Data}})
		}
	}
	return res
}

// progressNotifier sends a call's progress to the client that asked for
// it, as notifications/progress with the call's token. The protocol asks
// that the progress of a token increase from one notification to the
// next: a report that does not is not sent.
type progressNotifier struct {
	ctx     context.Context
	session *mcp.ServerSession
	token   any
	sent    bool
	last    float64
}

// flush sends the report pacer holds, if any, and then, when the call
// sent any, pings the client: a client that handles the messages of a
// session in order, as go-sdk's does (it hands notifications to their
// handler on a goroutine of its own, after the result may already have
// reached the call), has handled every notification of the call once it
// answers, before the result is sent.
func (n *progressNotifier) flush(pacer *toolset.ProgressPacer) {
	pacer.Close()
	if n.sent {
		// A client that does not answer (the protocol asks it to, at
		// once) loses the guarantee, not the result.
		ctx, cancel := context.WithTimeout(n.ctx, progressPingTimeout)
		defer cancel()
		_ = n.session.Ping(ctx, nil)
	}
}

// progressPingTimeout bounds the wait for the ping that follows a call's
// last progress notification.
const progressPingTimeout = 5 * time.Second

// OnProgress sends p; the pacer calls it, one report at a time.
func (n *progressNotifier) OnProgress(p toolset.Progress) {
	if n.sent && p.Done <= n.last {
		return
	}
	n.sent, n.last = true, p.Done
	// A client that has gone is the call's business, not its progress's.
	_ = n.session.NotifyProgress(n.ctx, &mcp.ProgressNotificationParams{
		ProgressToken: n.token, Progress: p.Done, Total: p.Total, Message: p.Message})
}

type requestKey struct{}

// Request returns the MCP request of the call that ctx belongs to, in a
// tool served by [NewServer] (and so by [ServeStdio] and [NewHTTPHandler]);
// nil elsewhere, as when an agent calls the tool directly. It is for the
// tools that need more of MCP than arguments and a result: its Session
// reaches the client that called (Log sends it log messages, at the level
// it set; Elicit asks its user; CreateMessage asks its model, if the
// client offers those; in a session only, on protocol revisions up to
// 2025-11-25: [Input] asks in every revision), its
// Params carry the call's _meta, and its Extra the HTTP request's headers
// and verified token (see [TokenInfo]). A tool that uses it still runs
// anywhere: it checks for nil.
func Request(ctx context.Context) *mcp.CallToolRequest {
	req, _ := ctx.Value(requestKey{}).(*mcp.CallToolRequest)
	return req
}

func errorResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}
