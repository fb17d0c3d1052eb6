package openapitools_test

import (
	"context"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/openapitools"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// Each call's request is built exactly: the path templated and encoded,
// the query in the parameter's style, headers, cookies, the body in its
// media type, the credentials where the scheme says.
func TestRequestsExact(t *testing.T) {
	rec := newRecorder(t)
	creds := map[string]map[string]openapitools.Credential{
		"shop31.yaml":  {"key": openapitools.APIKey("k1")},
		"legacy2.yaml": {"token": openapitools.APIKey("t 1"), "basic": openapitools.Basic("u", "p")},
	}
	for _, tc := range []struct {
		file, tool string
		args       map[string]any
		method     string
		uri        string
		header     map[string]string // headers that must be there, exactly
		body       string
	}{
		{
			file: "shop31.yaml", tool: "getItem",
			args:   map[string]any{"itemId": "a b/c", "fields": []any{"x", "y,z"}, "X_Request_Id": "r1", "session": "s; 1"},
			method: "GET", uri: "/items/a%20b%2Fc?fields=x,y%2Cz",
			header: map[string]string{"Key": "k1", "X-Request-Id": "r1", "Cookie": "session=s%3B%201", "Accept": "application/json"},
		},
		{
			file: "shop31.yaml", tool: "listItems",
			args:   map[string]any{"filter": map[string]any{"color": "red", "size": 3.0}, "tags": []any{"a", "b"}, "ids": []any{1.0, 2.0}, "q": "a/b?c"},
			method: "GET", uri: "/items?filter[color]=red&filter[size]=3&tags=a%7Cb&ids=1%202&limit=20&q=a/b?c",
		},
		{
			file: "shop31.yaml", tool: "styles",
			args:   map[string]any{"label": []any{"a", "b"}, "matrix": map[string]any{"x": "1", "y": "2"}, "plain": "p", "query_id": "q", "header_id": "h", "body": "bb"},
			method: "GET", uri: "/styles/.a.b/;matrix=x,1,y,2/p?id=q&body=bb",
			header: map[string]string{"Id": "h"},
		},
		{
			file: "shop31.yaml", tool: "replaceItem",
			args:   map[string]any{"itemId": "7", "body": map[string]any{"id": "7", "name": "lamp", "price": 2.5, "color": nil, "kind": "item", "alias": "abc"}},
			method: "PUT", uri: "/items/7",
			header: map[string]string{"Content-Type": "application/json", "Key": "k1"},
			body:   `{"alias":"abc","color":null,"id":"7","kind":"item","name":"lamp","price":2.5}`,
		},
		{
			file: "shop31.yaml", tool: "addPet",
			args:   map[string]any{"body": map[string]any{"kind": "cat", "lives": 9.0}},
			method: "POST", uri: "/pets", body: `{"kind":"cat","lives":9}`,
		},
		{
			file: "shop31.yaml", tool: "plantTree",
			args:   map[string]any{"body": map[string]any{"name": "oak", "children": []any{map[string]any{"name": "leaf", "children": []any{}}}}},
			method: "POST", uri: "/trees", body: `{"children":[{"children":[],"name":"leaf"}],"name":"oak"}`,
		},
		{
			file: "legacy2.yaml", tool: "get_things",
			args:   map[string]any{"csv": []any{"a", "b"}, "multi": []any{"a", "b"}, "pipes": []any{"a", "b"}, "ssv": []any{"a", "b"}, "tsv": []any{"a", "b"}, "sort": []any{"name"}},
			method: "GET", uri: "/things?csv=a,b&multi=a&multi=b&pipes=a%7Cb&ssv=a%20b&tsv=a%09b&sort=name&access_token=t%201",
		},
		{
			file: "legacy2.yaml", tool: "post_things",
			args:   map[string]any{"body": map[string]any{"name": "n", "labels": []any{"a", "b"}, "parts": []any{1.0, 2.0}}},
			method: "POST", uri: "/things",
			header: map[string]string{"Authorization": "Basic dTpw", "Content-Type": "application/x-www-form-urlencoded"},
			body:   "labels=a,b&name=n&parts=1&parts=2",
		},
		{
			file: "legacy2.yaml", tool: "addShape",
			args:   map[string]any{"body": map[string]any{"shapeType": "square", "side": 2.0, "label": nil}},
			method: "POST", uri: "/shapes?access_token=t%201", body: `{"label":null,"shapeType":"square","side":2}`,
		},
		{
			file: "forms30.json", tool: "placeOrder",
			args:   map[string]any{"body": map[string]any{"item": "i j", "count": 2.0, "tags": []any{"a", "b"}, "meta": map[string]any{"a": "x"}}},
			method: "POST", uri: "/orders", body: "count=2&item=i%20j&meta=%7B%22a%22%3A%22x%22%7D&tags=a,b",
		},
		{
			// OpenAPI 3.0: the readOnly id, required in answers, is not
			// asked for; a nullable enum takes null.
			file: "forms30.json", tool: "updateOrder",
			args:   map[string]any{"id": 3.0, "body": map[string]any{"item": "i", "note": nil}},
			method: "PUT", uri: "/orders/3", body: `{"item":"i","note":null}`,
		},
		{
			// AWS's descriptions tell operations on one path apart with a
			// fragment, never sent; a query in a path goes first.
			file: "forms30.json", tool: "runJob",
			args:   map[string]any{"id": 5.0, "Action": "Run"},
			method: "POST", uri: "/jobs/5?Action=Run",
		},
		{
			file: "forms30.json", tool: "fastSearch",
			args:   map[string]any{"q": "x y"},
			method: "GET", uri: "/search?kind=fast&q=x%20y",
		},
		{
			file: "forms30.json", tool: "postNote",
			args:   map[string]any{"body": "hello note"},
			method: "POST", uri: "/notes", header: map[string]string{"Content-Type": "text/plain"}, body: "hello note",
		},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			api := parseFile(t, tc.file, &openapitools.Options{BaseURL: rec.URL, Credentials: creds[tc.file]})
			r := operation(t, api, tc.tool).Tool.Execute(context.Background(), tc.args)
			if r.IsError {
				t.Fatalf("call failed: %v", r.Output)
			}
			got := rec.last(t)
			if got.Method != tc.method || got.URI != tc.uri {
				t.Errorf("request %s %s, want %s %s", got.Method, got.URI, tc.method, tc.uri)
			}
			for k, v := range tc.header {
				if g := got.Header.Get(k); g != v {
					t.Errorf("header %s = %q, want %q", k, g, v)
				}
			}
			if got.Body != tc.body {
				t.Errorf("body %q, want %q", got.Body, tc.body)
			}
			if resp, ok := r.Output.(*openapitools.Response); !ok || resp.Status != 200 {
				t.Errorf("output %#v, want a 200 Response", r.Output)
			}
		})
	}
}

// A multipart body has a part per property: a file part for a binary
// string, JSON for an object, a part per item of an array.
func TestMultipartBody(t *testing.T) {
	rec := newRecorder(t)
	api := parseFile(t, "forms30.json", &openapitools.Options{BaseURL: rec.URL})
	r := operation(t, api, "upload").Tool.Execute(context.Background(), map[string]any{
		"body": map[string]any{"file": "content", "meta": map[string]any{"title": "t"}, "tags": []any{"a", "b"}}})
	if r.IsError {
		t.Fatal(r.Output)
	}
	got := rec.last(t)
	mt, params, err := mime.ParseMediaType(got.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		t.Fatalf("Content-Type %q", got.Header.Get("Content-Type"))
	}
	mr := multipart.NewReader(strings.NewReader(got.Body), params["boundary"])
	type part struct{ name, file, ctype, data string }
	var parts []part
	for {
		p, err := mr.NextPart()
		if err != nil {
			break
		}
		data, _ := io.ReadAll(p)
		parts = append(parts, part{p.FormName(), p.FileName(), p.Header.Get("Content-Type"), string(data)})
	}
	want := []part{
		{"file", "file", "text/plain", "content"},
		{"meta", "", "application/json", `{"title":"t"}`},
		{"tags", "", "", "a"},
		{"tags", "", "", "b"},
	}
	if len(parts) != len(want) {
		t.Fatalf("parts %+v, want %+v", parts, want)
	}
	for i := range want {
		if parts[i] != want[i] {
			t.Errorf("part %d: %+v, want %+v", i, parts[i], want[i])
		}
	}

	// Swagger 2.0's type: file, in a multipart form with a path parameter.
	api2 := parseFile(t, "legacy2.yaml", &openapitools.Options{BaseURL: rec.URL,
		Credentials: map[string]openapitools.Credential{"token": openapitools.APIKey("t")}})
	r = operation(t, api2, "put_things_id_file").Tool.Execute(context.Background(), map[string]any{
		"id": 7.0, "body": map[string]any{"file": "hello", "note": "n"}})
	if r.IsError {
		t.Fatal(r.Output)
	}
	got = rec.last(t)
	if got.URI != "/things/7/file?access_token=t" || !strings.Contains(got.Body, `name="file"; filename="file"`) ||
		!strings.Contains(got.Body, "Content-Type: application/octet-stream\r\n\r\nhello\r\n") {
		t.Errorf("request %s %q", got.URI, got.Body)
	}
}

// Arguments that break the schema are refused before any request: the
// model reads what is wrong.
func TestInvalidArgumentsSendNothing(t *testing.T) {
	rec := newRecorder(t)
	api := parseFile(t, "shop31.yaml", &openapitools.Options{BaseURL: rec.URL,
		Credentials: map[string]openapitools.Credential{"key": openapitools.APIKey("k")}})
	for name, args := range map[string]map[string]any{
		"missing path parameter":    {"body": map[string]any{"name": "x"}},
		"wrong type":                {"itemId": 7.0, "body": map[string]any{"name": "x"}},
		"pattern":                   {"itemId": "1", "body": map[string]any{"name": "x", "alias": "ABC"}},
		"exclusive minimum":         {"itemId": "1", "body": map[string]any{"name": "x", "price": 0.0}},
		"enum":                      {"itemId": "1", "body": map[string]any{"name": "x", "color": "blue"}},
		"const":                     {"itemId": "1", "body": map[string]any{"name": "x", "kind": "other"}},
		"unknown argument":          {"itemId": "1", "body": map[string]any{"name": "x"}, "extra": 1.0},
		"credential from the model": {"itemId": "1", "body": map[string]any{"name": "x"}, "key": "stolen"},
	} {
		r := operation(t, api, "replaceItem").Tool.Execute(context.Background(), args)
		if !r.IsError || !errors.Is(r.Err, toolset.ErrInvalidArguments) {
			t.Errorf("%s: result %+v, want invalid arguments", name, r)
		}
	}
	// The discriminator chooses the alternative: a "kind" that names
	// none is refused.
	r := operation(t, api, "addPet").Tool.Execute(context.Background(), map[string]any{"body": map[string]any{"kind": "cow"}})
	if !r.IsError {
		t.Errorf("addPet with kind cow: %+v", r)
	}
	if n := len(rec.all()); n != 0 {
		t.Errorf("the server saw %d requests", n)
	}
}

// Non-2xx answers are results the model reads; a JSON body is parsed
// with its numbers exact, a long one cut, a binary one summarised.
func TestResponses(t *testing.T) {
	rec := newRecorder(t)
	api := parseFile(t, "shop31.yaml", &openapitools.Options{BaseURL: rec.URL, MaxResponseBytes: 64,
		Credentials: map[string]openapitools.Credential{"key": openapitools.APIKey("k")}})
	call := func(status int, ctype, body string) *openapitools.Response {
		t.Helper()
		rec.setReply(func(w http.ResponseWriter, r *http.Request) {
			if ctype != "" {
				w.Header().Set("Content-Type", ctype)
			}
			w.Header().Set("Location", "/items/9")
			w.WriteHeader(status)
			w.Write([]byte(body))
		})
		r := operation(t, api, "getItem").Tool.Execute(context.Background(), map[string]any{"itemId": "1"})
		if r.IsError {
			t.Fatalf("call failed: %v", r.Output)
		}
		return r.Output.(*openapitools.Response)
	}
	if r := call(404, "application/problem+json", `{"title":"not found","id":12345678901234567890}`); r.Status != 404 ||
		r.Body.(map[string]any)["title"] != "not found" || r.Body.(map[string]any)["id"].(interface{ String() string }).String() != "12345678901234567890" {
		t.Errorf("404: %+v", r)
	}
	if r := call(500, "text/plain; charset=utf-8", "boom"); r.Status != 500 || r.Body != "boom" {
		t.Errorf("500: %+v", r)
	}
	long := strings.Repeat("é", 100)
	if r := call(200, "text/plain", long); !r.Truncated || r.Body != strings.Repeat("é", 32) {
		t.Errorf("long: %+v", r)
	}
	if r := call(200, "application/json", `{"a":"`+strings.Repeat("x", 100)+`"}`); !r.Truncated || len(r.Body.(string)) != 64 {
		t.Errorf("long JSON: %+v", r)
	}
	if r := call(200, "image/png", strings.Repeat("\x89", 1000)); r.Body != "binary content (image/png, 1000 bytes), not shown" {
		t.Errorf("binary: %+v", r)
	}
	if r := call(201, "application/json", ""); r.Body != nil || r.Location != "/items/9" {
		t.Errorf("empty: %+v", r)
	}
}

// Options.Binary keeps a binary body and tells the model what it made of
// it.
func TestBinaryHook(t *testing.T) {
	rec := newRecorder(t)
	rec.setReply(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		w.Write([]byte("%PDF-1.7 ..."))
	})
	var kept []byte
	api := parseFile(t, "shop31.yaml", &openapitools.Options{BaseURL: rec.URL,
		Credentials: map[string]openapitools.Credential{"key": openapitools.APIKey("k")},
		Binary: func(ctx context.Context, b *openapitools.BinaryBody) (any, error) {
			data, err := io.ReadAll(b.Body)
			kept = data
			return map[string]any{"artifact": "report.pdf", "type": b.ContentType, "operation": b.Operation.Name}, err
		}})
	r := operation(t, api, "getItem").Tool.Execute(context.Background(), map[string]any{"itemId": "1"})
	resp := r.Output.(*openapitools.Response)
	if string(kept) != "%PDF-1.7 ..." || resp.Body.(map[string]any)["artifact"] != "report.pdf" || resp.Body.(map[string]any)["operation"] != "getItem" {
		t.Errorf("kept %q, output %+v", kept, resp)
	}
}
