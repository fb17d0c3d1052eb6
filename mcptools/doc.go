// Package mcptools joins toolsets and the Model Context Protocol, both
// ways: the tools of any MCP server become toolset tools a Gemini model can
// call, and a toolset can be served to any MCP client. It is built on the
// official Go SDK, github.com/modelcontextprotocol/go-sdk.
//
// # Using an MCP server's tools
//
// [Connect] starts a session with a server and lists its tools;
// [Client.Tools] returns them as [toolset.Tool] values, ready to sit next to
// native tools in one set:
//
//	fs, err := mcptools.Connect(ctx,
//		mcptools.Command("npx", "-y", "@modelcontextprotocol/server-filesystem", "/srv/docs"),
//		&mcptools.Options{Prefix: "fs_"})
//	if err != nil { ... }
//	defer fs.Close()
//	set, err := toolset.New(append([]*toolset.Tool{weather}, fs.Tools()...)...)
//
// [Command] runs a local server as a subprocess and speaks to it over its
// standard input and output; [HTTP] reaches a remote one over streamable
// HTTP, through an *http.Client that carries its credentials; [InMemory]
// reaches a server running in this process. A [Dial] is a function rather
// than a transport because a transport connects only once: the client calls
// it again for every reconnection.
//
// # Logging in with OAuth
//
// Remote servers for many users (GitHub's, Linear's, Notion's, Sentry's,
// Atlassian's…) authorize with OAuth 2.1, as MCP's authorization spec
// describes. [NewHTTP] takes [HTTPOptions], whose OAuth field is go-sdk's
// auth.OAuthHandler; a [Login] is one that logs the program's user in
// through their browser when the server answers 401: it discovers the
// authorization server (RFC 9728, RFC 8414), registers the program (a
// client ID metadata document, a client registered beforehand, or dynamic
// registration, RFC 7591), shows the user the authorization URL (with
// PKCE, and the server as the resource, RFC 8707), receives the browser's
// redirect on a loopback port, and exchanges the code for tokens. It
// refreshes them, keeps them for the next run in a [LoginStore] such as
// [TokenFile] (a file only the user can read, changed under a lock, so
// that logins saved at once by several Logins or programs are all kept),
// and never logs them. A login is gone, and the user asked again, only
// when the authorization server refuses its refresh token
// (invalid_grant) or its access token expired without one; a refresh that
// fails otherwise (the authorization server down or unreachable) fails
// the request with an error wrapping [ErrRefreshFailed] and keeps the
// login for the next request; one that the authorization server refuses
// because it rejects the client itself (invalid_client,
// unauthorized_client) fails at once with an error wrapping
// [ErrClientRejected], since trying again would not help. A user who does not finish in time gets an
// error wrapping [ErrLoginTimeout]; a server whose metadata names another
// server as the resource ([ErrWrongResource]), or that refuses the token
// just issued for it ([ErrTokenRefused]), is not logged in to again and
// again.
//
//	login, err := mcptools.NewLogin(url, &mcptools.LoginOptions{
//		Open:  func(_ context.Context, u string) error { fmt.Println("Log in at", u); return nil },
//		Store: mcptools.TokenFile(filepath.Join(configDir, "mcp-logins.json")),
//	})
//	if err != nil { ... }
//	c, err := mcptools.Connect(ctx, mcptools.NewHTTP(url, &mcptools.HTTPOptions{OAuth: login}), nil)
//
// # Names and schemas
//
// MCP allows tool names Gemini refuses. Each tool is declared to the model
// under a name that follows Gemini's rule ([A-Za-z_][A-Za-z0-9_.:-]*, at
// most 64 characters): [Options.Prefix] first, each character Gemini
// refuses replaced by '_', and an over-long name shortened in the middle
// around a hash of the original. The server is always called with the
// original name. Two tools that would reach the model under the same name
// are an error ([ErrNameCollision]); [Options.Filter] drops tools.
//
// Each tool's input schema (draft 2020-12 or draft-07) is converted once,
// and every call's arguments are validated against it before the server is
// called, with the same messages as native tools. A tool whose schema
// cannot be used is left out, logged at Warn and reported by
// [Client.Skipped], never a crash: among them a schema over
// [toolset.MaxSchemaSize] (its error wraps [toolset.ErrSchemaTooLarge]),
// such as one whose $defs refer to each other so that it would grow
// without bound once inlined.
//
// # Safe to repeat
//
// A tool's annotations readOnlyHint and idempotentHint become its
// [toolset.Tool].ReadOnly and Idempotent, which say whether a call may be
// made again when nobody knows whether it ran: the client's own
// reconnection (below) reads them, and so does a runtime resuming a run
// after a crash. They are the server's word: MCP calls them hints, not to
// be trusted from a server one does not trust. For such a server, clear
// them on the tools [Client.Tools] returns, before they are used: the
// reconnection reads them there too. [NewServer] publishes the same
// hints for the tools it serves: a tool that is ReadOnly or Idempotent is
// listed with annotations saying so, any other with none (MCP's defaults,
// which say neither).
//
// # Results
//
// The server's answer becomes the tool's output ([Output]): its text, with
// embedded resources and resource links written out rather than dropped,
// or its structured content when it gives one, together with any text
// that is more than the same value as JSON. An answer with isError
// becomes an error result the model reads, its structured content
// included. Images, audio and PDF resources
// become [toolset.Media]: a Gemini 3 model receives them as media inside
// the function response, an older model a short description instead (see
// the geminiadapter package). [Options.MapResult] replaces this mapping.
//
// # Progress
//
// A call whose progress someone listens to ([toolset.WantsProgress]: the
// agent loop listens when a run has an Observer or is a Stream) asks the
// server for it, with a progress token in its _meta, and the server's
// notifications/progress for it become the tool's progress reports
// ([toolset.ReportProgress]), and so agent.EventToolProgress events,
// until the call returns: done is the notification's progress, total its
// total, message its message. A notification the client's SDK handles
// after the call's result is dropped. A call nobody listens to sends no
// token, and the server sends nothing. [Options].ClientOptions'
// ProgressNotificationHandler still sees every notification.
//
// A toolset served with [NewServer] does the converse: a client that
// sends a progress token with a call is sent the tool's reports as
// notifications/progress, paced and coalesced, the last one before the
// result.
//
// # Reconnection
//
// A server that went away (its process exited or was killed, the HTTP
// server restarted, the connection dropped) is reconnected on the next
// call, with a fresh transport from the Dial. A call in flight when the
// connection was lost is made again, once, on the new session when it
// cannot have run (the server no longer knew the session) or when the tool
// is safe to repeat ([toolset.Tool.SafeToRepeat]: annotated read-only or
// idempotent); any other such call is answered
// with an error telling the model that it may or may not have run, since
// running it twice could do harm. After a reconnection, and whenever the
// server announces that its tools changed, the next [Client.Tools] call
// lists them again.
//
// A reconnection holds up nothing else. It runs in the background, for
// every call that needs it: each waits until the session is up or its own
// context ends, whichever comes first, so that a server that hangs at
// start-up (npx still installing, a wedged binary) fails only the calls
// whose deadlines pass, while [Client.Tools], [Client.Skipped] and calls
// answer as usual. When the last call waiting for a connection leaves,
// the connection is abandoned and its process ended; the next call starts
// a new one.
//
// [Client.Close] ends the session, and a connection in progress (the calls
// waiting for it fail with [ErrClosed]); a subprocess is ended and waited
// for, so that nothing is left running.
//
// # Serving a toolset
//
// [NewServer] returns an MCP server offering every tool of a set, with its
// schema; calls go through [toolset.Tool.Execute], so that a client's model
// gets the same validation and the same readable errors as a Gemini model
// calling the tools directly. [ServeStdio] runs it as a local server:
//
//	func main() {
//		if err := mcptools.ServeStdio(context.Background(), set, &mcp.Implementation{Name: "weather"}); err != nil {
//			log.Fatal(err)
//		}
//	}
//
// [HTTPHandler] serves it over streamable HTTP, one session per client of a revision up to 2025-11-25 and none for a 2026-07-28 one (see Protocol revisions). A
// session idle for [DefaultSessionTimeout] (30 minutes) is closed, so that
// clients that vanish without ending their sessions are not kept for
// ever; [NewHTTPHandler] takes [HandlerOptions], which carry go-sdk's
// StreamableHTTPOptions (another timeout, JSON responses, stateless
// mode…):
//
//	http.Handle("/mcp", mcptools.NewHTTPHandler(set, impl, &mcptools.HandlerOptions{
//		Streamable: &mcp.StreamableHTTPOptions{SessionTimeout: 5 * time.Minute},
//	}))
//
// Every session costs the server a goroutine and its state until it ends
// or times out, so the handler keeps at most [DefaultMaxSessions]
// (10,000) of them, and [DefaultMaxSessionsPerUser] (100) of one user
// verified by Auth: an initialize beyond is refused with 503 (429 for the
// user's), until a session ends (HandlerOptions.MaxSessions and
// MaxSessionsPerUser change them). A session counts from the moment its
// initialize is admitted, so that initializes sent at once open no more. go-sdk's handler refuses, for its
// part, a body over 4 MiB or not sent as application/json, a request on
// a loopback address for another host (DNS rebinding), and a session
// used with another user's token.
//
// A request's body must arrive within [DefaultBodyTimeout] (30 s;
// HandlerOptions.BodyTimeout changes it) of the handler taking the
// request, or the client is refused and its connection closed: the
// handler sets the connection's read deadline through
// http.ResponseController and lifts it once the body is read, so that an
// event stream lasts as long as it needs. What comes before the handler,
// and between requests, is the http.Server's to bound: set its
// ReadHeaderTimeout (slow headers) and IdleTimeout (kept-alive
// connections that send nothing more); ReadTimeout may bound a whole
// request's reading too (it does not cut a stream: net/http lifts it once
// a body is read), but leave WriteTimeout unset, since it would cut every
// event stream (a session's GET, a call's answer) at that age.
//
// A handler reachable by others should let in only the clients it knows.
// With [HandlerOptions.Auth] it is an OAuth protected resource, as MCP's
// authorization spec describes: each request must carry a bearer token
// that [AuthOptions.Verify] accepts, issued for this server (its audience
// is checked) and with the required scopes; any other request is answered
// 401 with a WWW-Authenticate header naming the server's protected
// resource metadata (RFC 9728), from which a client finds the
// authorization server to log in with. Each session is bound to the user
// who opened it, and a tool reads its caller's verified token with
// [TokenInfo]:
//
//	authOpts := &mcptools.AuthOptions{
//		Verify:               verifyJWT, // your check of the authorization server's tokens
//		Resource:             "https://tools.example.com/mcp",
//		AuthorizationServers: []string{"https://login.example.com"},
//		Scopes:               []string{"tools"},
//	}
//	mux.Handle("/mcp", mcptools.NewHTTPHandler(set, impl, &mcptools.HandlerOptions{Auth: authOpts}))
//	mux.Handle(authOpts.MetadataPath(), authOpts.MetadataHandler())
//
// # Protocol revisions
//
// Both sides speak every revision go-sdk does: 2026-07-28, which has no
// sessions, and 2025-11-25 back to 2024-11-05, which do.
//
// The client asks the server which revisions it speaks (server/discover)
// and uses 2026-07-28 with one that speaks it; with one that does not, it
// falls back to a session (initialize), as before. [Options.ProtocolVersion]
// asks for another revision, e.g. "2025-11-25" to keep to sessions;
// [Client.ProtocolVersion] says which one the connection speaks. Without a
// session, the server cannot tell the client that its tools changed, so
// the tool list is fresh for the ttlMs the server gave it: [Client.Tools]
// lists the tools again once it has passed (with a session, on the
// server's notification, as before). A server that needs its client's
// user or model in the middle of a call asks through the call's result
// (input_required) from 2026-07-28 on, and through requests of its own
// before: either way, the ElicitationHandler and CreateMessageHandler of
// [Options].ClientOptions answer, so that a program asks its user in one
// place for both (the chat example does, a field at a time).
//
// [NewHTTPHandler] answers each request in its client's revision: one of
// 2026-07-28 or later (its MCP-Protocol-Version header, its _meta, or a
// server/discover) statelessly, with no initialize, no session ID and the
// version and capabilities read from each request's _meta, so that any
// instance of a server behind a load balancer takes any request; any
// other with a session, as before. [HandlerOptions].ProtocolVersions
// narrows the revisions served (leave out 2026-07-28 to keep every client
// to sessions); go-sdk's StreamableHTTPOptions.Stateless serves every
// revision without sessions. [ServeStdio] and [InMemory] speak the
// revision their client asks for.
//
// A stateless call cannot do what needs a session: the server cannot send
// its client requests of its own (so [Request]'s Session.Elicit,
// CreateMessage, ListRoots and Ping fail), there is no logging/setLevel
// nor GET stream, a stream that breaks is not resumed (the client calls
// again), and the per-session limits (MaxSessions) do not apply, since
// nothing is kept between requests. Progress notifications still reach
// the client, on the call's own response stream. A tool that needs its
// client's user or model asks through [Input] ([Elicit], [Sample]), which
// works in every revision: in a session it sends the request and waits;
// without one the call is answered input_required with the questions and
// a requestState, signed with [HandlerOptions].StateKey and bound to the
// tool, its arguments, the verified user and an expiry
// ([DefaultStateTTL]), that carries earlier answers (they stand: the
// next round's inputResponses cannot change them); the client calls
// again with the answers, and the tool runs again from the start. A
// state may be echoed again within its TTL (a round retried), so a tool
// that must act once per call keeps that record itself. Give every
// instance of a server the same StateKey, so that any of them takes the
// next round.
//
// # Concurrency
//
// A [Client] and its tools are safe for concurrent use: the agent runs the
// calls of one turn in parallel, on one session.
package mcptools
