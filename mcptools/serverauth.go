package mcptools

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// AuthOptions make [NewHTTPHandler] admit only the requests that carry a
// valid OAuth bearer token, as MCP's authorization spec asks of a server:
// a request without one, or with one that is invalid, expired, revoked or
// issued for another server, is answered 401 with a WWW-Authenticate
// header pointing to the server's protected resource metadata (RFC 9728),
// from which a client finds where to log in; a token that lacks a
// required scope is answered 403. The checks are go-sdk's
// auth.RequireBearerToken, with the audience and the user checked on top.
//
// The metadata is served apart from the MCP endpoint, at a well-known path
// of the host: mount [AuthOptions.MetadataHandler] at
// [AuthOptions.MetadataPath] on the same server.
type AuthOptions struct {
	// Verify checks a request's bearer token, for instance by checking a
	// JWT's signature and claims, or by asking the authorization server
	// (RFC 7662 introspection). For a valid token it returns what it knows
	// of it; otherwise an error wrapping auth.ErrInvalidToken (expired,
	// revoked, unknown), and the client is answered 401 and may log in
	// again. Any other error is answered 500. The error's message is sent
	// to the client: it must not contain the token.
	//
	// The TokenInfo must name the token's user in UserID, and its
	// audiences in Extra["aud"] (a string or a []string, as a JWT's aud
	// claim). A token whose audiences do not include Resource is refused,
	// so that a token issued for another server cannot be replayed here;
	// each session is bound to the user who opened it, so that no one else
	// can use it. A TokenInfo without either is a mistake of the verifier,
	// answered 500. Required.
	Verify auth.TokenVerifier

	// Resource is the server's canonical URL, the one its clients dial
	// (e.g. "https://mcp.example.com/mcp"): the resource its metadata
	// describes, and the audience its tokens must be issued for. Required.
	Resource string

	// AuthorizationServers are the issuer URLs of the authorization servers
	// that issue tokens for the server, listed in its metadata for clients
	// to log in with.
	AuthorizationServers []string

	// Scopes, when set, are required of every token (403 otherwise), and
	// listed in the metadata and in the 401 challenge.
	Scopes []string

	// ResourceName names the server to users, in its metadata.
	ResourceName string

	// AllowMissingExpiration admits tokens whose TokenInfo has no
	// Expiration; by default they are refused.
	AllowMissingExpiration bool

	// ClockSkew is how long past its Expiration a token is still admitted,
	// for an authorization server whose clock runs ahead of this one.
	ClockSkew time.Duration
}

// wellKnownResource is the well-known path of protected resource metadata
// (RFC 9728 §3).
const wellKnownResource = "/.well-known/oauth-protected-resource"

// MetadataPath is the path at which the server's protected resource
// metadata is served: the well-known path followed by Resource's path
// (RFC 9728 §3.1), as in
// /.well-known/oauth-protected-resource/mcp for https://mcp.example.com/mcp.
func (o *AuthOptions) MetadataPath() string {
	u, err := url.Parse(o.Resource)
	if err != nil {
		return wellKnownResource
	}
	return wellKnownResource + strings.TrimSuffix(u.EscapedPath(), "/")
}

// MetadataURL is the absolute URL of the server's protected resource
// metadata: Resource's scheme and host with [AuthOptions.MetadataPath].
// The 401 challenge gives it as resource_metadata.
func (o *AuthOptions) MetadataURL() string {
	u, err := url.Parse(o.Resource)
	if err != nil {
		return ""
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host}).String() + o.MetadataPath()
}

// MetadataHandler serves the server's protected resource metadata (RFC
// 9728): its Resource, AuthorizationServers, Scopes and ResourceName, to
// anyone (it is public, and readable across origins). Mount it at
// [AuthOptions.MetadataPath].
func (o *AuthOptions) MetadataHandler() http.Handler {
	return auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               o.Resource,
		AuthorizationServers:   o.AuthorizationServers,
		ScopesSupported:        o.Scopes,
		ResourceName:           o.ResourceName,
		BearerMethodsSupported: []string{"header"},
	})
}

// check panics when o cannot protect a server, since a misconfigured
// guard must not leave the server open.
func (o *AuthOptions) check() {
	if o.Verify == nil {
		panic("mcptools: NewHTTPHandler: AuthOptions.Verify is nil")
	}
	u, err := url.Parse(o.Resource)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		panic(fmt.Sprintf("mcptools: NewHTTPHandler: AuthOptions.Resource %q is not an absolute http(s) URL", o.Resource))
	}
}

// protect wraps h so that it serves only requests with a valid token.
func (o *AuthOptions) protect(h http.Handler) http.Handler {
	o.check()
	return auth.RequireBearerToken(o.verify, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL:    o.MetadataURL(),
		Scopes:                 o.Scopes,
		AllowMissingExpiration: o.AllowMissingExpiration,
		ClockSkew:              o.ClockSkew,
	})(h)
}

// verify is Verify with the audience and the user checked.
func (o *AuthOptions) verify(ctx context.Context, token string, req *http.Request) (*auth.TokenInfo, error) {
	info, err := o.Verify(ctx, token, req)
	if err != nil || info == nil {
		return info, err
	}
	audiences, ok := audiences(info.Extra["aud"])
	switch {
	case !ok:
		return nil, errors.New(`mcptools: the token verifier reported no audience (TokenInfo.Extra["aud"])`)
	case info.UserID == "":
		return nil, errors.New("mcptools: the token verifier reported no user (TokenInfo.UserID)")
	case !oauthex.MatchesResource(audiences, o.Resource):
		return nil, fmt.Errorf("%w: the token was issued for another audience than %s", auth.ErrInvalidToken, o.Resource)
	}
	return info, nil
}

// audiences reads an aud claim: a string or a list of strings.
func audiences(aud any) ([]string, bool) {
	switch aud := aud.(type) {
	case string:
		return []string{aud}, true
	case []string:
		return aud, len(aud) > 0
	case []any:
		out := make([]string, 0, len(aud))
		for _, a := range aud {
			s, ok := a.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, len(out) > 0
	}
	return nil, false
}

// TokenInfo returns what the verifier of [AuthOptions] reported of the
// bearer token of the client whose call ctx belongs to (its user, scopes,
// expiration and claims), in a tool served by [NewHTTPHandler] with
// HandlerOptions.Auth: a tool decides with it what this user may see and
// do. It returns nil where no token was verified (a server without Auth,
// stdio, a direct call).
func TokenInfo(ctx context.Context) *auth.TokenInfo {
	if req := Request(ctx); req != nil && req.Extra != nil {
		return req.Extra.TokenInfo
	}
	return nil
}
