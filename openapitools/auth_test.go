package openapitools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolnexus/toolnexus-go/openapitools"
	"golang.org/x/oauth2"
)

// authDescription declares one operation per kind of security scheme;
// tokenURL is the client credentials flow's token endpoint.
func authDescription(tokenURL string) string {
	return `openapi: 3.0.3
info: {title: Auth, version: "1"}
paths:
  /header: {get: {operationId: header, security: [{headerKey: []}], responses: {"200": {description: ok}}}}
  /query: {get: {operationId: query, security: [{queryKey: []}], parameters: [{name: q, in: query, schema: {type: string}}], responses: {"200": {description: ok}}}}
  /cookie: {get: {operationId: cookie, security: [{cookieKey: []}], parameters: [{name: c, in: cookie, schema: {type: string}}], responses: {"200": {description: ok}}}}
  /basic: {get: {operationId: basic, security: [{basicAuth: []}], responses: {"200": {description: ok}}}}
  /bearer: {get: {operationId: bearer, security: [{bearerAuth: []}], responses: {"200": {description: ok}}}}
  /machine: {get: {operationId: machine, security: [{machine: [read]}], responses: {"200": {description: ok}}}}
  /user: {get: {operationId: user, security: [{user: [read]}], responses: {"200": {description: ok}}}}
  /oidc: {get: {operationId: oidc, security: [{oidc: []}], responses: {"200": {description: ok}}}}
  /both: {get: {operationId: both, security: [{headerKey: [], basicAuth: []}], responses: {"200": {description: ok}}}}
  /either: {get: {operationId: either, security: [{bearerAuth: []}, {headerKey: []}], responses: {"200": {description: ok}}}}
  /optional: {get: {operationId: optional, security: [{}, {bearerAuth: []}], responses: {"200": {description: ok}}}}
  /open: {get: {operationId: open, responses: {"200": {description: ok}}}}
components:
  securitySchemes:
    headerKey: {type: apiKey, in: header, name: X-API-Key}
    queryKey: {type: apiKey, in: query, name: api_key}
    cookieKey: {type: apiKey, in: cookie, name: sid}
    basicAuth: {type: http, scheme: basic}
    bearerAuth: {type: http, scheme: bearer}
    machine:
      type: oauth2
      flows: {clientCredentials: {tokenUrl: "` + tokenURL + `", scopes: {read: read things}}}
    user:
      type: oauth2
      flows: {authorizationCode: {authorizationUrl: "https://auth.example/authorize", tokenUrl: "https://auth.example/token", scopes: {read: read things}}}
    oidc: {type: openIdConnect, openIdConnectUrl: "https://auth.example/.well-known/openid-configuration"}
`
}

// tokenServer is an OAuth 2.0 token endpoint for the client credentials
// grant: it checks the client and counts the tokens it issues.
func tokenServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var issued atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		id, secret, ok := r.BasicAuth()
		if !ok {
			id, secret = r.Form.Get("client_id"), r.Form.Get("client_secret")
		}
		if r.Form.Get("grant_type") != "client_credentials" || id != "app" || secret != "app-secret" || r.Form.Get("scope") != "read" {
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		}
		n := issued.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"access_token":"cc-token-%d","token_type":"Bearer","expires_in":3600}`, n)
	}))
	t.Cleanup(srv.Close)
	return srv, &issued
}

// Each kind of security scheme gets the program's credential where the
// scheme says: never an argument of the model's.
func TestAuthKinds(t *testing.T) {
	rec := newRecorder(t)
	tokens, issued := tokenServer(t)
	api, err := openapitools.Parse(context.Background(), []byte(authDescription(tokens.URL)), &openapitools.Options{
		BaseURL: rec.URL,
		Credentials: map[string]openapitools.Credential{
			"headerKey":  openapitools.APIKey("hk"),
			"queryKey":   openapitools.APIKey("q k&"),
			"cookieKey":  openapitools.APIKey("ck;1"),
			"basicAuth":  openapitools.Basic("ann", "pw"),
			"bearerAuth": openapitools.Bearer("bt"),
			"machine":    openapitools.ClientCredentials("app", "app-secret", "read"),
			"user":       openapitools.TokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "user-token"})),
			"oidc":       openapitools.TokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "id-token", TokenType: "Bearer"})),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tool   string
		args   map[string]any
		uri    string
		header map[string]string
	}{
		{"header", nil, "/header", map[string]string{"X-API-Key": "hk"}},
		{"query", map[string]any{"q": "x"}, "/query?q=x&api_key=q%20k%26", nil},
		{"cookie", map[string]any{"c": "v"}, "/cookie", map[string]string{"Cookie": "c=v; sid=ck%3B1"}},
		{"basic", nil, "/basic", map[string]string{"Authorization": "Basic YW5uOnB3"}},
		{"bearer", nil, "/bearer", map[string]string{"Authorization": "Bearer bt"}},
		{"machine", nil, "/machine", map[string]string{"Authorization": "Bearer cc-token-1"}},
		{"machine", nil, "/machine", map[string]string{"Authorization": "Bearer cc-token-1"}}, // reused
		{"user", nil, "/user", map[string]string{"Authorization": "Bearer user-token"}},
		{"oidc", nil, "/oidc", map[string]string{"Authorization": "Bearer id-token"}},
		{"both", nil, "/both", map[string]string{"X-API-Key": "hk", "Authorization": "Basic YW5uOnB3"}},
		{"either", nil, "/either", map[string]string{"Authorization": "Bearer bt", "X-API-Key": ""}},
		{"open", nil, "/open", map[string]string{"Authorization": "", "X-API-Key": ""}},
	} {
		op := operation(t, api, tc.tool)
		if r := op.Tool.Execute(context.Background(), tc.args); r.IsError {
			t.Errorf("%s: %v", tc.tool, r.Output)
			continue
		}
		got := rec.last(t)
		if got.URI != tc.uri {
			t.Errorf("%s: URI %s, want %s", tc.tool, got.URI, tc.uri)
		}
		for k, v := range tc.header {
			if g := got.Header.Get(k); g != v {
				t.Errorf("%s: header %s = %q, want %q", tc.tool, k, g, v)
			}
		}
		// The model is never asked for a credential.
		for _, a := range op.Arguments {
			if a.Param == "api_key" || a.Param == "sid" || a.Param == "X-API-Key" {
				t.Errorf("%s: argument %s", tc.tool, a.Name)
			}
		}
	}
	if n := issued.Load(); n != 1 {
		t.Errorf("%d tokens issued, want 1 (reused until it expires)", n)
	}
}

// An operation whose credentials the program did not supply is refused
// before any request; one whose security is optional goes without.
func TestMissingCredentials(t *testing.T) {
	rec := newRecorder(t)
	api, err := openapitools.Parse(context.Background(), []byte(authDescription("https://auth.example/token")), &openapitools.Options{
		BaseURL:     rec.URL,
		Credentials: map[string]openapitools.Credential{"headerKey": openapitools.APIKey("hk")},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := operation(t, api, "basic").Tool.Execute(context.Background(), nil)
	if !r.IsError || !errors.Is(r.Err, openapitools.ErrNoCredentials) || !strings.Contains(r.Output.(string), "basicAuth") {
		t.Errorf("basic without credentials: %+v", r)
	}
	if r := operation(t, api, "both").Tool.Execute(context.Background(), nil); !errors.Is(r.Err, openapitools.ErrNoCredentials) {
		t.Errorf("both with one of two: %+v", r)
	}
	if n := len(rec.all()); n != 0 {
		t.Fatalf("%d requests sent", n)
	}
	if r := operation(t, api, "optional").Tool.Execute(context.Background(), nil); r.IsError || rec.last(t).Header.Get("Authorization") != "" {
		t.Errorf("optional: %+v", r)
	}
	if r := operation(t, api, "either").Tool.Execute(context.Background(), nil); r.IsError || rec.last(t).Header.Get("X-API-Key") != "hk" {
		t.Errorf("either, with the second: %+v", r)
	}
}

// A credential that does not fit its scheme, or names none, is the
// program's mistake, found by Parse.
func TestCredentialMismatch(t *testing.T) {
	for name, creds := range map[string]map[string]openapitools.Credential{
		"api key for basic":           {"basicAuth": openapitools.APIKey("k")},
		"basic for an api key":        {"headerKey": openapitools.Basic("u", "p")},
		"token source for an api key": {"queryKey": openapitools.TokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "t"}))},
		"client credentials, no flow": {"user": openapitools.ClientCredentials("a", "b")},
		"an unknown scheme":           {"nope": openapitools.APIKey("k")},
		"a nil credential":            {"headerKey": nil},
	} {
		_, err := openapitools.Parse(context.Background(), []byte(authDescription("https://auth.example/token")), &openapitools.Options{Credentials: creds})
		if !errors.Is(err, openapitools.ErrCredentialMismatch) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// CustomAuth fits any scheme.
	_, err := openapitools.Parse(context.Background(), []byte(authDescription("https://auth.example/token")), &openapitools.Options{
		Credentials: map[string]openapitools.Credential{"user": openapitools.CustomAuth(func(context.Context, *http.Request) error { return nil })}})
	if err != nil {
		t.Error(err)
	}
}

// A redirect to another host (or port) carries no credential: not the
// API key header net/http would forward, not Authorization, not the
// cookie. A redirect on the same host keeps them.
func TestRedirectDropsCredentials(t *testing.T) {
	other := newRecorder(t)
	// The other server answers at "localhost", a host name that is not
	// the first server's 127.0.0.1.
	otherURL := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	first := newRecorder(t)
	first.setReply(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/header" || r.URL.Path == "/bearer" || r.URL.Path == "/cookie" {
			http.Redirect(w, r, otherURL+"/landed", http.StatusFound)
			return
		}
		if r.URL.Path == "/basic" {
			http.Redirect(w, r, "/landed", http.StatusTemporaryRedirect)
			return
		}
		w.WriteHeader(200)
	})
	api, err := openapitools.Parse(context.Background(), []byte(authDescription("https://auth.example/token")), &openapitools.Options{
		BaseURL: first.URL,
		Credentials: map[string]openapitools.Credential{
			"headerKey": openapitools.APIKey("hk"), "bearerAuth": openapitools.Bearer("bt"),
			"cookieKey": openapitools.APIKey("ck"), "basicAuth": openapitools.Basic("u", "p"),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"header", "bearer", "cookie"} {
		if r := operation(t, api, tool).Tool.Execute(context.Background(), nil); r.IsError {
			t.Fatalf("%s: %v", tool, r.Output)
		}
		got := other.last(t)
		if got.URI != "/landed" {
			t.Fatalf("%s: not redirected: %+v", tool, got)
		}
		for _, h := range []string{"X-Api-Key", "Authorization", "Cookie"} {
			if v := got.Header.Get(h); v != "" {
				t.Errorf("%s: the other host got %s: %q", tool, h, v)
			}
		}
	}
	if r := operation(t, api, "basic").Tool.Execute(context.Background(), nil); r.IsError {
		t.Fatal(r.Output)
	}
	if got := first.last(t); got.URI != "/landed" || got.Header.Get("Authorization") != "Basic dTpw" {
		t.Errorf("same host: %+v", got)
	}
}

// Credentials never show: not in fmt, slog or JSON, not in the log of
// calls, not in the error of a call that fails.
func TestCredentialsNeverShown(t *testing.T) {
	const secret = "s3cr3t-value"
	creds := map[string]openapitools.Credential{
		"headerKey":  openapitools.APIKey(secret),
		"queryKey":   openapitools.APIKey(secret),
		"basicAuth":  openapitools.Basic("user", secret),
		"bearerAuth": openapitools.Bearer(secret),
		"machine":    openapitools.ClientCredentials("app", secret),
		"user":       openapitools.TokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: secret})),
		"oidc":       openapitools.CustomAuth(func(context.Context, *http.Request) error { return nil }),
	}
	var shown bytes.Buffer
	for name, c := range creds {
		fmt.Fprintf(&shown, "%v %+v %#v %s %q\n", c, c, c, c, c)
		b, _ := json.Marshal(c)
		shown.Write(b)
		slog.New(slog.NewTextHandler(&shown, nil)).Info("credential", "name", name, "credential", c)
	}
	logger := slog.New(slog.NewJSONHandler(&shown, &slog.HandlerOptions{Level: slog.LevelDebug}))
	rec := newRecorder(t)
	api, err := openapitools.Parse(context.Background(), []byte(authDescription("https://auth.example/token")), &openapitools.Options{
		BaseURL: rec.URL, Credentials: creds, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"header", "query", "basic", "bearer"} {
		operation(t, api, tool).Tool.Execute(context.Background(), map[string]any{"q": "x"})
	}
	// A server that is not there: the error does not quote the URL, whose
	// query holds the key.
	rec.Close()
	r := operation(t, api, "query").Tool.Execute(context.Background(), map[string]any{"q": "x"})
	if !r.IsError {
		t.Fatalf("a closed server answered: %+v", r)
	}
	fmt.Fprintln(&shown, r.Output, r.Err)
	if strings.Contains(shown.String(), secret) {
		t.Errorf("the secret shows:\n%s", shown.String())
	}
	if !strings.Contains(shown.String(), "openapitools.APIKey(REDACTED)") || !strings.Contains(shown.String(), `"path":"/query"`) {
		t.Errorf("missing redacted kinds or call log:\n%s", shown.String())
	}
}

// Secrets are read by their scheme's kind.
func TestSecrets(t *testing.T) {
	rec := newRecorder(t)
	api, err := openapitools.Parse(context.Background(), []byte(authDescription("https://auth.example/token")), &openapitools.Options{
		BaseURL:     rec.URL,
		Secrets:     map[string]string{"headerKey": "hk", "basicAuth": "ann:pw", "bearerAuth": "bt", "oidc": "it"},
		Credentials: map[string]openapitools.Credential{"bearerAuth": openapitools.Bearer("wins")},
	})
	if err != nil {
		t.Fatal(err)
	}
	for tool, want := range map[string][2]string{
		"header": {"X-API-Key", "hk"}, "basic": {"Authorization", "Basic YW5uOnB3"},
		"bearer": {"Authorization", "Bearer wins"}, "oidc": {"Authorization", "Bearer it"},
	} {
		if r := operation(t, api, tool).Tool.Execute(context.Background(), nil); r.IsError {
			t.Fatalf("%s: %v", tool, r.Output)
		}
		if got := rec.last(t).Header.Get(want[0]); got != want[1] {
			t.Errorf("%s: %s = %q, want %q", tool, want[0], got, want[1])
		}
	}
	for name, secrets := range map[string]map[string]string{
		"basic without a colon": {"basicAuth": "ann"},
		"an unknown scheme":     {"nope": "x"},
	} {
		if _, err := openapitools.Parse(context.Background(), []byte(authDescription("https://auth.example/token")),
			&openapitools.Options{Secrets: secrets}); !errors.Is(err, openapitools.ErrCredentialMismatch) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
