package main

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/toolnexus/toolnexus-go/geminitest"
	"google.golang.org/genai"
)

// redirect sends every request to the fake server, recording the host genai
// addressed it to.
type redirect struct {
	to   *url.URL
	base http.RoundTripper

	mu    sync.Mutex
	hosts []string
}

func (r *redirect) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.hosts = append(r.hosts, req.URL.Host)
	r.mu.Unlock()
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host, req.Host = r.to.Scheme, r.to.Host, ""
	return r.base.RoundTrip(req)
}

// With GOOGLE_GENAI_USE_VERTEXAI=true the chat talks to Vertex AI, with the
// project and location genai reads from the environment.
func TestVertexFromTheEnvironment(t *testing.T) {
	srv := geminitest.Start(t)
	t.Setenv("GOOGLE_CLOUD_PROJECT", "env-project")
	t.Setenv("GOOGLE_CLOUD_LOCATION", "europe-west4")
	t.Setenv("GOOGLE_API_KEY", "")
	t.Setenv("GEMINI_API_KEY", "")
	srv.Enqueue(
		geminitest.Calls(geminitest.Call("get_weather", map[string]any{"city": "Paris"})),
		geminitest.Text("Sunny in Paris (made-up data)."),
	)
	// The fake's Vertex AI transport sends a bearer token, as the client
	// genai builds from Application Default Credentials does.
	to, _ := url.Parse(srv.URL)
	rd := &redirect{to: to, base: srv.VertexClientConfig().HTTPClient.Transport}
	opts := options{vertex: true, httpClient: &http.Client{Transport: rd}, model: "gemini-2.5-flash"}
	out := chatOutput(t, opts, "What's the weather in Paris?\n")
	if !strings.Contains(out, "Sunny in Paris (made-up data).") || !strings.Contains(out, "get_weather") {
		t.Errorf("output:\n%s\nwant the tool call and the answer", out)
	}
	srv.AssertComplete(t)
	for i, r := range srv.Requests() {
		if r.Backend != genai.BackendVertexAI || r.Project != "env-project" || r.Location != "europe-west4" || r.Token == "" ||
			rd.hosts[i] != "europe-west4-aiplatform.googleapis.com" {
			t.Errorf("request #%d to %s: %v %s/%s token %q; want Vertex AI env-project/europe-west4 with a token",
				r.Seq, rd.hosts[i], r.Backend, r.Project, r.Location, r.Token)
		}
	}
}
