package openapitools

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// A Credential is what the program supplies for one security scheme of a
// description, in Options.Credentials: [APIKey], [Basic], [Bearer],
// [TokenSource], [ClientCredentials] or [CustomAuth]. A Credential never
// prints, logs or encodes its secret: fmt, slog and encoding/json show
// only its kind.
type Credential interface {
	// kind names the credential in messages.
	kind() string
	// fits reports whether the credential can be used for the scheme.
	fits(s *openapi3.SecurityScheme) bool
	// apply adds the credential to a request.
	apply(ctx context.Context, s *openapi3.SecurityScheme, req *http.Request) error
}

// APIKey is the key of an apiKey scheme: it goes in the header, query
// parameter or cookie the scheme names.
func APIKey(key string) Credential { return &apiKey{key: key} }

// Basic is the user and password of an http basic scheme.
func Basic(user, password string) Credential { return &basic{user: user, password: password} }

// Bearer is a fixed token for an http bearer scheme (or any other http
// scheme: "Authorization: <scheme> <token>"), an oauth2 scheme or an
// openIdConnect scheme.
func Bearer(token string) Credential { return &bearer{token: token} }

// TokenSource gets the token of an http bearer, oauth2 or openIdConnect
// scheme from ts before each call (an oauth2.ReuseTokenSource caches it
// until it expires): the program's own OAuth flow, its OpenID Connect
// client, a metadata server...
func TokenSource(ts oauth2.TokenSource) Credential { return &tokenSource{ts: ts} }

// ClientCredentials gets tokens for an oauth2 scheme with a
// clientCredentials flow (Swagger 2.0: application) from the flow's token
// URL, with the client's ID and secret and the scopes given, through
// Options.HTTPClient, and reuses each until it expires.
func ClientCredentials(clientID, clientSecret string, scopes ...string) Credential {
	return &clientCreds{id: clientID, secret: clientSecret, scopes: scopes}
}

// CustomAuth adds a credential to each request itself: for a scheme the
// others do not fit (a signature over the request, say), and for any
// scheme when the program wants to. It runs before Options.Prepare.
func CustomAuth(f func(ctx context.Context, req *http.Request) error) Credential {
	return customAuth(f)
}

type apiKey struct{ key string }
type basic struct{ user, password string }
type bearer struct{ token string }
type tokenSource struct{ ts oauth2.TokenSource }
type clientCreds struct {
	id, secret string
	scopes     []string
	ts         oauth2.TokenSource // made when the API is
}
type customAuth func(ctx context.Context, req *http.Request) error

func (*apiKey) kind() string      { return "openapitools.APIKey" }
func (*basic) kind() string       { return "openapitools.Basic" }
func (*bearer) kind() string      { return "openapitools.Bearer" }
func (*tokenSource) kind() string { return "openapitools.TokenSource" }
func (*clientCreds) kind() string { return "openapitools.ClientCredentials" }
func (customAuth) kind() string   { return "openapitools.CustomAuth" }

// String, GoString, Format, LogValue and MarshalJSON show a credential's
// kind, never its secret.
func redacted(c Credential) string { return c.kind() + "(REDACTED)" }

func (c *apiKey) Format(f fmt.State, _ rune)      { fmt.Fprint(f, redacted(c)) }
func (c *basic) Format(f fmt.State, _ rune)       { fmt.Fprint(f, redacted(c)) }
func (c *bearer) Format(f fmt.State, _ rune)      { fmt.Fprint(f, redacted(c)) }
func (c *tokenSource) Format(f fmt.State, _ rune) { fmt.Fprint(f, redacted(c)) }
func (c *clientCreds) Format(f fmt.State, _ rune) { fmt.Fprint(f, redacted(c)) }
func (c customAuth) Format(f fmt.State, _ rune)   { fmt.Fprint(f, redacted(c)) }

func (c *apiKey) LogValue() slog.Value      { return slog.StringValue(redacted(c)) }
func (c *basic) LogValue() slog.Value       { return slog.StringValue(redacted(c)) }
func (c *bearer) LogValue() slog.Value      { return slog.StringValue(redacted(c)) }
func (c *tokenSource) LogValue() slog.Value { return slog.StringValue(redacted(c)) }
func (c *clientCreds) LogValue() slog.Value { return slog.StringValue(redacted(c)) }
func (c customAuth) LogValue() slog.Value   { return slog.StringValue(redacted(c)) }

func (c *apiKey) MarshalJSON() ([]byte, error)      { return []byte(`"` + redacted(c) + `"`), nil }
func (c *basic) MarshalJSON() ([]byte, error)       { return []byte(`"` + redacted(c) + `"`), nil }
func (c *bearer) MarshalJSON() ([]byte, error)      { return []byte(`"` + redacted(c) + `"`), nil }
func (c *tokenSource) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted(c) + `"`), nil }
func (c *clientCreds) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted(c) + `"`), nil }
func (c customAuth) MarshalJSON() ([]byte, error)   { return []byte(`"` + redacted(c) + `"`), nil }

func isHTTP(s *openapi3.SecurityScheme, scheme string) bool {
	return s.Type == "http" && strings.EqualFold(s.Scheme, scheme)
}

func tokenScheme(s *openapi3.SecurityScheme) bool {
	return s.Type == "oauth2" || s.Type == "openIdConnect" || isHTTP(s, "bearer")
}

func (*apiKey) fits(s *openapi3.SecurityScheme) bool { return s.Type == "apiKey" }
func (*basic) fits(s *openapi3.SecurityScheme) bool  { return isHTTP(s, "basic") }
func (*bearer) fits(s *openapi3.SecurityScheme) bool {
	return tokenScheme(s) || s.Type == "http" && !isHTTP(s, "basic")
}
func (*tokenSource) fits(s *openapi3.SecurityScheme) bool { return tokenScheme(s) }
func (*clientCreds) fits(s *openapi3.SecurityScheme) bool {
	return s.Type == "oauth2" && s.Flows != nil && s.Flows.ClientCredentials != nil && s.Flows.ClientCredentials.TokenURL != ""
}
func (customAuth) fits(*openapi3.SecurityScheme) bool { return true }

func (c *apiKey) apply(_ context.Context, s *openapi3.SecurityScheme, req *http.Request) error {
	switch s.In {
	case "header":
		req.Header.Set(s.Name, c.key)
	case "query":
		pair := escapeValue(s.Name, false) + "=" + escapeValue(c.key, false)
		if req.URL.RawQuery != "" {
			pair = req.URL.RawQuery + "&" + pair
		}
		req.URL.RawQuery = pair
	case "cookie":
		addCookie(req, escapeValue(s.Name, false)+"="+escapeValue(c.key, false))
	default:
		return fmt.Errorf("apiKey scheme in %q, not in header, query or cookie", s.In)
	}
	return nil
}

func (c *basic) apply(_ context.Context, _ *openapi3.SecurityScheme, req *http.Request) error {
	req.SetBasicAuth(c.user, c.password)
	return nil
}

func (c *bearer) apply(_ context.Context, s *openapi3.SecurityScheme, req *http.Request) error {
	scheme := "Bearer"
	if s.Type == "http" && !isHTTP(s, "bearer") {
		scheme = s.Scheme
	}
	req.Header.Set("Authorization", scheme+" "+c.token)
	return nil
}

func (c *tokenSource) apply(_ context.Context, _ *openapi3.SecurityScheme, req *http.Request) error {
	return setToken(c.ts, req)
}

func (c *clientCreds) apply(_ context.Context, _ *openapi3.SecurityScheme, req *http.Request) error {
	return setToken(c.ts, req)
}

func (c customAuth) apply(ctx context.Context, _ *openapi3.SecurityScheme, req *http.Request) error {
	return c(ctx, req)
}

// setToken puts ts's token in req's Authorization header. The error says
// the token could not be had, and never quotes a token.
func setToken(ts oauth2.TokenSource, req *http.Request) error {
	tok, err := ts.Token()
	if err != nil {
		return fmt.Errorf("getting a token: %w", err)
	}
	req.Header.Set("Authorization", tok.Type()+" "+tok.AccessToken)
	return nil
}

func addCookie(req *http.Request, pair string) {
	if c := req.Header.Get("Cookie"); c != "" {
		pair = c + "; " + pair
	}
	req.Header.Set("Cookie", pair)
}

// fromSecret makes the credential a secret string stands for, by the
// kind of its scheme.
func fromSecret(s *openapi3.SecurityScheme, secret string) (Credential, bool) {
	switch {
	case s.Type == "apiKey":
		return APIKey(secret), true
	case isHTTP(s, "basic"):
		user, password, ok := strings.Cut(secret, ":")
		return Basic(user, password), ok
	case s.Type == "http" || tokenScheme(s):
		return Bearer(secret), true
	}
	return nil, false
}

// checkCredentials checks that each credential names a scheme of the
// description and fits it, and readies client credentials.
func (c *client) checkCredentials(creds map[string]Credential, secrets map[string]string, base func() *url.URL) error {
	c.creds = map[string]Credential{}
	creds = maps.Clone(creds) // the caller's, with the secrets added
	if creds == nil {
		creds = map[string]Credential{}
	}
	for _, name := range sortedKeys(secrets) {
		if _, given := creds[name]; given {
			continue
		}
		s := c.schemes[name]
		if s == nil {
			return fmt.Errorf("openapitools: %w: a secret for %q, which the description does not declare (it declares %s)",
				ErrCredentialMismatch, name, strings.Join(sortedKeys(c.schemes), ", "))
		}
		cred, ok := fromSecret(s, secrets[name])
		if !ok {
			return fmt.Errorf("openapitools: %w: %q is a %s scheme, which a secret string does not make (basic takes \"user:password\")",
				ErrCredentialMismatch, name, schemeKind(s))
		}
		creds[name] = cred
	}
	for _, name := range sortedKeys(creds) {
		cred := creds[name]
		s := c.schemes[name]
		switch {
		case cred == nil:
			return fmt.Errorf("openapitools: %w: the credential of %q is nil", ErrCredentialMismatch, name)
		case s == nil:
			return fmt.Errorf("openapitools: %w: the description declares no security scheme %q (it declares %s)",
				ErrCredentialMismatch, name, strings.Join(sortedKeys(c.schemes), ", "))
		case !cred.fits(s):
			return fmt.Errorf("openapitools: %w: %q is a %s scheme, which %s does not fit", ErrCredentialMismatch, name, schemeKind(s), cred.kind())
		}
		if cc, ok := cred.(*clientCreds); ok {
			tokenURL, err := resolveURL(s.Flows.ClientCredentials.TokenURL, base())
			if err != nil {
				return fmt.Errorf("openapitools: security scheme %q: token URL: %w", name, err)
			}
			cfg := &clientcredentials.Config{ClientID: cc.id, ClientSecret: cc.secret, Scopes: cc.scopes, TokenURL: tokenURL}
			ctx := context.WithValue(context.Background(), oauth2.HTTPClient, c.plain)
			cred = &clientCreds{id: cc.id, secret: cc.secret, scopes: cc.scopes, ts: cfg.TokenSource(ctx)}
		}
		c.creds[name] = cred
	}
	return nil
}

func schemeKind(s *openapi3.SecurityScheme) string {
	switch s.Type {
	case "http":
		return "http " + strings.ToLower(s.Scheme)
	case "apiKey":
		return "apiKey (in " + s.In + ")"
	}
	return s.Type
}

// suppliedParams returns the parameters (location, lower-case name) that
// the apiKey schemes of the requirements supply: the program's, never the
// model's.
func (c *client) suppliedParams(reqs openapi3.SecurityRequirements) map[[2]string]bool {
	out := map[[2]string]bool{}
	for _, req := range reqs {
		for name := range req {
			if s := c.schemes[name]; s != nil && s.Type == "apiKey" {
				out[[2]string{s.In, strings.ToLower(s.Name)}] = true
			}
		}
	}
	return out
}

// authorize adds the credentials of the first security requirement of
// op that the program supplied all of (an empty requirement, when there
// is one, if none is). With none it fails with ErrNoCredentials.
func (c *client) authorize(ctx context.Context, op *Operation, req *http.Request) error {
	if len(op.security) == 0 {
		return nil
	}
	optional := false
	for _, r := range op.security {
		if len(r) == 0 {
			optional = true
			continue
		}
		if !c.satisfies(r) {
			continue
		}
		for _, name := range sortedKeys(r) {
			cred := c.creds[name]
			if cred == nil {
				continue // mutualTLS: the client's own TLS configuration
			}
			if err := cred.apply(ctx, c.schemes[name], req); err != nil {
				return fmt.Errorf("security scheme %q: %w", name, err)
			}
		}
		return nil
	}
	if optional {
		return nil
	}
	var want []string
	for _, r := range op.security {
		want = append(want, strings.Join(sortedKeys(r), " and "))
	}
	return fmt.Errorf("%w: %s needs credentials for %s; the program supplies them in Options.Credentials",
		ErrNoCredentials, op.Name, strings.Join(want, ", or "))
}

// satisfies reports whether the program supplied every scheme of r.
func (c *client) satisfies(r openapi3.SecurityRequirement) bool {
	for name := range r {
		s := c.schemes[name]
		if c.creds[name] == nil && (s == nil || s.Type != "mutualTLS") {
			return false
		}
	}
	return true
}

// resolveURL makes ref absolute against base (which may be nil).
func resolveURL(ref string, base *url.URL) (string, error) {
	u, err := url.Parse(ref)
	if err != nil {
		return "", err
	}
	if !u.IsAbs() {
		if base == nil || !base.IsAbs() {
			return "", fmt.Errorf("%q is relative, and there is no absolute URL to take it from (set Options.BaseURL)", ref)
		}
		u = base.ResolveReference(u)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("%q is not an http or https URL", ref)
	}
	return u.String(), nil
}
