package fake_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

func TestUnaryText(t *testing.T) {
	srv := newServer(t)
	srv.Enqueue(fake.Text("Hello."))
	resp, err := srv.Client().Models.GenerateContent(context.Background(), model, []*genai.Content{user("Hi")}, nil)
	if err != nil {
		t.Fatalf("GenerateContent: %v", err)
	}
	if got := resp.Text(); got != "Hello." {
		t.Errorf("Text() = %q; want %q", got, "Hello.")
	}
	c := resp.Candidates[0]
	if c.Content.Role != genai.RoleModel || c.FinishReason != genai.FinishReasonStop {
		t.Errorf("candidate role %q, finishReason %q; want model, STOP", c.Content.Role, c.FinishReason)
	}
	if resp.ModelVersion != model || resp.ResponseID == "" {
		t.Errorf("modelVersion %q, responseId %q; want %q and an id", resp.ModelVersion, resp.ResponseID, model)
	}
	u := resp.UsageMetadata
	if u == nil || u.PromptTokenCount <= 0 || u.CandidatesTokenCount <= 0 ||
		u.TotalTokenCount != u.PromptTokenCount+u.CandidatesTokenCount+u.ThoughtsTokenCount {
		t.Errorf("usageMetadata = %+v; want positive counts that add up", u)
	}
	if len(resp.SDKHTTPResponse.Headers["Content-Type"]) == 0 || !strings.HasPrefix(resp.SDKHTTPResponse.Headers.Get("Content-Type"), "application/json") {
		t.Errorf("Content-Type = %q; want application/json", resp.SDKHTTPResponse.Headers.Get("Content-Type"))
	}
	if n := srv.Pending(); n != 0 {
		t.Errorf("Pending() = %d; want 0", n)
	}
}

func TestUnknownRoutes(t *testing.T) {
	srv := newServer(t)
	for _, tc := range []struct{ method, path string }{
		{http.MethodGet, "/v1beta/models/gemini-2.5-flash:generateContent"},
		{http.MethodPost, "/v1beta/models/gemini-2.5-flash:countTokens"},
		{http.MethodPost, "/v1beta/tunedModels/foo:generateContent"},
		{http.MethodPost, "/v2/models/gemini-2.5-flash:generateContent"},
		{http.MethodPost, "/"},
	} {
		code, body := post(t, srv, tc.method, tc.path, fake.APIKey, `{}`)
		ae := apiErrorBody(t, body)
		if code != http.StatusNotFound || ae.Code != http.StatusNotFound || ae.Status != "NOT_FOUND" {
			t.Errorf("%s %s = %d %+v; want 404 NOT_FOUND in the API's error JSON", tc.method, tc.path, code, ae)
		}
	}
	rej := srv.Rejections()
	if len(rej) != 5 || rej[0].Rule != "route" || rej[4].Seq != 5 {
		t.Errorf("Rejections() = %+v; want 5 by rule route", rej)
	}
}

// A run of slashes in the path is one, as for the API: a base URL with a
// trailing slash makes //v1beta/… (answered 200 in the real traffic).
func TestDoubledSlashes(t *testing.T) {
	srv := newServer(t)
	srv.Enqueue(fake.Text("ok"), fake.Text("ok"))
	hi := `{"contents":[{"parts":[{"text":"hi"}]}]}`
	if code, b := post(t, srv, http.MethodPost, "//v1beta/models/gemini-2.0-flash:generateContent", fake.APIKey, hi); code != http.StatusOK {
		t.Errorf("POST //v1beta/… = %d %s; want 200", code, b)
	}
	// Vertex AI, with the bearer token of the server's Vertex AI client.
	req, err := http.NewRequest(http.MethodPost, srv.URL+"//v1beta1/projects/p/locations/l//publishers/google/models/gemini-2.5-flash:generateContent",
		strings.NewReader(hi))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.VertexClientConfig().HTTPClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("POST //v1beta1/… = %d; want 200", resp.StatusCode)
	}
	if r := srv.Requests(); len(r) != 2 || r[0].Model != "gemini-2.0-flash" || r[1].Backend != genai.BackendVertexAI || r[1].Project != "p" {
		t.Errorf("requests = %+v; want the Gemini API's gemini-2.0-flash, then Vertex AI's project p", r)
	}
}

func TestOtherAPIVersion(t *testing.T) {
	srv := newServer(t)
	srv.Enqueue(fake.Text("ok"))
	cfg := &genai.GenerateContentConfig{HTTPOptions: &genai.HTTPOptions{APIVersion: "v1"}}
	if _, err := srv.Client().Models.GenerateContent(context.Background(), model, []*genai.Content{user("hi")}, cfg); err != nil {
		t.Fatal(err)
	}
	if got := srv.LastRequest().APIVersion; got != "v1" {
		t.Errorf("APIVersion = %q; want v1", got)
	}
}

func TestMissingAPIKey(t *testing.T) {
	srv := newServer(t)
	srv.Enqueue(fake.Text("not sent"))
	code, body := post(t, srv, http.MethodPost, "/v1beta/models/gemini-2.5-flash:generateContent", "", `{"contents":[{"parts":[{"text":"hi"}]}]}`)
	want := genai.APIError{Code: 403, Status: "PERMISSION_DENIED",
		Message: "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API."}
	if diff := cmp.Diff(want, apiErrorBody(t, body)); code != http.StatusForbidden || diff != "" {
		t.Errorf("request without a key = %d; error (-want +got):\n%s", code, diff)
	}
	if srv.Pending() != 1 {
		t.Errorf("Pending() = %d; want the reply still queued", srv.Pending())
	}
}

func TestUnscripted(t *testing.T) {
	srv := newServer(t)
	c := srv.Client()
	ctx := context.Background()
	srv.Enqueue(fake.Text("one"))
	if _, err := c.Models.GenerateContent(ctx, model, []*genai.Content{user("1")}, nil); err != nil {
		t.Fatal(err)
	}
	_, err := c.Models.GenerateContent(ctx, model, []*genai.Content{user("2")}, nil)
	want := genai.APIError{Code: 400, Status: "FAILED_PRECONDITION", Message: "fake: no reply scripted for request #2"}
	if diff := cmp.Diff(want, asAPIError(t, err)); diff != "" {
		t.Errorf("unscripted request error (-want +got):\n%s", diff)
	}
	_, err = stream(ctx, c, model, []*genai.Content{user("3")}, nil)
	if ae := asAPIError(t, err); ae.Message != "fake: no reply scripted for request #3" {
		t.Errorf("unscripted stream error = %v; want request #3", ae)
	}
	if n := srv.Unscripted(); n != 2 {
		t.Errorf("Unscripted() = %d; want 2", n)
	}
	if len(srv.Rejections()) != 0 {
		t.Errorf("Rejections() = %v; unscripted requests are not rejections", srv.Rejections())
	}
	if reqs := srv.Requests(); !reqs[1].Unscripted || reqs[0].Unscripted {
		t.Errorf("Unscripted flags = %t, %t; want false, true", reqs[0].Unscripted, reqs[1].Unscripted)
	}
}

func TestReplyFunc(t *testing.T) {
	srv := newServer(t)
	c := srv.Client()
	ctx := context.Background()
	srv.SetReplyFunc(func(r *fake.Request) *fake.Reply {
		last := r.Contents[len(r.Contents)-1].Parts[0].Text
		if last == "nothing" {
			return nil
		}
		r.Contents[0].Parts[0].Text = "modified" // the copy is the function's own
		return fake.Text(fmt.Sprintf("#%d %s: %s", r.Seq, r.Model, strings.ToUpper(last)))
	})
	srv.Enqueue(fake.Text("queued first"))
	var got []string
	for _, in := range []string{"a", "b"} {
		resp, err := c.Models.GenerateContent(ctx, model, []*genai.Content{user(in)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, resp.Text())
	}
	if want := []string{"queued first", "#2 gemini-2.5-flash: B"}; !cmp.Equal(got, want) {
		t.Errorf("replies = %q; want %q", got, want)
	}
	if _, err := c.Models.GenerateContent(ctx, model, []*genai.Content{user("nothing")}, nil); asAPIError(t, err).Status != "FAILED_PRECONDITION" {
		t.Errorf("reply func returning nil: error %v; want the unscripted error", err)
	}
	if text := srv.Requests()[1].Contents[0].Parts[0].Text; text != "b" {
		t.Errorf("recorded text = %q after the reply func modified its copy; want %q", text, "b")
	}
	srv.SetReplyFunc(nil)
	if _, err := c.Models.GenerateContent(ctx, model, []*genai.Content{user("c")}, nil); asAPIError(t, err).Status != "FAILED_PRECONDITION" {
		t.Errorf("after SetReplyFunc(nil): error %v; want the unscripted error", err)
	}
}

func TestDelay(t *testing.T) {
	srv := newServer(t)
	const d = 50 * time.Millisecond
	srv.Enqueue(fake.Text("late").WithDelay(d))
	start := time.Now()
	if _, err := srv.Client().Models.GenerateContent(context.Background(), model, []*genai.Content{user("hi")}, nil); err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed < d {
		t.Errorf("answer after %v; want at least %v", elapsed, d)
	}
}

// blockingReply installs a reply function that answers with an hour of
// delay and reports on the returned channel when it has been called.
func blockingReply(srv *fake.Server) <-chan struct{} {
	called := make(chan struct{}, 1)
	srv.SetReplyFunc(func(*fake.Request) *fake.Reply {
		called <- struct{}{}
		return fake.Text("never").WithDelay(time.Hour)
	})
	return called
}

func TestDelayEndsWithTheContext(t *testing.T) {
	srv := newServer(t)
	called := blockingReply(srv)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-called
		cancel()
	}()
	_, err := srv.Client().Models.GenerateContent(ctx, model, []*genai.Content{user("hi")}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("GenerateContent error = %v; want context.Canceled", err)
	}
}

func TestCloseAbortsDelays(t *testing.T) {
	srv := fake.NewServer()
	defer srv.Close()
	called := blockingReply(srv)
	c := srv.Client()
	errc := make(chan error, 2)
	for _, streaming := range []bool{false, true} {
		go func() {
			var err error
			if streaming {
				_, err = stream(context.Background(), c, model, []*genai.Content{user("hi")}, nil)
			} else {
				_, err = c.Models.GenerateContent(context.Background(), model, []*genai.Content{user("hi")}, nil)
			}
			errc <- err
		}()
	}
	<-called
	<-called
	srv.Close() // returns only when both handlers have ended
	for range 2 {
		if err := <-errc; err == nil {
			t.Error("request answered after Close; want an error")
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	srv := fake.NewServer() // no logger: t.Logf from 64 goroutines is noise
	t.Cleanup(srv.Close)
	c := srv.Client()
	srv.SetReplyFunc(func(r *fake.Request) *fake.Reply {
		return fake.Text("re: " + r.Contents[0].Parts[0].Text).WithTextChunk(3)
	})
	const n = 64
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := fmt.Sprintf("message %d", i)
			want := "re: " + in
			var got string
			if i%2 == 0 {
				resp, err := c.Models.GenerateContent(context.Background(), model, []*genai.Content{user(in)}, nil)
				if err != nil {
					errs <- err
					return
				}
				got = resp.Text()
			} else {
				chunks, err := stream(context.Background(), c, model, []*genai.Content{user(in)}, nil)
				if err != nil {
					errs <- err
					return
				}
				for _, ch := range chunks {
					got += ch.Text()
				}
			}
			if got != want {
				errs <- fmt.Errorf("reply %q; want %q", got, want)
			}
			_ = srv.Requests() // read while others write
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	reqs := srv.Requests()
	seen := map[int]bool{}
	for _, r := range reqs {
		seen[r.Seq] = true
	}
	if len(reqs) != n || len(seen) != n || !seen[1] || !seen[n] {
		t.Errorf("%d requests recorded with %d distinct Seq; want %d numbered 1..%d", len(reqs), len(seen), n, n)
	}
	if len(srv.Rejections()) != 0 || srv.Unscripted() != 0 {
		t.Errorf("Rejections() = %v, Unscripted() = %d; want none", srv.Rejections(), srv.Unscripted())
	}
}

func TestClientConfigIsFresh(t *testing.T) {
	srv := newServer(t)
	a, b := srv.ClientConfig(), srv.ClientConfig()
	if a == b || a.APIKey != fake.APIKey || a.Backend != genai.BackendGeminiAPI || a.HTTPOptions.BaseURL != srv.URL {
		t.Errorf("ClientConfig() = %+v; want a new config with the key, the Gemini backend and BaseURL %s", a, srv.URL)
	}
}
