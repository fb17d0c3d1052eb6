package agent_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

func TestRetryTransientFailures(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault *fake.Reply
	}{
		{"408", fake.Error(408, "timeout")},
		{"429", fake.RateLimited(0)},
		{"500", fake.Error(500, "internal")},
		{"502", fake.Error(502, "bad gateway")},
		{"503", fake.Error(503, "The model is overloaded.")},
		{"504", fake.Error(504, "deadline")},
		{"dropped connection", fake.Drop()},
		{"malformed body", fake.Malformed()},
		{"cut body", fake.Text("a long answer that gets cut").WithFault(fake.FaultCutStream, 0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t)
			log := &eventLog{}
			a := newAgent(t, srv, nil, func(c *agent.Config) { c.Observer = log })
			srv.Enqueue(tc.fault, tc.fault, fake.Text("made it"))
			res, err := a.Run(context.Background(), user("hi"))
			if err != nil || res.Text != "made it" {
				t.Fatalf("Run() = %v, %v; want success after 2 retries", res, err)
			}
			if n := len(srv.Requests()); n != 3 {
				t.Errorf("%d requests, want 3", n)
			}
			if res.Turns[0].Attempts != 3 || len(log.of(agent.EventRetry)) != 2 {
				t.Errorf("Attempts = %d, retry events = %d; want 3 and 2", res.Turns[0].Attempts, len(log.of(agent.EventRetry)))
			}
		})
	}
}

func TestNoRetryOnPermanentErrors(t *testing.T) {
	for _, code := range []int{400, 401, 403, 404} {
		srv := newServer(t)
		a := newAgent(t, srv, nil)
		srv.Enqueue(fake.Error(code, "no"), fake.Text("unreachable"))
		res, err := a.Run(context.Background(), user("hi"))
		var apiErr genai.APIError
		if !errors.As(err, &apiErr) || apiErr.Code != code {
			t.Errorf("%d: Run() = %v, want a genai.APIError %d", code, err, code)
		}
		var me *agent.ModelError
		if !errors.As(err, &me) || me.Attempts != 1 {
			t.Errorf("%d: error %v is not a *ModelError after 1 attempt", code, err)
		}
		if n := len(srv.Requests()); n != 1 || res == nil {
			t.Errorf("%d: %d requests (want 1), result %v", code, n, res)
		}
	}
}

func TestRetriesRunOut(t *testing.T) {
	srv := newServer(t)
	a := newAgent(t, srv, nil, func(c *agent.Config) { c.Retry.MaxAttempts = 3 })
	srv.SetReplyFunc(func(*fake.Request) *fake.Reply { return fake.Error(503, "The model is overloaded.") })
	res, err := a.Run(context.Background(), user("hi"))
	var apiErr genai.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != 503 || apiErr.Message != "The model is overloaded." {
		t.Fatalf("Run() = %v, want the last APIError", err)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d requests, want 3 (MaxAttempts)", n)
	}
	if !strings.Contains(err.Error(), "failed after 3 attempts") || res == nil {
		t.Errorf("error = %q, result %v", err, res)
	}
}

func TestRetryHonoursRetryInfo(t *testing.T) {
	srv := newServer(t)
	log := &eventLog{}
	a := newAgent(t, srv, nil, func(c *agent.Config) { c.Observer = log })
	srv.Enqueue(fake.RateLimited(150*time.Millisecond), fake.Text("ok"))
	start := time.Now()
	if _, err := a.Run(context.Background(), user("hi")); err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed < 150*time.Millisecond {
		t.Errorf("retried after %v, before the 150ms RetryInfo asked for", elapsed)
	}
	retries := log.of(agent.EventRetry)
	if len(retries) != 1 || retries[0].Delay != 150*time.Millisecond {
		t.Fatalf("retry events = %+v, want one with Delay 150ms", retries)
	}
	var apiErr genai.APIError
	if !errors.As(retries[0].Err, &apiErr) || apiErr.Code != 429 {
		t.Errorf("retry cause = %v, want the 429", retries[0].Err)
	}
}

func TestRetryWaitHonoursContext(t *testing.T) {
	srv := newServer(t)
	// A policy without a time budget waits as long as the API asks.
	a := newAgent(t, srv, nil, func(c *agent.Config) { c.Retry.MaxElapsed = -1 })
	srv.Enqueue(fake.RateLimited(time.Hour))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := a.Run(ctx, user("hi"))
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Errorf("Run() = %v after %v; want DeadlineExceeded promptly", err, time.Since(start))
	}
}

func TestRetryInfoBeyondBudgetGivesUp(t *testing.T) {
	srv := newServer(t)
	a := newAgent(t, srv, nil, func(c *agent.Config) { c.Retry.MaxElapsed = time.Second })
	srv.Enqueue(fake.RateLimited(time.Hour))
	start := time.Now()
	_, err := a.Run(context.Background(), user("hi"))
	var apiErr genai.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != 429 || time.Since(start) > 5*time.Second {
		t.Errorf("Run() = %v after %v; want the 429 at once", err, time.Since(start))
	}
}

func TestReasks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply func() *fake.Reply
		kind  error
	}{
		{"malformed function call", func() *fake.Reply { return fake.Finish(genai.FinishReasonMalformedFunctionCall) }, agent.ErrMalformedCall},
		{"unexpected tool call", func() *fake.Reply { return fake.Finish(genai.FinishReasonUnexpectedToolCall) }, agent.ErrMalformedCall},
		{"empty STOP", fake.Empty, agent.ErrEmptyReply},
		{"no candidates", func() *fake.Reply { return &fake.Reply{Response: &genai.GenerateContentResponse{}, Raw: true} }, agent.ErrEmptyReply},
	} {
		t.Run(tc.name+" then success", func(t *testing.T) {
			srv := newServer(t)
			a := newAgent(t, srv, nil)
			srv.Enqueue(tc.reply(), tc.reply(), fake.Text("fine"))
			res, err := a.Run(context.Background(), user("hi"))
			if err != nil || res.Text != "fine" || res.Turns[0].Attempts != 3 {
				t.Fatalf("Run() = %+v, %v", res, err)
			}
			// The same history was sent each time.
			reqs := srv.Requests()
			if string(reqs[0].Body) != string(reqs[2].Body) {
				t.Error("re-ask changed the request")
			}
		})
		t.Run(tc.name+" for good", func(t *testing.T) {
			srv := newServer(t)
			a := newAgent(t, srv, nil)
			srv.SetReplyFunc(func(*fake.Request) *fake.Reply { return tc.reply() })
			res, err := a.Run(context.Background(), user("hi"))
			var se *agent.StopError
			if !errors.Is(err, tc.kind) || !errors.As(err, &se) || se.Attempts != 3 {
				t.Fatalf("Run() = %v, want %v after 3 attempts", err, tc.kind)
			}
			if res == nil || len(srv.Requests()) != 3 {
				t.Errorf("result %v after %d requests", res, len(srv.Requests()))
			}
		})
	}
}

func TestStops(t *testing.T) {
	for _, tc := range []struct {
		name   string
		reply  *fake.Reply
		kind   error
		reason string
	}{
		{"blocked prompt", fake.Blocked(genai.BlockedReasonProhibitedContent), agent.ErrPromptBlocked, "block reason PROHIBITED_CONTENT"},
		{"safety", fake.Finish(genai.FinishReasonSafety), agent.ErrUnsafe, "finish reason SAFETY"},
		{"recitation", fake.Finish(genai.FinishReasonRecitation), agent.ErrUnsafe, "finish reason RECITATION"},
		{"spii", fake.Finish(genai.FinishReasonSPII), agent.ErrUnsafe, "finish reason SPII"},
		{"blocklist", fake.Finish(genai.FinishReasonBlocklist), agent.ErrUnsafe, "finish reason BLOCKLIST"},
		{"prohibited", fake.Finish(genai.FinishReasonProhibitedContent), agent.ErrUnsafe, "finish reason PROHIBITED_CONTENT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t)
			w := &weatherTool{}
			a := newAgent(t, srv, toolset.MustNew(w.tool()))
			srv.Enqueue(fake.Calls(cities(1)...), tc.reply)
			res, err := a.Run(context.Background(), user("hi"))
			var se *agent.StopError
			if !errors.Is(err, tc.kind) || !errors.As(err, &se) || !strings.Contains(err.Error(), tc.reason) || se.Turn != 1 {
				t.Fatalf("Run() = %v, want %v with %q in turn 1", err, tc.kind, tc.reason)
			}
			if len(srv.Requests()) != 2 {
				t.Errorf("%d requests: a stop must not be retried", len(srv.Requests()))
			}
			// The partial result holds the first turn and its answers.
			if res == nil || len(res.History) != 3 || len(res.Turns) != 2 {
				t.Errorf("partial result: %d contents, %d turns; want 3 and 2", len(res.History), len(res.Turns))
			}
		})
	}
}

// A reply cut at the output token limit is never asked again: the same
// budget runs out the same way. A cut answer comes back with ErrMaxTokens,
// its text, and a history that can go on; a reply with nothing in it (the
// thinking used the whole budget) ends the run at once.
func TestMaxTokens(t *testing.T) {
	cut := func(r *fake.Reply) *fake.Reply {
		r.Response.Candidates[0].FinishReason = genai.FinishReasonMaxTokens
		return r
	}
	for _, tc := range []struct {
		name     string
		reply    *fake.Reply
		wantText string
		wantLen  int // contents in Result.History
	}{
		{"text cut", cut(fake.Text("The answer is cut sh")), "The answer is cut sh", 2},
		{"nothing but thoughts", cut(fake.Parts(&genai.Part{Text: "Let me think about", Thought: true})), "", 2},
		{"no parts", fake.Finish(genai.FinishReasonMaxTokens), "", 1},
	} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tc.name, stream), func(t *testing.T) {
				srv := newServer(t)
				a := newAgent(t, srv, nil)
				srv.Enqueue(tc.reply)
				res, err := runOrStream(a, stream, user("hi"))
				var stop *agent.StopError
				if !errors.Is(err, agent.ErrMaxTokens) || !errors.As(err, &stop) || stop.FinishReason != genai.FinishReasonMaxTokens {
					t.Fatalf("Run() error = %v, want a StopError of kind ErrMaxTokens", err)
				}
				if n := len(srv.Requests()); n != 1 {
					t.Errorf("%d model calls; a MAX_TOKENS reply must not be asked again", n)
				}
				if res.Text != tc.wantText || res.FinishReason != genai.FinishReasonMaxTokens || len(res.History) != tc.wantLen {
					t.Errorf("Result = text %q, finish %q, %d contents; want %q, MAX_TOKENS, %d",
						res.Text, res.FinishReason, len(res.History), tc.wantText, tc.wantLen)
				}
				// The history goes on.
				srv.Enqueue(fake.Text("…and the rest."))
				if _, err := a.Run(context.Background(), append(res.History, user("continue")...)); err != nil {
					t.Errorf("continuing the history: %v", err)
				}
			})
		}
	}
}

// Only the finish reasons after which the model may well answer differently
// are asked again.
func TestEmptyReplyReasks(t *testing.T) {
	for _, tc := range []struct {
		reason genai.FinishReason
		calls  int
	}{
		{genai.FinishReasonStop, 3},
		{genai.FinishReasonOther, 3},
		{genai.FinishReasonLanguage, 1},
		{genai.FinishReasonNoImage, 1},
	} {
		t.Run(string(tc.reason), func(t *testing.T) {
			srv := newServer(t)
			a := newAgent(t, srv, nil)
			for range 3 {
				srv.Enqueue(fake.Finish(tc.reason))
			}
			_, err := a.Run(context.Background(), user("hi"))
			var stop *agent.StopError
			if !errors.Is(err, agent.ErrEmptyReply) || !errors.As(err, &stop) || stop.FinishReason != tc.reason {
				t.Errorf("Run() error = %v, want ErrEmptyReply with the finish reason", err)
			}
			if n := len(srv.Requests()); n != tc.calls {
				t.Errorf("%d model calls, want %d", n, tc.calls)
			}
		})
	}
}

func TestCancelDuringModelCall(t *testing.T) {
	srv := newServer(t)
	a := newAgent(t, srv, nil)
	ctx, cancel := context.WithCancel(context.Background())
	srv.SetReplyFunc(func(*fake.Request) *fake.Reply {
		cancel() // the request has arrived: cancel while it waits for its reply
		return fake.Text("late").WithDelay(time.Hour)
	})
	start := time.Now()
	res, err := a.Run(ctx, user("hi"))
	if !errors.Is(err, context.Canceled) || res == nil || time.Since(start) > 5*time.Second {
		t.Errorf("Run() = %v after %v; want Canceled promptly with a result", err, time.Since(start))
	}
}

func TestCancelDuringTools(t *testing.T) {
	srv := newServer(t)
	w := &weatherTool{release: make(chan struct{}), started: make(chan string, 4)}
	stubbornStarted, stubbornDone := make(chan struct{}), make(chan struct{})
	release := make(chan struct{})
	stubborn := tool("stubborn", func(context.Context, map[string]any) (any, error) {
		defer close(stubbornDone)
		close(stubbornStarted)
		<-release // ignores its context
		return "late", nil
	})
	a := newAgent(t, srv, toolset.MustNew(w.tool(), stubborn))
	srv.Enqueue(fake.Calls(fake.Call("get_weather", map[string]any{"city": "A"}), fake.Call("stubborn", nil),
		fake.Call("get_weather", map[string]any{"city": "B"})))
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() { // cancel once all three calls are running
		<-w.started
		<-w.started
		<-stubbornStarted
		cancel(errors.New("user pressed Ctrl-C"))
	}()
	start := time.Now()
	res, err := a.Run(ctx, user("go"))
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "user pressed Ctrl-C") {
		t.Errorf("Run() = %v, want Canceled with its cause", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("Run took %v: it waited for the stubborn tool", time.Since(start))
	}
	if len(srv.Requests()) != 1 {
		t.Errorf("%d requests: a cancelled run must not call the model again", len(srv.Requests()))
	}
	if res == nil || len(res.Turns) != 1 || len(res.Turns[0].Results) != 3 {
		t.Fatalf("partial result = %+v", res)
	}
	for _, r := range res.Turns[0].Results {
		if !r.IsError {
			t.Errorf("result %+v of a cancelled call is not an error", r.Result)
		}
	}
	close(release)
	<-stubbornDone
}

func TestFailingToolDoesNotCancelSiblings(t *testing.T) {
	srv := newServer(t)
	slowOK := tool("slow_ok", func(ctx context.Context, _ map[string]any) (any, error) {
		select {
		case <-time.After(30 * time.Millisecond):
			return "fine", nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	fails := tool("fails", func(context.Context, map[string]any) (any, error) { return nil, errors.New("nope") })
	a := newAgent(t, srv, toolset.MustNew(slowOK, fails))
	srv.Enqueue(fake.Calls(fake.Call("fails", nil), fake.Call("slow_ok", nil)), fake.Text("ok"))
	if _, err := a.Run(context.Background(), user("go")); err != nil {
		t.Fatal(err)
	}
	got := lastResponses(t, srv)
	if got[0].Response["error"] != "nope" || got[1].Response["result"] != "fine" {
		t.Errorf("responses = %v, %v", got[0].Response, got[1].Response)
	}
}

func TestToolTimeoutWithToolIgnoringContext(t *testing.T) {
	srv := newServer(t)
	release := make(chan struct{})
	done := make(chan struct{})
	stubborn := tool("stubborn", func(context.Context, map[string]any) (any, error) {
		defer close(done)
		<-release
		return "late", nil
	})
	a := newAgent(t, srv, toolset.MustNew(stubborn), func(c *agent.Config) { c.ToolTimeout = 20 * time.Millisecond })
	srv.Enqueue(fake.Calls(fake.Call("stubborn", nil)), fake.Text("gave up"))
	res, err := a.Run(context.Background(), user("go"))
	if err != nil || res.Text != "gave up" {
		t.Fatalf("Run() = %v, %v", res, err)
	}
	if got := lastResponses(t, srv)[0].Response["error"]; got != "tool stubborn was stopped: tool call timed out after 20ms" {
		t.Errorf("response = %v", got)
	}
	close(release)
	<-done
}

func TestOutputCap(t *testing.T) {
	srv := newServer(t)
	big := tool("big", func(context.Context, map[string]any) (any, error) { return strings.Repeat("x", 5000), nil })
	bigObj := tool("big_obj", func(context.Context, map[string]any) (any, error) {
		return map[string]any{"rows": strings.Split(strings.Repeat("row,", 2000), ",")}, nil
	})
	small := tool("small", func(context.Context, map[string]any) (any, error) { return "tiny", nil })
	a := newAgent(t, srv, toolset.MustNew(big, bigObj, small), func(c *agent.Config) { c.MaxOutputBytes = 1000 })
	srv.Enqueue(fake.Calls(fake.Call("big", nil), fake.Call("big_obj", nil), fake.Call("small", nil)), fake.Text("ok"))
	if _, err := a.Run(context.Background(), user("go")); err != nil {
		t.Fatal(err)
	}
	got := lastResponses(t, srv)
	s, _ := got[0].Response["result"].(string)
	if !strings.HasPrefix(s, "[output truncated: it was 5002 bytes of JSON, over the limit of 1000; the first 898 bytes follow]\n") || jsonLen(t, s) > 1000 {
		t.Errorf("big output = %.120q… (%d bytes)", s, len(s))
	}
	s, _ = got[1].Response["result"].(string)
	if !strings.HasPrefix(s, "[output truncated: it was 12013 bytes of JSON, over the limit of 1000;") || jsonLen(t, s) > 1000 {
		t.Errorf("big object output = %.120q…", s)
	}
	if got[2].Response["result"] != "tiny" {
		t.Errorf("small output = %v", got[2].Response)
	}
}

func TestDefaultOutputCap(t *testing.T) {
	srv := newServer(t)
	huge := tool("huge", func(context.Context, map[string]any) (any, error) { return strings.Repeat("é", 1<<20), nil })
	a := newAgent(t, srv, toolset.MustNew(huge))
	srv.Enqueue(fake.Calls(fake.Call("huge", nil)), fake.Text("ok"))
	if _, err := a.Run(context.Background(), user("go")); err != nil {
		t.Fatal(err)
	}
	s, _ := lastResponses(t, srv)[0].Response["result"].(string)
	if !strings.HasPrefix(s, "[output truncated: it was 2097154 bytes of JSON, over the limit of 1048576;") || jsonLen(t, s) > 1<<20 {
		t.Errorf("huge output = %.100q… (%d bytes)", s, len(s))
	}
}

// A functionCall whose args are not an object cannot even be decoded by the
// SDK: the loop treats the reply as garbled, asks again, and, if the model
// keeps at it, ends with a typed error; it never crashes.
func TestArgsNotAnObject(t *testing.T) {
	body := []byte(`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"get_weather","args":"Paris"}}]},"finishReason":"STOP"}]}`)
	for _, stream := range []bool{false, true} {
		srv := newServer(t)
		w := &weatherTool{}
		a := newAgent(t, srv, toolset.MustNew(w.tool()), func(c *agent.Config) { c.Retry.MaxAttempts = 3 })
		srv.Enqueue(&fake.Reply{Body: body}, fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"})), fake.Text("ok"))
		res, err := runOrStream(a, stream, user("go"))
		if err != nil || res.Text != "ok" || res.Turns[0].Attempts != 2 {
			t.Errorf("stream=%v: one garbled reply: %v, %+v", stream, err, res)
		}
		srv.SetReplyFunc(func(*fake.Request) *fake.Reply { return &fake.Reply{Body: body} })
		res, err = runOrStream(a, stream, user("go"))
		var me *agent.ModelError
		if !errors.As(err, &me) || me.Attempts != 3 || res == nil || !strings.Contains(err.Error(), "cannot unmarshal string") {
			t.Errorf("stream=%v: garbled for good: %v", stream, err)
		}
	}
}

// runOrStream runs a with Run or Stream and returns the result and error.
func runOrStream(a *agent.Agent, stream bool, contents []*genai.Content) (*agent.Result, error) {
	return runStreaming(a, stream, contents, nil)
}

// What no wait can mend fails at once, with one attempt: before, every
// network error was retried for seconds.
func TestNoRetryOnUnfixableNetworkErrors(t *testing.T) {
	tlsSrv := httptest.NewUnstartedServer(http.NotFoundHandler())
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes fail by design
	tlsSrv.StartTLS()                                   // with a certificate nobody trusts
	t.Cleanup(tlsSrv.Close)
	for _, tc := range []struct {
		name, baseURL string
	}{
		{"certificate refused", tlsSrv.URL},
		{"unsupported scheme", "htp://127.0.0.1:1"},
		{"plain HTTP spoken to a TLS client", "https://" + strings.TrimPrefix(newServer(t).URL, "http://")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, err := genai.NewClient(context.Background(), &genai.ClientConfig{
				APIKey: fake.APIKey, Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: tc.baseURL}})
			if err != nil {
				t.Fatal(err)
			}
			a, err := agent.New(agent.Config{Models: client.Models, Model: model, Retry: fastRetry})
			if err != nil {
				t.Fatal(err)
			}
			_, err = a.Run(context.Background(), user("hi"))
			var me *agent.ModelError
			if !errors.As(err, &me) || me.Attempts != 1 {
				t.Errorf("Run() = %v; want a ModelError after 1 attempt", err)
			}
		})
	}
}
