package geminiinteractions_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/geminiinteractions"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

// The loop waits at least the delay the API asks for in a 429.
func TestRetryWaitsTheAPIsDelay(t *testing.T) {
	srv := newServer(t)
	var delay atomic.Int64
	obs := agent.ObserverFunc(func(_ context.Context, e *agent.Event) {
		if e.Kind == agent.EventRetry {
			delay.Store(int64(e.Delay))
		}
	})
	a := newAgent(t, geminiinteractions.New(srv.Client(), geminiinteractions.Config{}), func(c *agent.Config) { c.Observer = obs })
	srv.Enqueue(fake.RateLimited(30*time.Millisecond), fake.Text("made it"))
	res, err := a.Run(context.Background(), user("hi"))
	if err != nil || res.Text != "made it" {
		t.Fatalf("Run() = %+v, %v", res, err)
	}
	if d := time.Duration(delay.Load()); d < 30*time.Millisecond {
		t.Errorf("the retry waited %v; want at least the API's 30ms", d)
	}
}

// The SDK's own retries are off: one model call is one request, whatever
// the status; the loop's policy decides.
func TestSDKRetriesOff(t *testing.T) {
	for _, code := range []int{429, 500, 503} {
		srv := newServer(t)
		m := geminiinteractions.New(srv.Client(), geminiinteractions.Config{})
		srv.Enqueue(fake.Error(code, "no"), fake.Error(code, "no"), fake.Text("unreachable"))
		_, err := m.GenerateContent(context.Background(), model, user("hi"), nil)
		var apiErr genai.APIError
		if !errors.As(err, &apiErr) || apiErr.Code != code {
			t.Errorf("%d: GenerateContent() = %v", code, err)
		}
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("%d: %d requests; want 1", code, n)
		}
	}
}

// A Retry-After header, which genai's SDK does not read either, becomes
// the RetryInfo detail the loop honours.
func TestRetryAfterHeader(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write([]byte(`{"error":{"code":"resource_exhausted","message":"Slow down."}}`))
	}))
	defer api.Close()
	client, err := genai.NewClient(context.Background(), &genai.ClientConfig{APIKey: "k", Backend: genai.BackendGeminiAPI,
		HTTPClient: api.Client(), HTTPOptions: genai.HTTPOptions{BaseURL: api.URL}})
	if err != nil {
		t.Fatal(err)
	}
	m := geminiinteractions.New(client, geminiinteractions.Config{})
	_, err = m.GenerateContent(context.Background(), model, user("hi"), nil)
	var apiErr genai.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != 429 || apiErr.Status != "resource_exhausted" || apiErr.Message != "Slow down." {
		t.Fatalf("GenerateContent() = %v", err)
	}
	a := newAgent(t, m)
	d, ok := a.Steps().RetryDelay(err, 1, time.Now())
	if !ok || d < 7*time.Second {
		t.Errorf("RetryDelay() = %v, %t; want at least Retry-After's 7s", d, ok)
	}
}

// Credentials errors come from Google's front end in the google.rpc shape,
// with a number for a code, which genai's Interactions SDK cannot decode
// (it expects a string): they are the API errors they are all the same.
func TestFrontEndErrors(t *testing.T) {
	srv := fake.NewServer() // it rejects the request: that is the test
	defer srv.Close()
	cfg := srv.ClientConfig()
	cfg.HTTPClient = &http.Client{Transport: dropKey{http.DefaultTransport}}
	client, err := genai.NewClient(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = geminiinteractions.New(client, geminiinteractions.Config{}).GenerateContent(context.Background(), model, user("hi"), nil)
	var apiErr genai.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != 403 || apiErr.Status != "PERMISSION_DENIED" {
		t.Errorf("GenerateContent() = %v; want the 403", err)
	}
	for _, r := range srv.Rejections() {
		if r.Rule != "auth" {
			t.Errorf("rejected by %q", r.Rule)
		}
	}
}

type dropKey struct{ base http.RoundTripper }

func (d dropKey) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Del("X-Goog-Api-Key")
	return d.base.RoundTrip(r)
}

// The loop's re-asks and retries of a chained turn continue the same
// interaction, never the reply they replace.
func TestReaskContinuesTheSameInteraction(t *testing.T) {
	srv := newServer(t)
	a := newAgent(t, geminiinteractions.New(srv.Client(), geminiinteractions.Config{}))
	srv.Enqueue(fake.Calls(call("Paris")), fake.Empty(), fake.Error(503, "busy"), fake.Text("Sunny."))
	res, err := a.Run(context.Background(), user("Paris?"))
	if err != nil || res.Text != "Sunny." {
		t.Fatalf("Run() = %+v, %v", res, err)
	}
	reqs := creates(srv)
	for _, r := range reqs[1:] {
		if r.PreviousInteractionID != reqs[0].InteractionID {
			t.Errorf("request #%d continued %q; want the call turn %q", r.Seq, r.PreviousInteractionID, reqs[0].InteractionID)
		}
	}
}
