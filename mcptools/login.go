package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// ErrLoginTimeout is wrapped by the error of a login that the user did not
// finish within [LoginOptions.Timeout].
var ErrLoginTimeout = errors.New("mcptools: the login was not finished in time")

// ErrWrongResource is wrapped by the error of a login refused because the
// server's protected resource metadata describes another server: a token
// issued for that one could be used there in the user's name.
var ErrWrongResource = errors.New("mcptools: the server's metadata is for another server")

// ErrTokenRefused is wrapped by the error of a request the server refused
// although its token was just issued for it, at a login: the server and
// its authorization server disagree (most often, the token is for another
// audience), and logging in again would not help. The [Login] asks the
// user no more, and its later logins fail with the same error.
var ErrTokenRefused = errors.New("mcptools: the server refused the token its authorization server just issued")

// ErrRefreshFailed is wrapped by the error of a request whose access token
// could not be refreshed for a reason that may pass: the authorization
// server could not be reached, or answered with an error other than
// invalid_grant (503 temporarily_unavailable, say). The [Login] and its
// refresh token are kept, and a later request tries again.
var ErrRefreshFailed = errors.New("mcptools: the access token could not be refreshed for now; the login is kept, try again later")

// ErrClientRejected is wrapped by the error of a request whose access
// token could not be refreshed because the authorization server does not
// accept the client itself (invalid_client or unauthorized_client: an
// unknown or expired registration, a wrong secret, a grant the client may
// not use). Trying again would fail the same way, so the request fails at
// once, and no browser is opened; the [Login] and its refresh token are
// kept, for once the client's registration or credentials are fixed.
var ErrClientRejected = errors.New("mcptools: the authorization server rejected this client; fix its registration or credentials (trying again will not help)")

// DefaultLoginTimeout is how long a user has to finish logging in, unless
// [LoginOptions] say otherwise.
const DefaultLoginTimeout = 5 * time.Minute

// LoginOptions configure a [Login]. Open is required.
type LoginOptions struct {
	// Open shows the user the authorization URL, where they log in and
	// allow this program: print it, and open it in a browser where there
	// is one. It should return at once; the user's answer arrives on a
	// loopback port. An error ends the login with it.
	Open func(ctx context.Context, authorizationURL string) error

	// Store keeps the login (the client's registration and its tokens)
	// for the next run, so that the user logs in once; see [TokenFile].
	// Nil keeps it in memory, for this Login only.
	Store LoginStore

	// Timeout is how long the user has to finish logging in;
	// DefaultLoginTimeout when zero.
	Timeout time.Duration

	// ClientName is the program's name, which the authorization server
	// shows the user when asking them to allow it; "toolnexus-go" when
	// empty. It is sent when the program registers itself (dynamic client
	// registration, RFC 7591).
	ClientName string

	// ClientIDMetadataURL is the https URL of the program's client ID
	// metadata document, used as its client ID where the authorization
	// server supports those, instead of registering.
	ClientIDMetadataURL string

	// Client is a client registered beforehand with the authorization
	// server, used where the server supports no client ID metadata
	// document for ClientIDMetadataURL; without one, the program registers
	// itself where the server allows it.
	Client *oauthex.ClientCredentials

	// RedirectURL is the loopback URL the user's browser is sent back to,
	// for a client registered with a fixed one (http://127.0.0.1:PORT/PATH
	// or http://localhost:PORT/PATH). By default each login listens on a
	// free port of 127.0.0.1, at /callback.
	RedirectURL string

	// HTTPClient carries the requests to the authorization server (its
	// metadata, registration, tokens) and for the server's metadata; nil
	// means http.DefaultClient.
	HTTPClient *http.Client

	// Logger receives each login and refresh, at Info, and what went
	// wrong with them, at Warn; never a token. Nil means silent.
	Logger *slog.Logger
}

// A LoginStore keeps logins between runs of a program, each under the URL
// of its MCP server. What it keeps holds tokens: it must be readable by
// the user alone. [TokenFile] is one.
type LoginStore interface {
	// LoadLogin returns what SaveLogin kept for server, nil when nothing.
	LoadLogin(server string) ([]byte, error)
	// SaveLogin keeps data for server in place of what was kept; nil data
	// forgets it.
	SaveLogin(server string, data []byte) error
}

// A Login logs the program's user in to an MCP server that asks for OAuth
// 2.1, as MCP's authorization spec describes, and keeps the tokens fresh.
// It is an auth.OAuthHandler: give it to [NewHTTP] in
// [HTTPOptions.OAuth].
//
// When the server answers 401, the login finds the authorization server
// from the server's protected resource metadata (RFC 9728) and that
// server's metadata (RFC 8414), registers the program (a client ID
// metadata document, a client registered beforehand, or dynamic client
// registration, RFC 7591), and shows the user the authorization URL
// through [LoginOptions.Open], with PKCE and the server named as the
// resource the token is for (RFC 8707). It then waits for the user's
// browser to come back to a loopback port with the authorization code,
// for [LoginOptions.Timeout] at most (then the error wraps
// [ErrLoginTimeout]), and exchanges the code for tokens. A server whose
// metadata names another server as the resource is refused before the
// user is asked ([ErrWrongResource]).
//
// The access token is refreshed before it expires, and when the server
// refuses it (it was revoked) while the refresh token is still good. The
// login is gone, and the next request asks the user to log in again,
// when the authorization server refuses the refresh token (invalid_grant),
// and when the access token expired and there is no refresh token (many
// authorization servers give public clients none). Any other failure of
// a refresh (the authorization server is down, unreachable, or answers
// another error) fails the request with an error wrapping
// [ErrRefreshFailed] and keeps the login, for a later request to try
// again. The tokens are kept in [LoginOptions.Store] after each change,
// and forgotten there when the login is gone, so that the next run of the
// program needs no login. A Login never logs or prints a token.
//
// A Login serves one MCP server, across reconnections; it is safe for
// concurrent use, and runs one refresh or login at a time.
type Login struct {
	server     string
	opts       LoginOptions
	logger     *slog.Logger
	httpClient *http.Client

	// turn is held by whatever acts for the login (a refresh, a login
	// with the user, Authorize deciding which): one at a time, so that a
	// rotating refresh token is used once and the user is asked once.
	// The store is written only with the turn held, and so in order.
	turn chan struct{}

	// mu guards st, only while it is read or moved, never across a
	// request.
	mu sync.Mutex
	st loginState
}

// loginState is where a Login stands: its phase, and the client and
// token of its phases with a token.
type loginState struct {
	phase phase
	cfg   *oauth2.Config // the client the authorization server knows
	token *oauth2.Token  // nil when loggedOut or refused
	err   error          // refused: why
}

// A phase of a Login. It moves as follows, by the methods named; refused
// is final.
//
//	loggedOut  -> issued     a login with the user (login)
//	issued     -> loggedIn   the server took the login's token (answered)
//	issued     -> refused    the server refused it: asking the user again would not help (answered)
//	loggedIn   -> retried    the server refused the token: refreshed (Authorize)
//	retried    -> issued     the server refused the refreshed one too: a login (Authorize)
//	any with a token -> loggedIn   the token expired: refreshed (tokens.Token)
//	any with a token -> loggedOut  the grant is gone: invalid_grant, or no refresh token (refresh)
//	any with a token -> issued     a login for more scopes, on a 403 (Authorize)
type phase int

const (
	loggedOut phase = iota // no token: requests go without, and a 401 logs the user in
	issued                 // the token a login just gave, which the server has not answered yet
	loggedIn               // a token kept, refreshed, or taken by the server
	retried                // the token of a refresh after the server refused the last one
	refused                // the server refused the token a login gave: final
)

// NewLogin returns a Login for the MCP server at serverURL, which is also
// its key in opts.Store, and takes up the login kept there; an error of
// the store (a file others can read, say) is returned. opts.Open is
// required.
func NewLogin(serverURL string, opts *LoginOptions) (*Login, error) {
	if opts == nil || opts.Open == nil {
		return nil, errors.New("mcptools: NewLogin: LoginOptions.Open is required")
	}
	l := &Login{server: serverURL, opts: *opts, logger: opts.Logger, httpClient: opts.HTTPClient, turn: make(chan struct{}, 1)}
	if l.logger == nil {
		l.logger = slog.New(slog.DiscardHandler)
	}
	if l.httpClient == nil {
		l.httpClient = http.DefaultClient
	}
	if l.opts.Timeout <= 0 {
		l.opts.Timeout = DefaultLoginTimeout
	}
	if l.opts.ClientName == "" {
		l.opts.ClientName = "toolnexus-go"
	}
	if _, _, err := l.redirect(); err != nil {
		return nil, err
	}
	if l.opts.Store == nil {
		return l, nil
	}
	data, err := l.opts.Store.LoadLogin(serverURL)
	if err != nil {
		return nil, fmt.Errorf("mcptools: NewLogin: %w", err)
	}
	if data == nil {
		return l, nil
	}
	var kept keptLogin
	if err := json.Unmarshal(data, &kept); err != nil || kept.Token == nil {
		// Not something this version wrote: log in afresh.
		l.logger.Warn("mcptools: the kept login cannot be read; logging in again", slog.String("server", serverURL))
		return l, nil
	}
	l.st = loginState{phase: loggedIn, cfg: kept.config(), token: kept.Token}
	return l, nil
}

// keptLogin is what a Login keeps in its store: the client the
// authorization server knows the program as, and its tokens.
type keptLogin struct {
	ClientID     string           `json:"client_id"`
	ClientSecret string           `json:"client_secret,omitempty"`
	AuthURL      string           `json:"authorization_endpoint"`
	TokenURL     string           `json:"token_endpoint"`
	AuthStyle    oauth2.AuthStyle `json:"auth_style,omitempty"`
	RedirectURL  string           `json:"redirect_uri,omitempty"`
	Scopes       []string         `json:"scopes,omitempty"`
	Token        *oauth2.Token    `json:"token"`
}

func (k *keptLogin) config() *oauth2.Config {
	return &oauth2.Config{
		ClientID:     k.ClientID,
		ClientSecret: k.ClientSecret,
		Endpoint:     oauth2.Endpoint{AuthURL: k.AuthURL, TokenURL: k.TokenURL, AuthStyle: k.AuthStyle},
		RedirectURL:  k.RedirectURL,
		Scopes:       k.Scopes,
	}
}

// TokenSource returns the source of the access tokens, nil while logged
// out. Its Token refreshes the token when it expires. When the login is
// gone (the authorization server refused the refresh token, or there is
// none), it returns a nil token and no error: the request goes without a
// token, and the server's 401 brings the login back. When the refresh
// fails for a reason that may pass, it returns an error wrapping
// [ErrRefreshFailed], and the login is kept.
func (l *Login) TokenSource(context.Context) (oauth2.TokenSource, error) {
	if l.state().token == nil {
		return nil, nil
	}
	return tokens{l}, nil
}

// tokens is the token source of a Login.
type tokens struct{ l *Login }

// Token returns the login's access token, refreshed first when it
// expired; nil when the login is gone.
func (t tokens) Token() (*oauth2.Token, error) {
	l := t.l
	st := l.state()
	if st.token == nil || st.token.Valid() {
		return st.token, nil
	}
	_ = l.take(context.Background()) // Token has no context of its own
	defer l.give()
	if now := l.state(); now.token != st.token {
		// Another refreshed, or logged in or out, while this one waited.
		st = now
		if st.token == nil || st.token.Valid() {
			return st.token, nil
		}
	}
	tok, err := l.refresh(st, loggedIn, "the access token expired")
	if errors.Is(err, errGone) {
		return nil, nil
	}
	return tok, err
}

// Authorize is called by the transport when the server refused req with
// resp (401, or 403 for a missing scope): it refreshes a refused token or
// logs the user in, and returns nil when the request may be made again.
func (l *Login) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	if err := l.take(ctx); err != nil {
		discard(resp)
		return err
	}
	defer l.give()
	rejected := bearerToken(req)
	st := l.state()
	switch {
	case st.phase == refused:
		discard(resp)
		return st.err
	case st.token != nil && st.token.AccessToken != rejected:
		// Another request logged in or refreshed meanwhile.
		discard(resp)
		return nil
	case st.phase == loggedIn && resp.StatusCode == http.StatusUnauthorized:
		// Revoked, perhaps, while the refresh token was not.
		_, err := l.refresh(st, retried, "the server refused the access token")
		if !errors.Is(err, errGone) {
			discard(resp)
			return err // nil: refreshed
		}
	}
	// Logged out, the grant gone, the retried token refused too, or more
	// scopes needed: the user logs in.
	return l.login(ctx, req, resp)
}

// errGone is the error of a refresh that found the login gone.
var errGone = errors.New("mcptools: the login is gone")

// refresh exchanges the refresh token of st for new tokens, with the turn
// held, and moves the login to next with them. When the login is gone
// (st has no refresh token, or the authorization server refuses it with
// invalid_grant), it is forgotten and the error is errGone; when the
// refresh fails otherwise, the login stays as it is and the error wraps
// ErrRefreshFailed.
func (l *Login) refresh(st loginState, next phase, why string) (*oauth2.Token, error) {
	log := l.logger.With(slog.String("server", l.server), slog.String("reason", why))
	if st.token.RefreshToken == "" {
		log.Warn("mcptools: there is no refresh token; the next request logs in again")
		l.logOut(st.token)
		return nil, errGone
	}
	tok, err := st.cfg.TokenSource(l.refreshContext(), &oauth2.Token{RefreshToken: st.token.RefreshToken}).Token()
	var re *oauth2.RetrieveError
	switch {
	case errors.As(err, &re) && re.ErrorCode == "invalid_grant":
		log.Warn("mcptools: the authorization server refused the refresh token; the next request logs in again", slog.String("error", oauthError(err)))
		l.logOut(st.token)
		return nil, errGone
	case errors.As(err, &re) && (re.ErrorCode == "invalid_client" || re.ErrorCode == "unauthorized_client"):
		log.Error("mcptools: the authorization server rejected the client; the login is kept", slog.String("error", oauthError(err)))
		return nil, &refreshError{server: l.server, err: err, kind: ErrClientRejected}
	case err != nil:
		log.Warn("mcptools: refreshing the access token failed; the login is kept", slog.String("error", oauthError(err)))
		return nil, &refreshError{server: l.server, err: err, kind: ErrRefreshFailed}
	}
	l.logIn(next, st.cfg, tok)
	log.Info("mcptools: refreshed the access token")
	return tok, nil
}

// refreshError is the error of a refresh that failed with the login
// kept: it wraps its kind (ErrRefreshFailed for a reason that may pass,
// ErrClientRejected) and the cause (an *oauth2.RetrieveError, a network
// error), and shows of the cause only what oauthError does.
type refreshError struct {
	server string
	err    error
	kind   error
}

func (e *refreshError) Error() string {
	return fmt.Sprintf("%v: refreshing the access token for %s: %s", e.kind, e.server, oauthError(e.err))
}

func (e *refreshError) Unwrap() []error { return []error{e.kind, e.err} }

// take waits for the login's turn, until ctx ends.
func (l *Login) take(ctx context.Context) error {
	select {
	case l.turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("mcptools: waiting for the login to %s in progress: %w", l.server, ctx.Err())
	}
}

// give gives the turn back.
func (l *Login) give() { <-l.turn }

// state returns where the login stands.
func (l *Login) state() loginState {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.st
}

// logIn moves the login to phase p with cfg and tok, and keeps them in the
// store; with the turn held. A refused login stays refused.
func (l *Login) logIn(p phase, cfg *oauth2.Config, tok *oauth2.Token) {
	l.mu.Lock()
	if l.st.phase == refused {
		l.mu.Unlock()
		return
	}
	l.st = loginState{phase: p, cfg: cfg, token: tok}
	l.mu.Unlock()
	l.save(cfg, tok)
}

// logOut moves the login whose token is tok to loggedOut, and forgets it
// in the store; with the turn held.
func (l *Login) logOut(tok *oauth2.Token) {
	l.mu.Lock()
	current := l.st.token == tok
	if current {
		l.st = loginState{phase: loggedOut}
	}
	l.mu.Unlock()
	if current && l.opts.Store != nil {
		if err := l.opts.Store.SaveLogin(l.server, nil); err != nil {
			l.logger.Warn("mcptools: forgetting the login failed", slog.String("server", l.server), slog.Any("error", err))
		}
	}
}

// answered moves an issued login whose token the server answered with
// status: to loggedIn when it took it, and reports true, leaving it to
// refuse, when it refused it (401).
func (l *Login) answered(token string, status int) (refusedFirst bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.st.phase != issued || l.st.token.AccessToken != token {
		return false
	}
	if status != http.StatusUnauthorized {
		l.st.phase = loggedIn
		return false
	}
	return true
}

// refuse moves the login to refused, for good, with err.
func (l *Login) refuse(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.st = loginState{phase: refused, err: err}
}

// login runs the authorization code flow with the user, with the turn
// held, once per connection attempt: when one failed during the attempt
// (the protocol's server/discover, then initialize, would ask the user
// twice), its error is returned again.
func (l *Login) login(ctx context.Context, req *http.Request, resp *http.Response) error {
	attempt, _ := ctx.Value(connectingKey{}).(*connecting)
	if attempt != nil {
		attempt.mu.Lock()
		failed := attempt.loginFailed
		attempt.mu.Unlock()
		if failed != nil {
			discard(resp)
			return failed
		}
	}
	err := l.checkResource(ctx, req, resp)
	if err != nil {
		discard(resp)
	} else {
		err = l.authorizationCode(ctx, req, resp)
	}
	if err != nil && attempt != nil {
		attempt.mu.Lock()
		attempt.loginFailed = err
		attempt.mu.Unlock()
	}
	return err
}

// authorizationCode runs go-sdk's authorization code flow, whose new
// tokens move the login to issued.
func (l *Login) authorizationCode(ctx context.Context, req *http.Request, resp *http.Response) error {
	listenAddr, redirectURL, err := l.redirect()
	if err != nil {
		discard(resp)
		return err
	}
	ln, err := net.Listen("tcp", listenAddr)
	if err != nil {
		discard(resp)
		return fmt.Errorf("mcptools: listening for the login's redirect: %w", err)
	}
	defer ln.Close()
	if redirectURL.Port() == "0" {
		redirectURL.Host = ln.Addr().String()
	}
	redirect := redirectURL.String()
	var granted []string // asked for again, so that a step-up loses none
	if st := l.state(); st.cfg != nil {
		granted = st.cfg.Scopes
	}
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              redirect,
		AuthorizationCodeFetcher: l.fetcher(ln, redirectURL.Path),
		Client:                   l.httpClient,
		RequestRefreshToken:      true,
		ScopeFilter:              func(discovered []string) []string { return union(granted, discovered) },
		PreregisteredClient:      l.opts.Client,
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs:            []string{redirect},
			ClientName:              l.opts.ClientName,
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ResponseTypes:           []string{"code"},
			TokenEndpointAuthMethod: "none",
		}},
		NewTokenSource: func(_ context.Context, c *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			l.logIn(issued, c, tok)
			// go-sdk reads the granted scopes from it; the requests get
			// their tokens from l.TokenSource.
			return oauth2.StaticTokenSource(tok), nil
		},
	}
	if l.opts.ClientIDMetadataURL != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: l.opts.ClientIDMetadataURL}
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		discard(resp)
		return fmt.Errorf("mcptools: logging in to %s: %w", l.server, err)
	}
	if err := h.Authorize(ctx, req, resp); err != nil {
		return fmt.Errorf("mcptools: logging in to %s: %w", l.server, err)
	}
	l.logger.Info("mcptools: logged in", slog.String("server", l.server))
	return nil
}

// redirect returns the address to listen on for the login's redirect and
// the redirect URL, whose port is 0 when any free one will do.
func (l *Login) redirect() (string, *url.URL, error) {
	raw := l.opts.RedirectURL
	if raw == "" {
		return "127.0.0.1:0", &url.URL{Scheme: "http", Host: "127.0.0.1:0", Path: "/callback"}, nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || (u.Hostname() != "127.0.0.1" && u.Hostname() != "localhost" && u.Hostname() != "::1") || u.Port() == "" {
		return "", nil, fmt.Errorf("mcptools: LoginOptions.RedirectURL %q is not http://127.0.0.1:PORT/PATH, http://localhost:PORT/PATH or http://[::1]:PORT/PATH", raw)
	}
	if u.Path == "" {
		u.Path = "/"
	}
	return net.JoinHostPort(u.Hostname(), u.Port()), u, nil
}

// callbackResult is what the user's browser brought back.
type callbackResult struct {
	result *auth.AuthorizationResult
	err    error
}

// fetcher shows the user the authorization URL and waits, on ln, for their
// browser to come back to path with the code.
func (l *Login) fetcher(ln net.Listener, path string) auth.AuthorizationCodeFetcher {
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		authURL, err := url.Parse(args.URL)
		if err != nil {
			return nil, fmt.Errorf("mcptools: the authorization URL: %w", err)
		}
		got := make(chan callbackResult, 1)
		srv := &http.Server{Handler: l.callback(path, authURL.Query().Get("state"), got), ReadHeaderTimeout: 10 * time.Second}
		served := make(chan struct{})
		go func() {
			defer close(served)
			_ = srv.Serve(ln) // ends with http.ErrServerClosed
		}()
		defer func() {
			srv.Close()
			<-served
		}()
		l.logger.Info("mcptools: logging in", slog.String("server", l.server), slog.String("authorization_server", authURL.Host))
		if err := l.opts.Open(ctx, args.URL); err != nil {
			return nil, fmt.Errorf("mcptools: showing the login page: %w", err)
		}
		timer := time.NewTimer(l.opts.Timeout)
		defer timer.Stop()
		select {
		case r := <-got:
			return r.result, r.err
		case <-ctx.Done():
			return nil, fmt.Errorf("mcptools: waiting for the login at %s: %w", authURL.Host, ctx.Err())
		case <-timer.C:
			return nil, fmt.Errorf("%w: the login page at %s was not completed within %v; try again", ErrLoginTimeout, authURL.Host, l.opts.Timeout)
		}
	}
}

// callback answers the user's browser when it comes back from the
// authorization server, and hands on the code (or the refusal) of the
// login whose state it carries; anything else is turned away.
func (l *Login) callback(path, state string, got chan<- callbackResult) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path || r.Method != http.MethodGet {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		if state == "" || q.Get("state") != state {
			http.Error(w, "This is not the login in progress.", http.StatusBadRequest)
			return
		}
		var res callbackResult
		status, message := http.StatusOK, "You are logged in to "+l.server+". You can close this page."
		switch e := q.Get("error"); {
		case e != "":
			reason := strconv.Quote(e)
			if d := q.Get("error_description"); d != "" {
				reason += ": " + strconv.Quote(d)
			}
			res.err = fmt.Errorf("mcptools: the authorization server refused the login: %s", reason)
			status, message = http.StatusForbidden, "The login was refused: "+reason+"."
		case q.Get("code") == "":
			res.err = errors.New("mcptools: the authorization server sent the browser back without a code")
			status, message = http.StatusBadRequest, "The authorization server gave no code."
		default:
			res.result = &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}
		}
		select {
		case got <- res:
		default: // a second visit: the first one counts
		}
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Cache-Control", "no-store")
		h.Set("Referrer-Policy", "no-referrer") // the address holds the code
		w.WriteHeader(status)
		fmt.Fprintf(w, "<!doctype html><title>Login</title><p>%s</p>\n", html.EscapeString(message))
	})
}

// checkResource refuses to log in for a server whose protected resource
// metadata, named by its challenge, describes another server.
func (l *Login) checkResource(ctx context.Context, req *http.Request, resp *http.Response) error {
	challenges, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return nil // go-sdk reports it
	}
	var metadataURL string
	for _, c := range challenges {
		if u := c.Params["resource_metadata"]; u != "" {
			metadataURL = u
		}
	}
	u, err := url.Parse(metadataURL)
	if metadataURL == "" || err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return nil
	}
	mreq, err := http.NewRequestWithContext(ctx, http.MethodGet, metadataURL, nil)
	if err != nil {
		return nil
	}
	mreq.Header.Set("Accept", "application/json")
	mresp, err := l.httpClient.Do(mreq)
	if err != nil {
		return nil // go-sdk tries the other places
	}
	defer mresp.Body.Close()
	var meta struct {
		Resource string `json:"resource"`
	}
	if mresp.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(mresp.Body, 1<<20)).Decode(&meta) != nil || meta.Resource == "" {
		return nil
	}
	if server := req.URL.String(); !oauthex.MatchesResource([]string{meta.Resource}, server) {
		return fmt.Errorf("%w: %s says (at %s) that its tokens are for %s; refusing to log in, since such a token would act in your name there",
			ErrWrongResource, server, metadataURL, meta.Resource)
	}
	return nil
}

// transport wraps base (nil: http.DefaultTransport) so that a request the
// server refuses although its token was just issued, at a login, fails
// with ErrTokenRefused and the server's reason, and no login follows.
func (l *Login) transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &loginTransport{l: l, base: base}
}

type loginTransport struct {
	l    *Login
	base http.RoundTripper
}

func (t *loginTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	token := bearerToken(req)
	if err != nil || token == "" || !t.l.answered(token, resp.StatusCode) {
		return resp, err
	}
	l := t.l
	reason, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	discard(resp)
	// The server's reason, without the token should it repeat it.
	why := strings.ReplaceAll(strings.TrimSpace(string(reason)), token, "[the token]")
	refused := fmt.Errorf("%w: %s answered %q", ErrTokenRefused, l.server, why)
	l.refuse(refused)
	l.logger.Warn("mcptools: the server refused the token of the login; not asking the user again", slog.String("server", l.server), slog.Any("error", refused))
	return nil, refused
}

// refreshContext is the context of token refreshes: they outlive any
// request, and go through the login's HTTP client.
func (l *Login) refreshContext() context.Context {
	return context.WithValue(context.Background(), oauth2.HTTPClient, l.httpClient)
}

// save keeps the client c and tok in the store.
func (l *Login) save(c *oauth2.Config, tok *oauth2.Token) {
	if l.opts.Store == nil {
		return
	}
	data, err := json.Marshal(&keptLogin{
		ClientID: c.ClientID, ClientSecret: c.ClientSecret,
		AuthURL: c.Endpoint.AuthURL, TokenURL: c.Endpoint.TokenURL, AuthStyle: c.Endpoint.AuthStyle,
		RedirectURL: c.RedirectURL, Scopes: c.Scopes, Token: tok,
	})
	if err == nil {
		err = l.opts.Store.SaveLogin(l.server, data)
	}
	if err != nil {
		l.logger.Warn("mcptools: keeping the login failed; the next run will log in again", slog.String("server", l.server), slog.Any("error", err))
	}
}

// oauthError describes an error of the token endpoint by its status,
// error code and description only: the response's body is not shown.
func oauthError(err error) string {
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		return err.Error()
	}
	var parts []string
	if re.Response != nil {
		parts = append(parts, re.Response.Status)
	}
	for _, p := range []string{re.ErrorCode, re.ErrorDescription} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ": ")
}

// union returns the scopes of a, then those of b not in a.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// bearerToken is the bearer token req carried, "" when none.
func bearerToken(req *http.Request) string {
	scheme, token, ok := strings.Cut(req.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return token
}

// discard reads and closes the body of a response no one else will read.
func discard(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
}
