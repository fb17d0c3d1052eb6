// Package oauthtest is an OAuth 2.1 authorization server for tests, served
// in-process on loopback, of the kind MCP's authorization spec has clients
// log in with: authorization server metadata (RFC 8414), dynamic client
// registration (RFC 7591), the authorization code grant with PKCE (S256
// only), resource indicators (RFC 8707), the issuer in the authorization
// response (RFC 9207) and refresh tokens, rotated at each use. Its
// [Server.Verify] checks the access tokens it issued, for an MCP server
// under test to admit them.
//
// The user is already logged in at the server and consents to every
// request: the authorization endpoint redirects at once to the client's
// redirect URI with a code, so that a test's "browser" is an HTTP client
// that follows the authorization URL and its redirect.
//
// A test makes the token endpoint fail on demand ([Server.FailTokenRequests]):
// with an OAuth error (503 temporarily_unavailable, 400 invalid_grant…) or
// a connection closed without an answer.
package oauthtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// Options configure a [Server]. The zero value is ready to use.
type Options struct {
	// User is the user who logs in; "alice" when empty.
	User string

	// ExpiresIn is the access tokens' lifetime told to clients
	// (expires_in), one hour when zero. Verify does not enforce it, so
	// that a test can make clients refresh without racing the clock.
	ExpiresIn time.Duration

	// Audience, when set, gives the audience of each token issued for the
	// resource the client asked for; by default it is that resource. A
	// test makes the server issue tokens for another server with it.
	Audience func(resource string) string

	// Scopes are the scopes the server supports and grants.
	Scopes []string

	// Deny, when set, makes the user refuse every authorization: the
	// client is redirected with error=access_denied.
	Deny bool

	// NoRefreshTokens makes the server issue access tokens alone, as many
	// do for public clients: a client logs in again once its access token
	// expires.
	NoRefreshTokens bool
}

// A Server is an authorization server on loopback. It is safe for
// concurrent use.
type Server struct {
	opts Options
	http *httptest.Server

	mu       sync.Mutex
	clients  map[string]*client // by client_id
	codes    map[string]*grant  // by authorization code
	access   map[string]*grant  // by access token
	refresh  map[string]*grant  // by refresh token
	counts   Counts
	requests []url.Values // token requests, in order
	faults   []TokenFault // how the next token requests fail
}

// A TokenFault is how the token endpoint answers a request instead of
// serving it.
type TokenFault struct {
	// Status is the HTTP status of the answer; zero closes the connection
	// without an answer, as a network failure does.
	Status int
	// Error is the OAuth error code the answer carries
	// ("temporarily_unavailable", "invalid_grant"…), with Status.
	Error string
}

// Counts are what clients did at a Server.
type Counts struct {
	Registrations  int // dynamic client registrations
	Authorizations int // visits of the authorization endpoint
	CodeGrants     int // authorization codes exchanged for tokens
	Refreshes      int // refresh tokens exchanged for tokens
	Refused        int // token requests refused
	Failed         int // token requests failed by a TokenFault
}

type client struct {
	id           string
	redirectURIs []string
}

// A grant is what one authorization gave: the user, the client, the
// resource and the scopes; each code and token points to it.
type grant struct {
	user, clientID, resource, audience string
	scopes                             []string
	redirectURI, challenge             string // for the code
	revoked                            bool
}

// NewServer starts a Server; Close stops it.
func NewServer(opts *Options) *Server {
	s := &Server{
		clients: map[string]*client{},
		codes:   map[string]*grant{},
		access:  map[string]*grant{},
		refresh: map[string]*grant{},
	}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.User == "" {
		s.opts.User = "alice"
	}
	if s.opts.ExpiresIn == 0 {
		s.opts.ExpiresIn = time.Hour
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", s.metadata)
	mux.HandleFunc("POST /register", s.register)
	mux.HandleFunc("GET /authorize", s.authorize)
	mux.HandleFunc("POST /token", s.token)
	s.http = httptest.NewServer(mux)
	return s
}

// URL is the server's issuer URL.
func (s *Server) URL() string { return s.http.URL }

// Close stops the server.
func (s *Server) Close() { s.http.Close() }

// Counts returns what clients did so far.
func (s *Server) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts
}

// TokenRequests returns the form of every token request so far, in order.
func (s *Server) TokenRequests() []url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Tokens returns the access and refresh tokens issued so far and not
// revoked, for a test to check that none is printed or logged.
func (s *Server) Tokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, m := range []map[string]*grant{s.access, s.refresh} {
		for tok := range m {
			out = append(out, tok)
		}
	}
	return out
}

// FailTokenRequests makes the next n token requests fail as f says,
// before they are read: the codes and refresh tokens they carry stay
// good. It replaces the failures still to come: n zero ends them.
func (s *Server) FailTokenRequests(n int, f TokenFault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = s.faults[:0]
	for range n {
		s.faults = append(s.faults, f)
	}
}

// RevokeAccess revokes every access token issued so far, as when they
// leaked; refresh tokens stay valid.
func (s *Server) RevokeAccess() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.access)
}

// RevokeAll revokes every grant: access and refresh tokens alike, as when
// the user withdraws the client's access.
func (s *Server) RevokeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range []map[string]*grant{s.access, s.refresh} {
		for _, g := range m {
			g.revoked = true
		}
		clear(m)
	}
}

// Verify is an auth.TokenVerifier of the access tokens the server issued:
// their user, scopes and audience (TokenInfo.Extra["aud"]), expiring in an
// hour.
func (s *Server) Verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.access[token]
	if !ok || g.revoked {
		return nil, fmt.Errorf("%w: unknown or revoked token", auth.ErrInvalidToken)
	}
	return &auth.TokenInfo{
		UserID:     g.user,
		Scopes:     slices.Clone(g.scopes),
		Expiration: time.Now().Add(time.Hour),
		Extra:      map[string]any{"aud": g.audience},
	}, nil
}

func (s *Server) metadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                         s.URL(),
		"authorization_endpoint":                         s.URL() + "/authorize",
		"token_endpoint":                                 s.URL() + "/token",
		"registration_endpoint":                          s.URL() + "/register",
		"response_types_supported":                       []string{"code"},
		"grant_types_supported":                          []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":               []string{"S256"},
		"token_endpoint_auth_methods_supported":          []string{"none"},
		"scopes_supported":                               s.opts.Scopes,
		"authorization_response_iss_parameter_supported": true,
	})
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RedirectURIs []string `json:"redirect_uris"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&req); err != nil || len(req.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata", "error_description": "redirect_uris are required"})
		return
	}
	c := &client{id: random(), redirectURIs: req.RedirectURIs}
	s.mu.Lock()
	s.clients[c.id] = c
	s.counts.Registrations++
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{
		"client_id":                  c.id,
		"client_id_issued_at":        time.Now().Unix(),
		"redirect_uris":              c.redirectURIs,
		"token_endpoint_auth_method": "none",
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
	})
}

// authorize answers the user's browser: it checks the request, then
// redirects to the client with a code (or, with Deny, an error).
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts.Authorizations++
	c := s.clients[q.Get("client_id")]
	redirect := q.Get("redirect_uri")
	switch {
	case c == nil:
		http.Error(w, "unknown client_id", http.StatusBadRequest)
		return
	case !slices.ContainsFunc(c.redirectURIs, func(u string) bool { return sameRedirect(u, redirect) }):
		http.Error(w, "redirect_uri is not one the client registered", http.StatusBadRequest)
		return
	}
	back, _ := url.Parse(redirect)
	params := back.Query()
	params.Set("state", q.Get("state"))
	params.Set("iss", s.URL())
	switch {
	case s.opts.Deny:
		params.Set("error", "access_denied")
		params.Set("error_description", "the user refused")
	case q.Get("response_type") != "code":
		params.Set("error", "unsupported_response_type")
	case q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256":
		params.Set("error", "invalid_request")
		params.Set("error_description", "PKCE with S256 is required")
	case q.Get("resource") == "":
		params.Set("error", "invalid_target")
		params.Set("error_description", "a resource indicator is required")
	default:
		resource := q.Get("resource")
		audience := resource
		if s.opts.Audience != nil {
			audience = s.opts.Audience(resource)
		}
		code := random()
		s.codes[code] = &grant{
			user: s.opts.User, clientID: c.id, resource: resource, audience: audience,
			scopes: strings.Fields(q.Get("scope")), redirectURI: redirect, challenge: q.Get("code_challenge"),
		}
		params.Set("code", code)
	}
	back.RawQuery = params.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

// sameRedirect reports whether a redirect URI matches the registered one:
// exactly, or, for a loopback one, with any port (RFC 8252 §7.3).
func sameRedirect(registered, got string) bool {
	if registered == got {
		return true
	}
	a, err1 := url.Parse(registered)
	b, err2 := url.Parse(got)
	return err1 == nil && err2 == nil && a.Scheme == "http" && b.Scheme == "http" &&
		a.Hostname() == "127.0.0.1" && b.Hostname() == "127.0.0.1" && a.Path == b.Path
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 1<<16)
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	f := r.PostForm
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, f)
	if len(s.faults) > 0 {
		fault := s.faults[0]
		s.faults = s.faults[1:]
		s.counts.Failed++
		if fault.Status == 0 {
			panic(http.ErrAbortHandler) // the connection is closed, no answer sent
		}
		writeJSON(w, fault.Status, map[string]string{"error": fault.Error})
		return
	}
	refuse := func(code, description string) {
		s.counts.Refused++
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": code, "error_description": description})
	}
	var g *grant
	switch f.Get("grant_type") {
	case "authorization_code":
		g = s.codes[f.Get("code")]
		delete(s.codes, f.Get("code")) // a code is used once
		switch {
		case g == nil:
			refuse("invalid_grant", "unknown or used code")
			return
		case g.clientID != f.Get("client_id"), g.redirectURI != f.Get("redirect_uri"):
			refuse("invalid_grant", "the code was issued to another client or redirect URI")
			return
		case challenge(f.Get("code_verifier")) != g.challenge:
			refuse("invalid_grant", "the code verifier does not match the challenge")
			return
		case f.Get("resource") != g.resource:
			refuse("invalid_target", "the resource differs from the authorization request's")
			return
		}
		s.counts.CodeGrants++
	case "refresh_token":
		g = s.refresh[f.Get("refresh_token")]
		switch {
		case g == nil || g.revoked:
			refuse("invalid_grant", "unknown, used or revoked refresh token")
			return
		case g.clientID != f.Get("client_id"):
			refuse("invalid_grant", "the refresh token was issued to another client")
			return
		}
		delete(s.refresh, f.Get("refresh_token")) // rotated
		s.counts.Refreshes++
	default:
		refuse("unsupported_grant_type", "")
		return
	}
	access := random()
	s.access[access] = g
	answer := map[string]any{
		"access_token": access,
		"token_type":   "Bearer",
		"expires_in":   int(s.opts.ExpiresIn.Seconds()),
		"scope":        strings.Join(g.scopes, " "),
	}
	if !s.opts.NoRefreshTokens {
		refresh := random()
		s.refresh[refresh] = g
		answer["refresh_token"] = refresh
	}
	writeJSON(w, http.StatusOK, answer)
}

// challenge is the S256 code challenge of verifier.
func challenge(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func random() string { return rand.Text() }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
