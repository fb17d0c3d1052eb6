package geminilive_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/geminilive"
	"github.com/toolnexus/toolnexus-go/geminitest"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// benchTool is the tool both pipelines of BenchmarkToolTurn run.
func benchTool() *toolset.Tool {
	return toolset.MustFunc("lookup", "Looks a key up", func(_ context.Context, in struct {
		Key string `json:"key"`
	}) (string, error) {
		return "found " + in.Key, nil
	})
}

// benchFakeEnv tells where BenchmarkToolTurn's fake serves: unset, in the
// benchmark's process; set to the address a TestBenchFake printed, in
// that other process, so that callgrind counts the client's instructions
// alone (BENCHMARKS.md has the commands). "serve" makes TestBenchFake
// serve.
const benchFakeEnv = "GEMINILIVE_BENCH_FAKE"

// scriptBench makes srv answer every turn as BenchmarkToolTurn expects:
// a call of lookup, then "Found." once its response came.
func scriptBench(srv *geminitest.Server) {
	call := func() *genai.FunctionCall { return geminitest.Call("lookup", map[string]any{"key": "milk"}) }
	srv.SetLiveReplyFunc(func(m *geminitest.LiveMessage) *geminitest.LiveReply {
		switch {
		case m.ToolResponse != nil:
			return geminitest.LiveText("Found.")
		case m.RealtimeInput != nil && m.RealtimeInput.Text != "":
			return geminitest.LiveCalls(call())
		}
		return nil
	})
	srv.SetReplyFunc(func(r *geminitest.Request) *geminitest.Reply {
		if len(r.FunctionResponses("lookup")) > 0 {
			return geminitest.Text("Found.")
		}
		return geminitest.Calls(call())
	})
}

// refusals returns an error naming what srv refused, nil if nothing.
func refusals(srv *geminitest.Server) error {
	if r := srv.Rejections(); len(r) > 0 {
		return fmt.Errorf("the fake refused %d requests, the first by rule %s", len(r), r[0].Rule)
	}
	if r := srv.LiveRejections(); len(r) > 0 {
		return fmt.Errorf("the fake refused %d live messages, the first by rule %s", len(r), r[0].Rejection.Rule)
	}
	return nil
}

// benchFake returns the client configurations of a fake scripted by
// scriptBench, for generateContent and for Live, served where benchFakeEnv
// says; one in this process is stopped, its refusals failing b, when b
// ends.
func benchFake(b *testing.B) (config, live *genai.ClientConfig) {
	url := os.Getenv(benchFakeEnv)
	if url == "" {
		srv := geminitest.NewServer() // no per-request log, unlike Start
		scriptBench(srv)
		b.Cleanup(func() {
			if err := refusals(srv); err != nil {
				b.Error(err)
			}
			srv.Close()
		})
		return srv.ClientConfig(), srv.LiveClientConfig()
	}
	if !strings.HasPrefix(url, "http://") {
		b.Fatalf("%s=%q: want the http:// address TestBenchFake printed", benchFakeEnv, url)
	}
	transport := &http.Transport{}
	b.Cleanup(transport.CloseIdleConnections)
	config = &genai.ClientConfig{APIKey: geminitest.APIKey, Backend: genai.BackendGeminiAPI,
		HTTPClient: &http.Client{Transport: transport}, HTTPOptions: genai.HTTPOptions{BaseURL: url}}
	live = &genai.ClientConfig{APIKey: geminitest.APIKey, Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: "ws://" + strings.TrimPrefix(url, "http://")}}
	return config, live
}

// TestBenchFake serves BenchmarkToolTurn's fake in a process of its own
// (benchFakeEnv=serve): it prints "fake " and its address, serves until
// interrupted (SIGINT or SIGTERM), and fails if it refused anything.
func TestBenchFake(t *testing.T) {
	if os.Getenv(benchFakeEnv) != "serve" {
		t.Skip(benchFakeEnv + "=serve serves BenchmarkToolTurn's fake")
	}
	ctx, stop := signal.NotifyContext(t.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := geminitest.NewServer()
	defer srv.Close()
	scriptBench(srv)
	fmt.Printf("fake %s\n", srv.URL)
	<-ctx.Done()
	if err := refusals(srv); err != nil {
		t.Error(err)
	}
	t.Logf("served %d requests and %d live messages", len(srv.Requests()), len(srv.LiveMessages()))
}

// BenchmarkToolTurn is one turn in which the model calls one tool and
// answers "Found.": through geminilive on an open session against the
// fake's Live websocket (Live), and through agent.Run against the fake's
// generateContent (Run), with the same tool, both over loopback, the fake
// in this process or in another (benchFakeEnv). BENCHMARKS.md ("Live
// against Run") reports the ratio of their callgrind instructions, both
// ways.
func BenchmarkToolTurn(b *testing.B) {
	b.Run("Live", func(b *testing.B) {
		client, a := benchLive(b)
		s, err := geminilive.Connect(b.Context(), client, a, geminilive.Config{})
		if err != nil {
			b.Fatal(err)
		}
		defer func() {
			if err := s.Close(); err != nil {
				b.Error(err)
			}
			for range s.Events() { // drained until Close ends them
			}
		}()
		b.ReportAllocs()
		for b.Loop() {
			if err := s.SendText("look up milk"); err != nil {
				b.Fatal(err)
			}
			var said, result string
			for e, err := range s.Events() {
				if err != nil {
					b.Fatal(err)
				}
				switch e.Kind {
				case geminilive.EventText:
					said += e.Text
				case geminilive.EventToolResult:
					result, _ = e.Result.Output.(string)
				}
				if e.Kind == geminilive.EventTurnComplete {
					break
				}
			}
			if said != "Found." || result != "found milk" {
				b.Fatalf("said %q, the tool returned %q", said, result)
			}
		}
	})
	b.Run("Run", func(b *testing.B) {
		config, _ := benchFake(b)
		client, err := genai.NewClient(b.Context(), config)
		if err != nil {
			b.Fatal(err)
		}
		a, err := agent.New(agent.Config{Models: client.Models, Model: "gemini-3-flash-preview", Tools: toolset.MustNew(benchTool())})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			res, err := a.Run(b.Context(), []*genai.Content{genai.NewContentFromText("look up milk", genai.RoleUser)})
			if err != nil {
				b.Fatal(err)
			}
			if res.Text != "Found." {
				b.Fatalf("said %q", res.Text)
			}
		}
	})
}

// benchLive returns a Live client of the benchmarks' fake and an agent
// with benchTool on it.
func benchLive(b *testing.B) (*genai.Client, *agent.Agent) {
	_, liveConfig := benchFake(b)
	client, err := genai.NewClient(b.Context(), liveConfig)
	if err != nil {
		b.Fatal(err)
	}
	a, err := agent.New(agent.Config{Models: client.Models, Model: model, Tools: toolset.MustNew(benchTool())})
	if err != nil {
		b.Fatal(err)
	}
	return client, a
}

// BenchmarkConnect opens a session on the fake and closes it: what a
// session's setup and end cost the client (the dial, genai's setup, and
// the session's tunnel: BENCHMARKS.md, "Live against Run").
func BenchmarkConnect(b *testing.B) {
	client, a := benchLive(b)
	b.ReportAllocs()
	for b.Loop() {
		s, err := geminilive.Connect(b.Context(), client, a, geminilive.Config{})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		for range s.Events() {
		}
	}
}
