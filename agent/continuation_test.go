package agent_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/history"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// The long answer of the continuation tests: three hops, the last of which
// calls get_weather, then an answer in one.
var longHops = []string{"Part one of a long answer. ", "Part two of it. "}

// longScript enqueues a three-hop answer and the turn after it. Stream
// replies are cut into pieces of 6 bytes, each piece a checkpoint.
func longScript(srv *fake.Server, stream bool) {
	hops := fake.Hops(fake.Text(longHops[0]), fake.Text(longHops[1]), fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"})))
	if stream {
		for _, h := range hops {
			h.WithTextChunk(6).WithCheckpoints(1)
		}
	}
	srv.Enqueue(hops...)
	srv.Enqueue(fake.Text("Sunny in Paris."))
}

// hopRecorder records the HistoryFunc's prompt counts, and the hops'
// events.
type hopRecorder struct {
	eventLog
	mu      sync.Mutex
	prompts []int
	trim    agent.HistoryFunc
}

func (h *hopRecorder) prepare(ctx context.Context, info *agent.HistoryInfo) ([]*genai.Content, error) {
	h.mu.Lock()
	h.prompts = append(h.prompts, info.PromptTokens)
	h.mu.Unlock()
	if h.trim != nil {
		return h.trim(ctx, info)
	}
	return info.Contents, nil
}

// A three-hop answer, unary and streamed: the requests continue the first
// with its tokens, the history holds one model content with every hop's
// parts, the usage sums the hops (each billed) while the next turn's
// HistoryFunc reads the first hop's prompt size, and a Trimmer that the
// summed count would set off keeps the history whole. On the code before
// the loop owned continuation, genai merged the hops and summed the prompt
// counts: the HistoryFunc read 3× the prompt, and the Trimmer trimmed.
func TestLongAnswerThreeHops(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "Run", true: "Stream"}[stream], func(t *testing.T) {
			// First a run that learns the counts, then one with a Trimmer
			// between what it must and must not trim.
			srv := newServer(t)
			weather := &weatherTool{}
			rec := &hopRecorder{}
			a := newAgent(t, srv, toolset.MustNew(weather.tool()), func(c *agent.Config) {
				c.Model, c.Observer, c.PrepareHistory = model3, rec, rec.prepare
			})
			longScript(srv, stream)
			var texts strings.Builder
			res, err := runStreaming(a, stream, user("Tell me a long story, then the weather."), &texts)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			reqs := srv.Requests()
			if len(reqs) != 4 {
				t.Fatalf("%d requests, want 3 hops and a turn", len(reqs))
			}
			hops := rec.of(agent.EventHop)
			if len(hops) != 3 {
				t.Fatalf("%d EventHop, want 3", len(hops))
			}
			for i, req := range reqs[1:3] {
				if len(req.Contents) != len(reqs[0].Contents) || !bytes.Contains(req.Body, []byte(`"continuationToken"`)) {
					t.Errorf("hop %d: %d contents, body %s; want the first request's contents and a token", i+1, len(req.Contents), req.Body)
				}
				if want := hops[i].Response.Candidates[0].ContinuationToken; !bytes.Contains(req.Body, []byte(b64(want))) {
					t.Errorf("hop %d does not send the token hop %d received", i+1, i)
				}
			}
			// One model content, every hop's parts in order.
			content := res.History[1]
			var got []string
			for _, p := range content.Parts {
				switch {
				case p.Text != "":
					got = append(got, p.Text)
				case p.FunctionCall != nil:
					got = append(got, "call:"+p.FunctionCall.Name)
				}
			}
			if want := []string{longHops[0], longHops[1], "call:get_weather"}; !slices.Equal(got, want) {
				t.Errorf("model content = %q, want %q", got, want)
			}
			if res.Turns[0].Continuations != 2 || weather.calls.Load() != 1 {
				t.Errorf("turn 0: %d continuations, %d tool calls; want 2 and 1", res.Turns[0].Continuations, weather.calls.Load())
			}
			if stream && texts.String() != longHops[0]+longHops[1]+"Sunny in Paris." {
				t.Errorf("streamed text %q, want every hop's once", texts.String())
			}
			// Usage: every hop's, and the last turn's.
			var sum int
			for _, h := range hops {
				sum += h.Usage.PromptTokens
			}
			first := hops[0].Response.UsageMetadata.PromptTokenCount
			last := res.Turns[1].Usage.PromptTokens
			if res.Usage.PromptTokens != sum+last || res.Turns[0].Usage.PromptTokens != sum {
				t.Errorf("usage: run %d, turn 0 %d; want the hops' %d + %d", res.Usage.PromptTokens, res.Turns[0].Usage.PromptTokens, sum, last)
			}
			if hops[1].Usage.PromptTokens <= int(first) || hops[2].Usage.PromptTokens <= hops[1].Usage.PromptTokens {
				t.Errorf("hop prompts %d, %d, %d: each hop re-reads the answer so far", first, hops[1].Usage.PromptTokens, hops[2].Usage.PromptTokens)
			}
			if want := []int{0, int(first)}; !slices.Equal(rec.prompts, want) {
				t.Errorf("HistoryFunc read prompt sizes %v, want %v: the first hop's, not the %d of the hops summed", rec.prompts, want, sum)
			}

			// A Trimmer that the summed count would set off.
			estimate := history.Estimate(res.History[1], res.History[2])
			limit := int(first) + estimate + (sum-int(first))/2
			srv2 := newServer(t)
			rec2 := &hopRecorder{trim: history.Trimmer{MaxTokens: limit, DropFirstMessage: true}.Prepare}
			a2 := newAgent(t, srv2, toolset.MustNew(weather.tool()), func(c *agent.Config) {
				c.Model, c.Observer, c.PrepareHistory = model3, rec2, rec2.prepare
			})
			longScript(srv2, stream)
			if _, err := runStreaming(a2, stream, user("Tell me a long story, then the weather."), nil); err != nil {
				t.Fatalf("run with a Trimmer: %v", err)
			}
			if last := srv2.LastRequest(); len(last.Contents) != 3 {
				t.Errorf("the Trimmer (MaxTokens %d) sent %d contents, want the 3 of the history: it read the summed prompt count", limit, len(last.Contents))
			}
		})
	}
}

// runStreaming runs a, or streams it, collecting the streamed text in out
// when it is not nil.
func runStreaming(a *agent.Agent, stream bool, contents []*genai.Content, out *strings.Builder) (*agent.Result, error) {
	return runCtx(context.Background(), a, stream, contents, out)
}

// b64 is the standard base64 of b, as tokens are on the wire.
func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// A hop that fails for good ends the run with a ContinuationError that
// holds the hops made: its Response, the last turn and the history keep
// them, and Result.Text is their text, the usage counts them (they were
// billed). Before, genai's continuation returned nil and the error,
// dropping them.
func TestLongAnswerFailingHopKeepsOutput(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "Run", true: "Stream"}[stream], func(t *testing.T) {
			srv := newServer(t)
			log := &eventLog{}
			a := newAgent(t, srv, nil, func(c *agent.Config) { c.Model, c.Observer = model3, log })
			srv.Enqueue(fake.Hops(fake.Text(longHops[0]), fake.Text(longHops[1]), fake.Text("never sent"))[:2]...)
			srv.Enqueue(fake.Error(400, "Request contains an invalid argument."))
			res, err := runStreaming(a, stream, user("A long story."), nil)
			var ce *agent.ContinuationError
			var me *agent.ModelError
			var apiErr genai.APIError
			if !errors.As(err, &ce) || !errors.As(err, &me) || !errors.As(err, &apiErr) || apiErr.Code != 400 {
				t.Fatalf("error %v, want a ContinuationError wrapping the ModelError and the 400", err)
			}
			want := longHops[0] + longHops[1]
			if ce.Continuations != 1 || len(ce.Token) == 0 || agentText(ce.Response) != want {
				t.Errorf("ContinuationError: %d continuations, token %q, text %q; want 1, the token sent, %q", ce.Continuations, ce.Token, agentText(ce.Response), want)
			}
			if res.Text != want || len(res.History) != 2 || len(res.Turns) != 1 || res.Turns[0].Response != ce.Response {
				t.Errorf("Result: text %q, %d contents, %d turns; want the two hops' text in the history and the turn", res.Text, len(res.History), len(res.Turns))
			}
			var billed int
			for _, h := range log.of(agent.EventHop) {
				billed += h.Usage.TotalTokens
			}
			if billed == 0 || res.Usage.TotalTokens != billed {
				t.Errorf("usage %d, want the %d of the hops made", res.Usage.TotalTokens, billed)
			}
			// The history goes on.
			srv.Enqueue(fake.Text("The end."))
			if _, err := a.Run(context.Background(), append(res.History, user("go on")...)); err != nil {
				t.Errorf("continuing the history: %v", err)
			}
		})
	}
}

// agentText is the text of a response's first candidate.
func agentText(resp *genai.GenerateContentResponse) string {
	if resp == nil || len(resp.Candidates) == 0 {
		return ""
	}
	return agent.NewResult(nil, []agent.Turn{{Response: resp}}, agent.Usage{}, "", nil).Text
}

// A hop that fails for a transient reason is retried, with its token.
func TestLongAnswerHopRetried(t *testing.T) {
	srv := newServer(t)
	log := &eventLog{}
	a := newAgent(t, srv, nil, func(c *agent.Config) { c.Observer = log })
	hops := fake.Hops(fake.Text("one "), fake.Text("two "), fake.Text("three"))
	srv.Enqueue(hops[0], hops[1], fake.RateLimited(0), fake.Overloaded(), hops[2])
	res, err := a.Run(context.Background(), user("count"))
	if err != nil || res.Text != "one two three" {
		t.Fatalf("Run() = %q, %v; want the three hops", res.Text, err)
	}
	retries := log.of(agent.EventRetry)
	if len(retries) != 2 || retries[0].Hop != 2 || retries[1].Hop != 2 {
		t.Fatalf("retries %v, want two of hop 2", retries)
	}
	reqs := srv.Requests()
	tok := continuationTokenOf(t, reqs[2])
	if len(tok) == 0 || !bytes.Equal(continuationTokenOf(t, reqs[3]), tok) || !bytes.Equal(continuationTokenOf(t, reqs[4]), tok) {
		t.Errorf("the retries of hop 2 do not resend its token %q", tok)
	}
	if res.Turns[0].Attempts != 5 || res.Turns[0].Continuations != 2 {
		t.Errorf("turn: %d attempts, %d continuations; want 5 and 2", res.Turns[0].Attempts, res.Turns[0].Continuations)
	}
}

// continuationTokenOf returns the token a recorded request sent.
func continuationTokenOf(t *testing.T, req *fake.Request) []byte {
	t.Helper()
	var body struct {
		ContinuationToken []byte `json:"continuationToken"`
	}
	if err := json.Unmarshal(req.Body, &body); err != nil {
		t.Fatalf("request body: %v", err)
	}
	return body.ContinuationToken
}

// A server that never stops cutting the answer is asked at most
// MaxContinuations more times. Before, genai's continuation had no bound:
// such a server was asked until the context ended (66,828 requests in 20
// seconds, every one billable).
func TestLongAnswerBounded(t *testing.T) {
	for _, tc := range []struct {
		name     string
		reply    func() *fake.Reply
		max      int
		requests int
		why      string
	}{
		{"new token every hop", func() *fake.Reply { return fake.Text("more ").WithContinuation() }, 0, agent.DefaultMaxContinuations + 1, "Config.MaxContinuations (16)"},
		{"own limit", func() *fake.Reply { return fake.Text("more ").WithContinuation() }, 3, 4, "Config.MaxContinuations (3)"},
		{"the same token again and again", func() *fake.Reply { return fake.Text("more ").WithContinuationToken([]byte("same")) }, 0, 2, "a continuation token it had sent before"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, stream := range []bool{false, true} {
				srv := newServer(t)
				srv.SetReplyFunc(func(*fake.Request) *fake.Reply { return tc.reply() })
				a := newAgent(t, srv, nil, func(c *agent.Config) { c.MaxContinuations = tc.max })
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
				res, err := runCtx(ctx, a, stream, user("go"), nil)
				cancel()
				var stop *agent.StopError
				if !errors.Is(err, agent.ErrContinuation) || !errors.As(err, &stop) || !strings.Contains(stop.Message, tc.why) {
					t.Fatalf("stream %t: error %v, want ErrContinuation saying %q", stream, err, tc.why)
				}
				if n := len(srv.Requests()); n != tc.requests {
					t.Errorf("stream %t: %d requests, want %d", stream, n, tc.requests)
				}
				if want := strings.Repeat("more ", tc.requests); res.Text != want || len(res.History) != 2 {
					t.Errorf("stream %t: text %q, %d contents; want the cut answer %q in the history", stream, res.Text, len(res.History), want)
				}
			}
		})
	}
}

// runCtx runs a under ctx, or streams it, collecting the streamed text in
// out when it is not nil.
func runCtx(ctx context.Context, a *agent.Agent, stream bool, contents []*genai.Content, out *strings.Builder) (*agent.Result, error) {
	if !stream {
		return a.Run(ctx, contents)
	}
	var res *agent.Result
	var err error
	for ev, e := range a.Stream(ctx, contents) {
		switch ev.Kind {
		case agent.EventText:
			if out != nil {
				out.WriteString(ev.Text)
			}
		case agent.EventDone:
			res, err = ev.Result, e
		}
	}
	return res, err
}

// CONTINUATION without a token is a cut answer, never a whole one. Before,
// check() took it for a complete answer when it had content.
func TestContinuationWithoutTokenIsCut(t *testing.T) {
	for _, stream := range []bool{false, true} {
		srv := newServer(t)
		a := newAgent(t, srv, nil)
		srv.Enqueue(fake.Text("half an ans").WithFinishReason(genai.FinishReasonContinuation, ""))
		res, err := runStreaming(a, stream, user("go"), nil)
		var stop *agent.StopError
		if !errors.Is(err, agent.ErrContinuation) || !errors.As(err, &stop) || stop.Message != "the API sent no continuation token" {
			t.Errorf("stream %t: error %v, want ErrContinuation for the missing token", stream, err)
		}
		if res.Text != "half an ans" || res.FinishReason != genai.FinishReasonContinuation || len(res.History) != 2 {
			t.Errorf("stream %t: Result %q %s, %d contents; want the cut answer kept", stream, res.Text, res.FinishReason, len(res.History))
		}
	}
}

// A stream cut after a checkpoint resumes from it: the text already
// yielded is yielded once, the merged content holds it once, and the
// resumed request sends the checkpoint's token.
func TestStreamResumesFromCheckpoint(t *testing.T) {
	srv := newServer(t)
	log := &eventLog{}
	a := newAgent(t, srv, nil, func(c *agent.Config) { c.Observer = log })
	text := "The quick brown fox jumps over the lazy dog."
	srv.Enqueue(fake.Text(text).WithTextChunk(5).WithCheckpoints(1).WithFault(fake.FaultCutStream, 3))
	var got strings.Builder
	res, err := runStreaming(a, true, user("go"), &got)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if got.String() != text || res.Text != text || len(res.History[1].Parts) != 2 {
		t.Errorf("yielded %q, result %q in %d parts; want %q once", got.String(), res.Text, len(res.History[1].Parts), text)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || len(continuationTokenOf(t, reqs[1])) == 0 {
		t.Fatalf("%d requests; want the cut one and its resumption from the checkpoint", len(reqs))
	}
	if r := log.of(agent.EventRetry); len(r) != 1 || r[0].Hop != 0 || !strings.Contains(r[0].Err.Error(), "unexpected EOF") {
		t.Errorf("retries %v, want the cut reported", r)
	}
}

// Text yielded after the newest checkpoint cannot be taken back: a stream
// cut then is not resumed, which would show it twice.
func TestStreamCutPastCheckpointIsNotResumed(t *testing.T) {
	srv := newServer(t)
	a := newAgent(t, srv, nil)
	srv.Enqueue(fake.Text("The quick brown fox jumps.").WithTextChunk(5).WithCheckpoints(2).WithFault(fake.FaultCutStream, 3))
	var got strings.Builder
	_, err := runStreaming(a, true, user("go"), &got)
	var me *agent.ModelError
	if !errors.As(err, &me) || len(srv.Requests()) != 1 {
		t.Errorf("error %v after %d requests; want the turn's ModelError, not replayed", err, len(srv.Requests()))
	}
	if got.String() != "The quick brown" {
		t.Errorf("yielded %q", got.String())
	}
}

// A caller who sets AutomaticContinuation gets it: true lets genai
// continue (unbounded, as genai documents) and the loop still reads the
// first hop's prompt size; false continues nothing.
func TestAutomaticContinuationAsAsked(t *testing.T) {
	on, off := true, false
	t.Run("true", func(t *testing.T) {
		srv := newServer(t)
		rec := &hopRecorder{}
		a := newAgent(t, srv, toolset.MustNew((&weatherTool{}).tool()), func(c *agent.Config) {
			c.GenerateConfig = &genai.GenerateContentConfig{AutomaticContinuation: &on}
			c.Observer, c.PrepareHistory = rec, rec.prepare
		})
		longScript(srv, false)
		res, err := a.Run(context.Background(), user("go"))
		if err != nil || len(srv.Requests()) != 4 {
			t.Fatalf("Run: %v after %d requests", err, len(srv.Requests()))
		}
		if n := len(rec.of(agent.EventHop)); n != 0 || res.Turns[0].Continuations != 0 {
			t.Errorf("%d EventHop: the loop continued an answer genai continues", n)
		}
		if rec.prompts[1] >= res.Turns[0].Usage.PromptTokens {
			t.Errorf("HistoryFunc read %d, the summed %d: want genai's InitialPromptTokenCount", rec.prompts[1], res.Turns[0].Usage.PromptTokens)
		}
	})
	t.Run("false", func(t *testing.T) {
		srv := newServer(t)
		a := newAgent(t, srv, nil, func(c *agent.Config) {
			c.GenerateConfig = &genai.GenerateContentConfig{AutomaticContinuation: &off}
		})
		srv.Enqueue(fake.Text("cut").WithContinuation())
		_, err := a.Run(context.Background(), user("go"))
		var stop *agent.StopError
		if !errors.As(err, &stop) || stop.Kind != agent.ErrContinuation || !strings.Contains(stop.Message, "AutomaticContinuation is false") || len(srv.Requests()) != 1 {
			t.Errorf("error %v after %d requests, want ErrContinuation at once", err, len(srv.Requests()))
		}
	})
	t.Run("MaxContinuations negative", func(t *testing.T) {
		srv := newServer(t)
		a := newAgent(t, srv, nil, func(c *agent.Config) { c.MaxContinuations = -1 })
		srv.Enqueue(fake.Text("cut").WithContinuation())
		_, err := a.Run(context.Background(), user("go"))
		if !errors.Is(err, agent.ErrContinuation) || len(srv.Requests()) != 1 {
			t.Errorf("error %v after %d requests, want ErrContinuation at once", err, len(srv.Requests()))
		}
	})
}

// A continuation token in the config would go with every request of a
// run: New refuses it.
func TestContinuationTokenInConfigRefused(t *testing.T) {
	srv := newServer(t)
	_, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model,
		GenerateConfig: &genai.GenerateContentConfig{ContinuationToken: []byte("t")}})
	if err == nil || !strings.Contains(err.Error(), "ContinuationToken") {
		t.Errorf("New() = %v, want the token refused", err)
	}
}

// Turn.Attempts counts every model call of the turn, continuation hops
// included, whatever comes after them: here an answer of two hops that
// ends malformed is asked again, and the second answer takes two hops
// too. Every request is a model call of its own, numbered in its
// EventModelRequest, and the count is what eval's ModelCalls and the
// traces read. Before, the re-ask reset the count to the loop's own
// attempt number, dropping the first answer's hops: 3 attempts for 4
// calls, and two requests numbered 2.
func TestAttemptsCountHopsBeforeReask(t *testing.T) {
	srv := newServer(t)
	log := &eventLog{}
	a := newAgent(t, srv, nil, func(c *agent.Config) { c.Observer = log })
	srv.Enqueue(fake.Hops(fake.Text("Part one. "), fake.Finish(genai.FinishReasonMalformedFunctionCall))...)
	srv.Enqueue(fake.Hops(fake.Text("Asked again. "), fake.Text("Done."))...)
	res, err := a.Run(context.Background(), user("go"))
	if err != nil || res.Text != "Asked again. Done." {
		t.Fatalf("Run() = %q, %v; want the second answer", res.Text, err)
	}
	calls := len(srv.Requests())
	if calls != 4 {
		t.Fatalf("%d requests, want 2 hops, a re-ask and its 2 hops", calls)
	}
	if tn := res.Turns[0]; tn.Attempts != calls || tn.Continuations != 1 {
		t.Errorf("turn 0: %d attempts, %d continuations; want %d (every request) and 1", tn.Attempts, tn.Continuations, calls)
	}
	var numbers []int
	for _, e := range log.of(agent.EventModelRequest) {
		numbers = append(numbers, e.Attempt)
	}
	if want := []int{1, 2, 3, 4}; !slices.Equal(numbers, want) {
		t.Errorf("EventModelRequest attempts %v, want %v", numbers, want)
	}
	if r := log.of(agent.EventRetry); len(r) != 1 || r[0].Attempt != 2 {
		for _, e := range r {
			t.Errorf("retry after attempt %d (%v)", e.Attempt, e.Err)
		}
		t.Errorf("%d retries, want the re-ask after attempt 2", len(r))
	}
}

// An answer the loop continued and that then stops the run (here for
// safety) reports every call made in its StopError. Before, it reported
// the first hop's only.
func TestStopAfterHopsCountsAttempts(t *testing.T) {
	srv := newServer(t)
	a := newAgent(t, srv, nil)
	srv.Enqueue(fake.Hops(fake.Text("Part one. "), fake.Text("Part two. "), fake.Finish(genai.FinishReasonSafety))...)
	res, err := a.Run(context.Background(), user("go"))
	var stop *agent.StopError
	if !errors.As(err, &stop) || !errors.Is(err, agent.ErrUnsafe) {
		t.Fatalf("Run() error %v, want ErrUnsafe", err)
	}
	if stop.Attempts != 3 || res.Turns[0].Attempts != 3 {
		t.Errorf("StopError.Attempts %d, Turn.Attempts %d; want the 3 requests made", stop.Attempts, res.Turns[0].Attempts)
	}
}

// With Stream, an answer whose text was yielded is never asked again, the
// text of a later hop included: here the first hop has no content and the
// second yields its text, then ends malformed. Before, only the first
// hop's call counted as streamed: the turn was asked again and the
// consumer saw the refused answer's text, then the new one's.
func TestStreamedHopNotAskedAgain(t *testing.T) {
	srv := newServer(t)
	a := newAgent(t, srv, nil)
	srv.Enqueue(fake.Hops(fake.Finish(""), fake.Text("Shown. ").WithFinishReason(genai.FinishReasonMalformedFunctionCall, ""))...)
	srv.Enqueue(fake.Text("Never asked for."))
	var got strings.Builder
	_, err := runStreaming(a, true, user("go"), &got)
	if !errors.Is(err, agent.ErrMalformedCall) || len(srv.Requests()) != 2 {
		t.Errorf("error %v after %d requests; want ErrMalformedCall after the 2 hops, not asked again", err, len(srv.Requests()))
	}
	if got.String() != "Shown. " {
		t.Errorf("yielded %q, want the second hop's text only", got.String())
	}
}
