package openapitools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/toolnexus/toolnexus-go/geminiadapter"
	"github.com/toolnexus/toolnexus-go/geminitest"
	"github.com/toolnexus/toolnexus-go/openapitools"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// sharedDir holds real descriptions (APIs.guru, CC0): see its SOURCES.md.
// Any description put there is checked the same way.
const sharedDir = "../../shared/openapi"

func sharedDescriptions(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pat := range []string{"*.yaml", "*.yml", "*.json"} {
		m, _ := filepath.Glob(filepath.Join(sharedDir, pat))
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Skipf("no descriptions in %s (the shared corpus of real OpenAPI descriptions is absent): the synthetic ones in testdata are checked instead", sharedDir)
	}
	return files
}

// kinDoc reads a description with kin-openapi alone, as the independent
// reference the requests are checked against (with the Swagger 2.0
// collection formats kin-openapi's conversion drops put back).
func kinDoc(t *testing.T, file string) *openapi3.T {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data[:min(len(data), 2000)], []byte("swagger")) {
		var d2 openapi2.T
		if err := openapi2.UnmarshalFromData(data, &d2); err == nil && strings.HasPrefix(d2.Swagger, "2") {
			doc, err := openapi2conv.ToV3(&d2)
			if err != nil {
				t.Fatal(err)
			}
			openapitools.PatchV2(&d2, doc)
			repairArrayEnums(doc)
			// Swagger 2.0's tsv has no OpenAPI 3 style for the validator:
			// such a value is checked as one string.
			for _, item := range doc.Paths.Map() {
				for _, op := range item.Operations() {
					for _, p := range append(op.Parameters, item.Parameters...) {
						if p.Value != nil && p.Value.Style == "tabDelimited" {
							p.Value.Style = "form"
						}
					}
				}
			}
			return doc
		}
	}
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		t.Fatal(err)
	}
	repairArrayEnums(doc)
	return doc
}

// repairArrayEnums makes the repair the package makes of a mistake of
// Swagger 2.0 descriptions (GitLab's among them): an enum of single values
// on an array, which no array satisfies, meant for its items.
func repairArrayEnums(doc *openapi3.T) {
	seen := map[*openapi3.Schema]bool{}
	var walk func(r *openapi3.SchemaRef)
	walk = func(r *openapi3.SchemaRef) {
		if r == nil || r.Value == nil || seen[r.Value] {
			return
		}
		s := r.Value
		seen[s] = true
		if s.Type.Is("array") && len(s.Enum) > 0 && s.Items != nil && s.Items.Ref == "" && s.Items.Value != nil && s.Items.Value.Enum == nil {
			s.Items.Value.Enum, s.Enum = s.Enum, nil
		}
		walk(s.Items)
		for _, p := range s.Properties {
			walk(p)
		}
	}
	if doc.Paths == nil {
		return
	}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			for _, p := range append(op.Parameters, item.Parameters...) {
				if p.Value != nil {
					walk(p.Value.Schema)
				}
			}
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				for _, mt := range op.RequestBody.Value.Content {
					walk(mt.Schema)
				}
			}
		}
	}
}

// credentialsFor supplies a credential of the right kind for every
// security scheme of a description.
func credentialsFor(doc *openapi3.T) map[string]openapitools.Credential {
	creds := map[string]openapitools.Credential{}
	if doc.Components == nil {
		return creds
	}
	for name, r := range doc.Components.SecuritySchemes {
		s := r.Value
		switch {
		case s.Type == "apiKey":
			creds[name] = openapitools.APIKey("key-" + name)
		case s.Type == "http" && strings.EqualFold(s.Scheme, "basic"):
			creds[name] = openapitools.Basic("user", "secret")
		case s.Type == "http" || s.Type == "oauth2" || s.Type == "openIdConnect":
			creds[name] = openapitools.Bearer("token-" + name)
		}
	}
	return creds
}

// Every operation of every real description becomes a tool or a reported
// reason, and every declaration is one the API accepts: all of a
// description's go, through the real genai client, to the fake, which
// checks them as the API does.
func TestSharedDescriptionsConvert(t *testing.T) {
	total, tools := 0, 0
	for _, file := range sharedDescriptions(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			doc := kinDoc(t, file)
			want := 0
			if doc.Paths != nil {
				for _, item := range doc.Paths.Map() {
					for _, op := range item.Operations() {
						if op != nil {
							want++
						}
					}
				}
			}
			api, err := openapitools.ParseFile(context.Background(), file, &openapitools.Options{Credentials: credentialsFor(doc)})
			if err != nil {
				t.Fatal(err)
			}
			ops := api.Operations()
			if len(ops) != want {
				t.Errorf("%d operations, want %d", len(ops), want)
			}
			names := map[string]bool{}
			for _, op := range ops {
				if names[op.Name] {
					t.Errorf("two operations named %s", op.Name)
				}
				names[op.Name] = true
				switch {
				case op.Tool == nil && op.Err == nil:
					t.Errorf("%s %s: neither a tool nor a reason", op.Method, op.Path)
				case op.Tool == nil:
					t.Logf("skipped %s %s: %v", op.Method, op.Path, op.Err)
					if !errors.Is(op.Err, toolset.ErrSchemaTooLarge) && !errors.Is(op.Err, openapitools.ErrUnsupported) {
						t.Errorf("%s %s: a reason that is neither too large nor unsupported: %v", op.Method, op.Path, op.Err)
					}
				}
			}
			total += len(ops)
			tools += len(api.Tools())
			if len(api.Tools()) == 0 {
				return // the API refuses a request with no declarations
			}
			decls, err := geminiadapter.Tools(api.Tools()...)
			if err != nil {
				t.Fatal(err)
			}
			srv := geminitest.Start(t)
			srv.Enqueue(geminitest.Text("ok"))
			_, err = srv.Client().Models.GenerateContent(context.Background(), "gemini-2.5-flash", genai.Text("hello"),
				&genai.GenerateContentConfig{Tools: decls})
			if err != nil {
				t.Fatalf("the fake refused the declarations: %v", err)
			}
			srv.AssertComplete(t)
			// Parameter names follow the rule the API documents.
			for _, d := range decls[0].FunctionDeclarations {
				for _, a := range operation(t, api, d.Name).Arguments {
					if !argNameRule.MatchString(a.Name) {
						t.Errorf("%s: argument name %q", d.Name, a.Name)
					}
				}
			}
		})
	}
	t.Logf("%d operations, %d tools", total, tools)
}

// Requests for the operations of every real description are built as the
// description says: kin-openapi's request validator, an implementation
// independent of this package's, checks the method, path, query, headers,
// cookies, body and credentials of each one the server receives, and the
// values the model gave are found where they belong.
func TestSharedDescriptionsRequests(t *testing.T) {
	for _, file := range sharedDescriptions(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			checkRequests(t, file, 0)
		})
	}
}

// The synthetic descriptions pass the same checks.
func TestTestdataRequests(t *testing.T) {
	for _, f := range []string{"shop31.yaml", "legacy2.yaml", "forms30.json"} {
		t.Run(f, func(t *testing.T) { checkRequests(t, filepath.Join("testdata", f), 1) })
	}
}

// checkRequests calls every operation of a description with arguments
// made from its schema, and checks each request: at least minChecked
// must be checked.
func checkRequests(t *testing.T, file string, minChecked int) {
	doc := kinDoc(t, file)
	var mu sync.Mutex
	var got *http.Request
	var gotBody []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		c := r.Clone(context.Background()) // the handler's request is the server's once it returns
		c.URL.Scheme, c.URL.Host = "http", r.Host
		mu.Lock()
		got, gotBody = c, body
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	}))
	defer srv.Close()
	// The reference document serves from the test server.
	doc.Servers = openapi3.Servers{{URL: srv.URL}}
	if doc.Paths != nil {
		for _, item := range doc.Paths.Map() {
			item.Servers = nil
			for _, op := range item.Operations() {
				if op != nil {
					op.Servers = nil
				}
			}
		}
	}
	creds := credentialsFor(doc)
	api, err := openapitools.ParseFile(context.Background(), file, &openapitools.Options{BaseURL: srv.URL, Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	checked, invalid := 0, 0
	for _, op := range api.Operations() {
		if op.Tool == nil {
			continue
		}
		args := argsFor(op.Tool.Schema())
		mu.Lock()
		got = nil
		mu.Unlock()
		r := op.Tool.Execute(context.Background(), args)
		if r.IsError {
			if errors.Is(r.Err, toolset.ErrInvalidArguments) {
				invalid++ // the generator's failing, not the package's
				t.Logf("%s: the generated arguments do not fit: %v", op.Name, r.Output)
				continue
			}
			t.Errorf("%s: %v", op.Name, r.Output)
			continue
		}
		mu.Lock()
		req, body := got, gotBody
		mu.Unlock()
		if req == nil {
			t.Errorf("%s: no request", op.Name)
			continue
		}
		checked++
		checkRequest(t, doc, op, req, body, args)
	}
	t.Logf("%d requests checked, %d operations whose generated arguments did not fit", checked, invalid)
	if checked < minChecked || checked < (checked+invalid)/2 {
		t.Errorf("only %d of %d operations checked", checked, checked+invalid)
	}
}

func checkRequest(t *testing.T, doc *openapi3.T, op *openapitools.Operation, req *http.Request, body []byte, args map[string]any) {
	t.Helper()
	if req.Method != op.Method {
		t.Errorf("%s: method %s", op.Name, req.Method)
	}
	item := doc.Paths.Value(op.Path)
	route := &routers.Route{Spec: doc, Server: doc.Servers[0], Path: op.Path, PathItem: item, Method: op.Method, Operation: item.GetOperation(op.Method)}
	pathParams, ok := matchPath(op.Path, req.URL.EscapedPath())
	if !ok {
		t.Errorf("%s: the path %s does not match %s", op.Name, req.URL.EscapedPath(), op.Path)
		return
	}
	textBody := op.MediaType != "" && !isStructured(op.MediaType)
	req.Body = io.NopCloser(bytes.NewReader(body))
	input := &openapi3filter.RequestValidationInput{
		Request: req, PathParams: pathParams, Route: route,
		Options: &openapi3filter.Options{
			MultiError:         true,
			ExcludeRequestBody: textBody,
			AuthenticationFunc: func(_ context.Context, in *openapi3filter.AuthenticationInput) error {
				return checkCredential(in.SecurityScheme, in.SecuritySchemeName, req)
			},
		},
	}
	if err := openapi3filter.ValidateRequest(context.Background(), input); err != nil {
		var errs openapi3.MultiError
		if !errors.As(err, &errs) {
			errs = openapi3.MultiError{err}
		}
		for _, e := range errs {
			if why := beyondValidator(e, req, op.MediaType); why != "" {
				t.Logf("%s: kin-openapi cannot check this (%s): %v", op.Name, why, firstLine(e))
				continue
			}
			t.Errorf("%s: the request breaks the description:\n%s %s\n%s\n%v", op.Name, req.Method, req.URL, body, e)
		}
	}
	// The values are where they belong.
	for _, a := range op.Arguments {
		v, ok := args[a.Name]
		if !ok || v == nil {
			continue
		}
		s, primitive := primitiveText(v)
		switch {
		case a.In == "body":
			switch {
			case textBody:
				if s != string(body) {
					t.Errorf("%s: body %q, want %q", op.Name, body, s)
				}
			case isJSON(op.MediaType):
				var gotV any
				if err := json.Unmarshal(body, &gotV); err != nil || !reflect.DeepEqual(normalize(v), gotV) {
					t.Errorf("%s: body %s, want %v", op.Name, body, v)
				}
			case strings.HasPrefix(op.MediaType, "multipart/"):
				checkMultipart(t, op.Name, req.Header.Get("Content-Type"), body, v)
			case strings.HasPrefix(op.MediaType, "application/x-www-form-urlencoded"):
				form, _ := url.ParseQuery(string(body))
				for k, pv := range v.(map[string]any) {
					if ps, ok := primitiveText(pv); ok && form.Get(k) != ps {
						t.Errorf("%s: form field %s = %q, want %q", op.Name, k, form.Get(k), ps)
					}
				}
			}
		case !primitive:
		case a.In == "path":
			if pathParams[a.Param] != s && pathParams[a.Param] != url.PathEscape(s) {
				t.Errorf("%s: path parameter %s = %q, want %q", op.Name, a.Param, pathParams[a.Param], s)
			}
		case a.In == "query":
			if !contains(req.URL.Query()[a.Param], s) {
				t.Errorf("%s: query parameter %s = %q, want %q", op.Name, a.Param, req.URL.Query()[a.Param], s)
			}
		case a.In == "header":
			if req.Header.Get(a.Param) != s {
				t.Errorf("%s: header %s = %q, want %q", op.Name, a.Param, req.Header.Get(a.Param), s)
			}
		case a.In == "cookie":
			c, err := req.Cookie(a.Param)
			if err != nil || c.Value != url.QueryEscape(s) && c.Value != s && c.Value != url.PathEscape(s) {
				t.Errorf("%s: cookie %s = %v, want %q", op.Name, a.Param, c, s)
			}
		}
	}
}

// beyondValidator says why kin-openapi's validator cannot judge a
// request where it fails for its own reasons, not the request's: "" when
// the failure is the request's. What it cannot do: decode a query array of
// objects, or an object exploded in the query beside other parameters
// (OpenAPI defines neither), decode a form or multipart field whose schema
// is an anyOf or has no type, or an array whose items are an allOf.
// The values of such parameters are still checked by checkRequest.
func beyondValidator(err error, req *http.Request, mediaType string) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "schema has non primitive type"):
		return "an array of objects in the query, which OpenAPI does not define"
	case strings.Contains(msg, "failed to decode request body: unsupported schema"):
		return "its form decoder does not take this schema"
	case (strings.HasPrefix(mediaType, "multipart/") || strings.HasPrefix(mediaType, "application/x-www-form-urlencoded")) &&
		strings.Contains(msg, `doesn't match any schema from "anyOf"`):
		return "its form decoders do not decode a field whose schema is an anyOf"
	case (strings.HasPrefix(mediaType, "multipart/") || strings.HasPrefix(mediaType, "application/x-www-form-urlencoded")) &&
		strings.Contains(msg, "Value is not nullable"):
		return "its form decoders decode a field whose schema has no type as null"
	}
	var re *openapi3filter.RequestError
	if errors.As(err, &re) && re.Parameter != nil && re.Parameter.In == "query" {
		switch {
		case strings.Contains(msg, "empty value is not allowed") && req.URL.Query().Get(re.Parameter.Name) != "":
			return "it decodes a value that is there as empty: its items are an allOf"
		case (strings.Contains(msg, "value must be an object") || strings.Contains(msg, "value is required but missing")) &&
			re.Parameter.Schema != nil && re.Parameter.Schema.Value != nil &&
			re.Parameter.Schema.Value.AdditionalProperties.Schema != nil:
			return "an object with any properties exploded in the query takes the other parameters for its own"
		}
	}
	return ""
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// checkMultipart checks that each primitive field of a multipart body has
// its value, and each object its JSON.
func checkMultipart(t *testing.T, name, ctype string, body []byte, v any) {
	t.Helper()
	_, params, err := mime.ParseMediaType(ctype)
	if err != nil {
		t.Errorf("%s: Content-Type %q", name, ctype)
		return
	}
	fields := map[string][]string{}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for {
		p, err := mr.NextPart()
		if err != nil {
			break
		}
		data, _ := io.ReadAll(p)
		fields[p.FormName()] = append(fields[p.FormName()], string(data))
	}
	for k, pv := range v.(map[string]any) {
		want, ok := primitiveText(pv)
		if !ok {
			b, _ := json.Marshal(pv)
			want = string(b)
			if list, isList := pv.([]any); isList && len(list) > 0 {
				if s, prim := primitiveText(list[0]); prim {
					want = s
				}
			}
		}
		if len(fields[k]) == 0 || fields[k][0] != want {
			t.Errorf("%s: multipart field %s = %q, want %q", name, k, fields[k], want)
		}
	}
}

// matchPath matches a request's escaped path against a path template of
// a description, and returns the values of its parameters, unescaped. A
// fragment or a query written in the template (/#Action=Send, which AWS's
// descriptions use to tell apart operations on one path) is not part of
// the path.
func matchPath(template, path string) (map[string]string, bool) {
	template, _, _ = strings.Cut(template, "#")
	template, _, _ = strings.Cut(template, "?")
	var names []string
	pattern := "^" + templatePart.ReplaceAllStringFunc(regexp.QuoteMeta(template), func(m string) string {
		names = append(names, strings.Trim(m, `\{}`))
		return "([^/]*)"
	}) + "$"
	m := regexp.MustCompile(pattern).FindStringSubmatch(path)
	if m == nil {
		return nil, false
	}
	params := map[string]string{}
	for i, name := range names {
		v, err := url.PathUnescape(m[i+1])
		if err != nil {
			return nil, false
		}
		params[name] = v
	}
	return params, true
}

var templatePart = regexp.MustCompile(`\\\{[^\\}]*\\\}`)

// checkCredential checks that the request carries the credential
// credentialsFor supplies for a scheme.
func checkCredential(s *openapi3.SecurityScheme, name string, req *http.Request) error {
	switch {
	case s.Type == "apiKey":
		want := "key-" + name
		var got string
		switch s.In {
		case "header":
			got = req.Header.Get(s.Name)
		case "query":
			got = req.URL.Query().Get(s.Name)
		case "cookie":
			if c, err := req.Cookie(s.Name); err == nil {
				got, _ = url.QueryUnescape(c.Value)
			}
		}
		if got != want {
			return fmt.Errorf("apiKey %s in %s %q: got %q", name, s.In, s.Name, got)
		}
	case s.Type == "http" && strings.EqualFold(s.Scheme, "basic"):
		if u, p, ok := req.BasicAuth(); !ok || u != "user" || p != "secret" {
			return fmt.Errorf("basic %s: got %q", name, req.Header.Get("Authorization"))
		}
	default:
		if a := req.Header.Get("Authorization"); !strings.HasSuffix(a, " token-"+name) {
			return fmt.Errorf("%s: Authorization %q", name, a)
		}
	}
	return nil
}

func isJSON(mt string) bool {
	mt = strings.ToLower(mt)
	return strings.Contains(mt, "json") || mt == "*/*" || mt == "application/*"
}

func isStructured(mt string) bool {
	return isJSON(mt) || strings.HasPrefix(mt, "application/x-www-form-urlencoded") || strings.HasPrefix(mt, "multipart/")
}

// primitiveText prints a primitive value as it goes in a request.
func primitiveText(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case bool:
		return strconv.FormatBool(v), true
	case float64:
		if v == math.Trunc(v) {
			return strconv.FormatFloat(v, 'f', -1, 64), true
		}
		return strconv.FormatFloat(v, 'g', -1, 64), true
	}
	return "", false
}

func normalize(v any) any {
	b, _ := json.Marshal(v)
	var out any
	json.Unmarshal(b, &out)
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
