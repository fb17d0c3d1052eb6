package openapitools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
)

// client makes the calls of one API.
type client struct {
	plain   *http.Client // the program's client
	http    *http.Client // the same, whose redirects drop credentials
	schemes map[string]*openapi3.SecurityScheme
	creds   map[string]Credential
}

// credentialHeaders is the context key of the names of the headers a
// request's credentials set, which a redirect to another host drops.
type credentialHeaders struct{}

func newClient(doc *openapi3.T, opts *Options) (*client, error) {
	c := &client{plain: opts.client(), schemes: map[string]*openapi3.SecurityScheme{}}
	if doc.Components != nil {
		for name, r := range doc.Components.SecuritySchemes {
			if r != nil && r.Value != nil {
				c.schemes[name] = r.Value
			}
		}
	}
	h := *c.plain
	next := c.plain.CheckRedirect
	h.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		first := via[0]
		if !strings.EqualFold(req.URL.Host, first.URL.Host) || first.URL.Scheme == "https" && req.URL.Scheme != "https" {
			// Another host (or a downgrade to http): the credentials
			// stay behind. net/http drops Authorization and Cookie only
			// for other domains; an API key header it would carry.
			for _, name := range credHeaders(req.Context()) {
				req.Header.Del(name)
			}
			req.Header.Del("Authorization")
			req.Header.Del("Cookie")
			req.Header.Del("Proxy-Authorization")
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	c.http = &h
	base := func() *url.URL { return nil }
	if opts.BaseURL != "" {
		u, err := url.Parse(opts.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("openapitools: Options.BaseURL %q is not an absolute http or https URL", opts.BaseURL)
		}
		base = func() *url.URL { return u }
	} else if len(doc.Servers) > 0 {
		if u, err := url.Parse(doc.Servers[0].URL); err == nil && u.IsAbs() && !strings.Contains(doc.Servers[0].URL, "{") {
			base = func() *url.URL { return u }
		}
	}
	if err := c.checkCredentials(opts.Credentials, opts.Secrets, base); err != nil {
		return nil, err
	}
	return c, nil
}

func credHeaders(ctx context.Context) []string {
	names, _ := ctx.Value(credentialHeaders{}).([]string)
	return names
}

// checkServerVariables checks the values given for server variables
// against the variables' enums.
func (a *API) checkServerVariables(doc *openapi3.T) error {
	if len(a.opts.ServerVariables) == 0 {
		return nil
	}
	known := map[string]*openapi3.ServerVariable{}
	walk := func(servers openapi3.Servers) {
		for _, s := range servers {
			if s == nil {
				continue
			}
			for name, v := range s.Variables {
				if v != nil {
					known[name] = v
				}
			}
		}
	}
	walk(doc.Servers)
	if doc.Paths != nil {
		for _, item := range doc.Paths.Map() {
			if item == nil {
				continue
			}
			walk(item.Servers)
			for _, op := range item.Operations() {
				if op != nil && op.Servers != nil {
					walk(*op.Servers)
				}
			}
		}
	}
	for _, name := range sortedKeys(a.opts.ServerVariables) {
		v, ok := known[name]
		value := a.opts.ServerVariables[name]
		switch {
		case !ok:
			return fmt.Errorf("openapitools: Options.ServerVariables: no server of the description has a variable %q", name)
		case len(v.Enum) > 0 && !slices.Contains(v.Enum, value):
			return fmt.Errorf("openapitools: Options.ServerVariables: %q is not one of %q's values %v", value, name, v.Enum)
		}
	}
	return nil
}

var templateVar = regexp.MustCompile(`\{([^{}]*)\}`)

// baseURL is where op's requests go, without its path: Options.BaseURL,
// or the first server's URL with its variables set.
func (op *Operation) baseURL() (string, error) {
	a := op.api
	if a.opts.BaseURL != "" {
		return strings.TrimSuffix(a.opts.BaseURL, "/"), nil
	}
	if len(op.servers) == 0 || op.servers[0] == nil {
		if a.base != nil {
			return strings.TrimSuffix(a.base.Scheme+"://"+a.base.Host, "/"), nil
		}
		return "", fmt.Errorf("%w: the description names no server; set Options.BaseURL", ErrNoServer)
	}
	s := op.servers[0]
	raw := templateVar.ReplaceAllStringFunc(s.URL, func(m string) string {
		name := m[1 : len(m)-1]
		if v, ok := a.opts.ServerVariables[name]; ok {
			return v
		}
		if v := s.Variables[name]; v != nil {
			return v.Default
		}
		return m
	})
	if strings.ContainsAny(raw, "{}") {
		return "", fmt.Errorf("%w: the server URL %q has a variable without a value; set Options.ServerVariables or Options.BaseURL", ErrNoServer, s.URL)
	}
	u, err := resolveURL(raw, a.base)
	if err != nil {
		return "", fmt.Errorf("%w: server URL: %w", ErrNoServer, err)
	}
	return strings.TrimSuffix(u, "/"), nil
}

// run is the tool's Run: it makes the request of the arguments, sends it,
// and reads the answer for the model.
func (op *Operation) run(ctx context.Context, args map[string]any) (any, error) {
	a := op.api
	timeout := a.opts.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, timeout, fmt.Errorf("%w: the call took longer than %v", context.DeadlineExceeded, timeout))
		defer cancel()
	}
	req, err := op.newRequest(ctx, args)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	resp, err := a.client.http.Do(req)
	if err != nil {
		if cause := context.Cause(ctx); cause != nil && ctx.Err() != nil {
			err = cause
		}
		return nil, fmt.Errorf("%s %s: no answer: %w", op.Method, op.Path, unwrapURLError(err))
	}
	defer resp.Body.Close()
	out := op.readResponse(ctx, resp)
	if l := a.opts.Logger; l != nil {
		l.LogAttrs(ctx, slog.LevelDebug, "openapitools: call", slog.String("tool", op.Name), slog.String("method", op.Method),
			slog.String("path", req.URL.Path), slog.Int("status", resp.StatusCode), slog.Duration("duration", time.Since(start)))
	}
	return out, nil
}

// unwrapURLError drops net/http's *url.Error, whose message quotes the
// whole URL, query (and so an API key in it) included.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// newRequest builds the request of a call: its URL from the server, the
// path and the query parameters, its headers and cookies, its body, and
// its credentials.
func (op *Operation) newRequest(ctx context.Context, args map[string]any) (*http.Request, error) {
	base, err := op.baseURL()
	if err != nil {
		return nil, err
	}
	byName := map[string]*param{}
	for _, p := range op.params {
		if p.in == "path" {
			byName[p.name] = p
		}
	}
	// A fragment is never sent; a query written in the path (AWS's
	// descriptions write /#Action=Send, others /items?kind=a to tell
	// operations on one path apart) goes first in the query.
	template, _, _ := strings.Cut(op.Path, "#")
	template, fixedQuery, _ := strings.Cut(template, "?")
	var missing []string
	path := templateVar.ReplaceAllStringFunc(template, func(m string) string {
		name := m[1 : len(m)-1]
		p := byName[name]
		if p == nil {
			missing = append(missing, name)
			return m
		}
		v, ok := args[p.arg]
		if !ok || v == nil {
			missing = append(missing, p.arg)
			return m
		}
		if p.content != "" {
			return escapeValue(jsonText(v), false)
		}
		return pathValue(p.style, p.explode, p.name, v)
	})
	if len(missing) > 0 {
		return nil, fmt.Errorf("the path %s needs %s", op.Path, strings.Join(missing, ", "))
	}
	var query, cookies []string
	if fixedQuery != "" {
		query = append(query, fixedQuery)
	}
	header := http.Header{}
	for _, p := range op.params {
		v, ok := args[p.arg]
		if !ok || v == nil {
			continue
		}
		if p.content != "" {
			v = jsonText(v)
		}
		switch p.in {
		case "query":
			query = append(query, queryPairs(p.style, p.explode, p.allowReserved, p.name, v)...)
		case "header":
			s, err := headerValue(p.explode, v)
			if err != nil {
				return nil, fmt.Errorf("argument %q: %w", p.arg, err)
			}
			header.Add(p.name, s)
		case "cookie":
			cookies = append(cookies, cookiePairs(p.explode, p.name, v)...)
		}
	}
	raw := base + path
	if len(query) > 0 {
		raw += "?" + strings.Join(query, "&")
	}
	var body io.Reader
	contentType := ""
	if op.body != nil {
		if v, ok := args[op.body.arg]; ok && v != nil {
			data, ct, err := op.body.encode(v)
			if err != nil {
				return nil, fmt.Errorf("argument %q: %w", op.body.arg, err)
			}
			body, contentType = bytes.NewReader(data), ct
		}
	}
	req, err := http.NewRequestWithContext(ctx, op.Method, raw, body)
	if err != nil {
		return nil, fmt.Errorf("building the request: %w", unwrapURLError(err))
	}
	maps.Copy(req.Header, header)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if len(cookies) > 0 {
		req.Header.Set("Cookie", strings.Join(cookies, "; "))
	}
	if op.acceptTypes != "" {
		req.Header.Set("Accept", op.acceptTypes)
	}
	before := maps.Clone(req.Header)
	if err := op.api.client.authorize(ctx, op, req); err != nil {
		return nil, err
	}
	if prep := op.api.opts.Prepare; prep != nil {
		if err := prep(ctx, op, req); err != nil {
			return nil, fmt.Errorf("preparing the request: %w", err)
		}
	}
	var set []string
	for name, vs := range req.Header {
		if !slices.Equal(before[name], vs) {
			set = append(set, name)
		}
	}
	if len(set) > 0 {
		req = req.WithContext(context.WithValue(req.Context(), credentialHeaders{}, set))
	}
	return req, nil
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// encode makes the request body of the body argument v, and its
// Content-Type.
func (b *body) encode(v any) ([]byte, string, error) {
	switch b.kind {
	case bodyJSON:
		data, err := json.Marshal(v)
		ct := b.mediaType
		if k := strings.TrimSpace(ct); k == "*/*" || k == "application/*" || k == "" {
			ct = "application/json"
		}
		return data, ct, err
	case bodyText:
		if s, ok := v.(string); ok {
			return []byte(s), b.mediaType, nil
		}
		return []byte(jsonText(v)), b.mediaType, nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, "", fmt.Errorf("a %s body must be an object, not %T", b.mediaType, v)
	}
	if b.kind == bodyForm {
		var pairs []string
		for _, name := range sortedKeys(obj) {
			val := obj[name]
			style, explode, allowReserved := "form", true, false
			if enc := b.encoding[name]; enc != nil {
				if enc.Style != "" {
					style = enc.Style
				}
				if enc.Explode != nil {
					explode = *enc.Explode
				} else {
					explode = style == "form"
				}
				allowReserved = enc.AllowReserved
				if isJSONType(enc.ContentType) {
					val = jsonText(val)
				}
			}
			if m, isObj := val.(map[string]any); isObj && style == "form" && b.encoding[name] == nil {
				// An object nothing is said of goes as JSON, as in a
				// multipart body: OpenAPI's default would spread its
				// properties among the form's, its name lost, and APIs
				// such as Telegram's read JSON there.
				val = jsonText(m)
			}
			pairs = append(pairs, queryPairs(style, explode, allowReserved, name, val)...)
		}
		return []byte(strings.Join(pairs, "&")), b.mediaType, nil
	}
	// multipart
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, name := range sortedKeys(obj) {
		val := obj[name]
		enc := b.encoding[name]
		partType := ""
		if enc != nil {
			partType = enc.ContentType
		}
		values := []any{val}
		if list, isList := val.([]any); isList {
			joined := enc != nil && enc.Explode != nil && !*enc.Explode
			switch {
			case joined:
				values = []any{strings.Join(items(list), ",")}
			case !slices.ContainsFunc(list, isObject):
				values = list
			}
		}
		for _, item := range values {
			h := textproto.MIMEHeader{}
			var data []byte
			switch {
			case b.binary[name]:
				h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename=%q`, name, name))
				if partType == "" {
					partType = "application/octet-stream"
				}
				data = []byte(scalar(item))
			case isObject(item) || partType != "" && isJSONType(partType):
				h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q`, name))
				if partType == "" {
					partType = "application/json"
				}
				data = []byte(jsonText(item))
			default:
				h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q`, name))
				data = []byte(scalar(item))
			}
			if partType != "" {
				h.Set("Content-Type", partType)
			}
			pw, err := w.CreatePart(h)
			if err != nil {
				return nil, "", err
			}
			pw.Write(data)
		}
	}
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), w.FormDataContentType(), nil
}

func isObject(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}
