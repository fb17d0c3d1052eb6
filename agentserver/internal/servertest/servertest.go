// Package servertest sets up what the protocol packages' tests share: a
// Server on the fake model, with a get_weather tool that can be held,
// served over HTTP by a protocol's handler, and the model the JavaScript
// clients' scenarios talk to.
package servertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// Model is the fake's model: a Gemini 3 model, whose calls have ids and
// thought signatures.
const Model = "gemini-3-flash-preview"

// Env is a Server on the fake model, served over HTTP.
type Env struct {
	Model *fake.Server
	Srv   *agentserver.Server
	HTTP  *httptest.Server
	// Gate holds calls of get_weather for the city "Gate" until it is
	// closed; Started gets the city of each call of get_weather as it
	// starts. A call for "Bergen" reports its progress: station 1, 2
	// and 3 of 3.
	Gate    chan struct{}
	Started chan string
}

type cityIn struct {
	City string `json:"city"`
}

// Serve starts an Env whose Server handler serves at route and under it,
// closed when the test ends, which fails the test if the fake refused a
// request. edit changes the agent's config, configs the server's.
func Serve(t *testing.T, handler func(*agentserver.Server) http.Handler, route string, edit func(*agent.Config), configs ...func(*agentserver.Config)) *Env {
	t.Helper()
	e := &Env{Model: fake.NewServer(), Gate: make(chan struct{}), Started: make(chan string, 100)}
	weather := toolset.MustFunc("get_weather", "Current weather for a city", func(ctx context.Context, in cityIn) (map[string]any, error) {
		e.Started <- in.City
		if in.City == "Bergen" { // a long call: it reports its progress
			for i := 1; i <= 3; i++ {
				toolset.ReportProgress(ctx, float64(i), 3, fmt.Sprintf("station %d of 3", i))
			}
		}
		if in.City == "Gate" {
			select {
			case <-e.Gate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return map[string]any{"city": in.City, "sky": "sunny"}, nil
	})
	cfg := agent.Config{Models: e.Model.Client().Models, Model: Model, Tools: toolset.MustNew(weather)}
	if edit != nil {
		edit(&cfg)
	}
	a, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	scfg := agentserver.Config{Agent: a, Logger: slog.New(slog.DiscardHandler)}
	for _, c := range configs {
		c(&scfg)
	}
	if e.Srv, err = agentserver.New(scfg); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h := handler(e.Srv)
	mux.Handle(route, h)
	mux.Handle(route+"/", h)
	if e.Srv.Artifacts() != nil {
		mux.Handle(agentserver.DefaultArtifactsPath, e.Srv.ArtifactsHandler())
	}
	e.HTTP = httptest.NewServer(mux)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.Srv.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
		e.HTTP.Close()
		e.Model.Close()
		for _, rj := range e.Model.Rejections() {
			t.Errorf("the fake rejected request #%d (rule %s): %s", rj.Seq, rj.Rule, rj.Err.Message)
		}
	})
	return e
}

// Limits sets the server's limits on messages and parts.
func Limits(messages, parts int) func(*agentserver.Config) {
	return func(c *agentserver.Config) { c.MaxMessages, c.MaxParts = messages, parts }
}

// OwnFiles lets each user give the model the files under
// gs://files/{user}/ by URI, and no other.
func OwnFiles(c *agentserver.Config) {
	c.AllowFileURI = func(_ context.Context, user, uri string) error {
		if strings.HasPrefix(uri, "gs://files/"+user+"/") {
			return nil
		}
		return errors.New("not a file of " + user)
	}
}

// ErrorCode returns the code of a JSON error body.
func ErrorCode(body string) string {
	var e struct{ Error struct{ Code string } }
	json.Unmarshal([]byte(body), &e)
	return e.Error.Code
}

// Call is a call of get_weather for city.
func Call(city string) *genai.FunctionCall {
	return fake.Call("get_weather", map[string]any{"city": city})
}

// NeedsOslo makes the calls for Oslo need approval, as the JavaScript
// scenarios expect.
func NeedsOslo(c *agent.Config) {
	c.NeedsApproval = func(call *genai.FunctionCall) bool { return call.Args["city"] == "Oslo" }
}

// Scripted plays the model for the JavaScript clients' scenarios: it
// calls get_weather for each known city a question names ("Gate" is held
// until the run is cancelled: see Env.Gate) (get_location,
// a browser tool, when it asks "where I am"), fails on "fail", and turns
// results into lines such as "Paris: sunny" or "get_weather denied: …".
func Scripted(req *fake.Request) *fake.Reply {
	last := req.Contents[len(req.Contents)-1]
	var responses []*genai.FunctionResponse
	var question strings.Builder
	for _, p := range last.Parts {
		if p.FunctionResponse != nil {
			responses = append(responses, p.FunctionResponse)
		}
		question.WriteString(p.Text)
	}
	if len(responses) > 0 {
		var lines []string
		for _, r := range responses {
			if msg, ok := r.Response["error"]; ok {
				lines = append(lines, fmt.Sprintf("%s denied: %v", r.Name, msg))
				continue
			}
			if r.Name == "make_chart" {
				lines = append(lines, "Here is the chart, and its data.")
				continue
			}
			out, _ := r.Response["result"].(map[string]any)
			if r.Name == "get_location" {
				return fake.Calls(Call(fmt.Sprint(out["city"])))
			}
			lines = append(lines, fmt.Sprintf("%v: %v", out["city"], out["sky"]))
		}
		return fake.Text(strings.Join(lines, "\n")).WithTextChunk(7)
	}
	q := question.String()
	switch {
	case strings.Contains(q, "fail"):
		return fake.Error(403, "API key AIzaSECRET not valid")
	case strings.Contains(q, "where I am"):
		return fake.Calls(fake.Call("get_location", nil))
	case strings.Contains(strings.ToLower(q), "chart"):
		return fake.Calls(fake.Call("make_chart", nil))
	}
	var calls []*genai.FunctionCall
	for _, city := range []string{"Paris", "Tokyo", "Oslo", "Lyon", "Bergen", "Gate"} {
		if strings.Contains(q, city) {
			calls = append(calls, Call(city))
		}
	}
	if len(calls) == 0 {
		return fake.Text("Glad to help.")
	}
	return fake.Calls(calls...)
}

// CrossSite sends a request as a page of another site makes the
// browser send it (Origin, Sec-Fetch-Site: cross-site), with the user's
// credentials (X-User), and returns its status and body.
func (e *Env) CrossSite(t *testing.T, method, path, contentType, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, e.HTTP.URL+path, strings.NewReader(body))
	req.Header.Set("X-User", "local")
	req.Header.Set("Origin", "https://evil.example")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := e.HTTP.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
