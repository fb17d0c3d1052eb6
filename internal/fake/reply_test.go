package fake_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

func TestErrorStatuses(t *testing.T) {
	srv := newServer(t)
	c := srv.Client()
	for _, tc := range []struct {
		code   int
		status string
	}{
		{400, "INVALID_ARGUMENT"}, {401, "UNAUTHENTICATED"}, {403, "PERMISSION_DENIED"}, {404, "NOT_FOUND"},
		{408, "DEADLINE_EXCEEDED"}, {429, "RESOURCE_EXHAUSTED"}, {499, "CANCELLED"}, {500, "INTERNAL"},
		{502, "UNAVAILABLE"}, {503, "UNAVAILABLE"}, {504, "DEADLINE_EXCEEDED"},
	} {
		srv.Enqueue(fake.Error(tc.code, "boom"))
		_, err := c.Models.GenerateContent(context.Background(), model, []*genai.Content{user("hi")}, nil)
		want := genai.APIError{Code: tc.code, Status: tc.status, Message: "boom"}
		if diff := cmp.Diff(want, asAPIError(t, err)); diff != "" {
			t.Errorf("Error(%d) (-want +got):\n%s", tc.code, diff)
		}
	}
}

func TestRateLimited(t *testing.T) {
	srv := newServer(t)
	c := srv.Client()
	for _, tc := range []struct {
		delay time.Duration
		want  string
	}{{1500 * time.Millisecond, "1.500s"}, {37 * time.Second, "37s"}, {time.Microsecond, "0.000001s"}} {
		for _, streaming := range []bool{false, true} {
			srv.Enqueue(fake.RateLimited(tc.delay))
			var err error
			if streaming {
				_, err = stream(context.Background(), c, model, []*genai.Content{user("hi")}, nil)
			} else {
				_, err = c.Models.GenerateContent(context.Background(), model, []*genai.Content{user("hi")}, nil)
			}
			ae := asAPIError(t, err)
			if ae.Code != http.StatusTooManyRequests || ae.Status != "RESOURCE_EXHAUSTED" || ae.Message != fake.RateLimitMessage {
				t.Errorf("RateLimited error = %+v; want 429 RESOURCE_EXHAUSTED", ae)
			}
			var types []string
			var delay any
			for _, d := range ae.Details {
				types = append(types, d["@type"].(string))
				if d["@type"] == "type.googleapis.com/google.rpc.RetryInfo" {
					delay = d["retryDelay"]
				}
			}
			wantTypes := []string{"type.googleapis.com/google.rpc.QuotaFailure", "type.googleapis.com/google.rpc.Help", "type.googleapis.com/google.rpc.RetryInfo"}
			if !cmp.Equal(types, wantTypes) || delay != tc.want {
				t.Errorf("RateLimited(%v) (stream %t): details %v with retryDelay %v; want %v with %q", tc.delay, streaming, types, delay, wantTypes, tc.want)
			}
		}
	}
}

func TestErrorDetailsAndRetryDelay(t *testing.T) {
	srv := newServer(t)
	srv.Enqueue(&fake.Reply{Err: &fake.APIError{Code: 503, Message: "The model is overloaded.",
		Details: []map[string]any{{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "X"}}, RetryDelay: 2 * time.Millisecond}})
	_, err := srv.Client().Models.GenerateContent(context.Background(), model, []*genai.Content{user("hi")}, nil)
	want := genai.APIError{Code: 503, Status: "UNAVAILABLE", Message: "The model is overloaded.", Details: []map[string]any{
		{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "X"},
		{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "0.002s"},
	}}
	if diff := cmp.Diff(want, asAPIError(t, err)); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
}

func TestSDKRetriesConsumeReplies(t *testing.T) {
	srv := newServer(t)
	cfg := srv.ClientConfig()
	zero, two := 0.0, int32(2)
	cfg.HTTPOptions.RetryOptions = &genai.HTTPRetryOptions{Attempts: &two, InitialDelay: &zero, Jitter: &zero}
	c, err := genai.NewClient(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(fake.Error(503, "overloaded"), fake.Text("ok"))
	resp, err := c.Models.GenerateContent(context.Background(), model, []*genai.Content{user("hi")}, nil)
	if err != nil || resp.Text() != "ok" {
		t.Fatalf("GenerateContent = %v, %v; want ok after one retry", resp, err)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests; want 2", n)
	}
}

func TestFinishReasons(t *testing.T) {
	srv := newServer(t)
	c := srv.Client()
	for _, tc := range []struct {
		reply  *fake.Reply
		reason genai.FinishReason
	}{
		{fake.Finish(genai.FinishReasonMalformedFunctionCall), genai.FinishReasonMalformedFunctionCall},
		{fake.Finish(genai.FinishReasonSafety), genai.FinishReasonSafety},
		{fake.Empty(), genai.FinishReasonStop},
	} {
		for _, streaming := range []bool{false, true} {
			srv.Enqueue(tc.reply)
			var resp *genai.GenerateContentResponse
			if streaming {
				chunks, err := stream(context.Background(), c, model, []*genai.Content{user("hi")}, nil)
				if err != nil || len(chunks) != 1 {
					t.Fatalf("stream = %d chunks, %v; want 1 chunk", len(chunks), err)
				}
				resp = chunks[0]
			} else {
				var err error
				if resp, err = c.Models.GenerateContent(context.Background(), model, []*genai.Content{user("hi")}, nil); err != nil {
					t.Fatal(err)
				}
			}
			if len(resp.Candidates) != 1 || resp.Candidates[0].FinishReason != tc.reason || resp.Text() != "" || resp.FunctionCalls() != nil {
				t.Errorf("%s (stream %t): candidates %+v; want one with finishReason %s and no content", tc.reason, streaming, resp.Candidates, tc.reason)
			}
			if resp.UsageMetadata == nil || resp.UsageMetadata.PromptTokenCount == 0 {
				t.Errorf("%s: usage %+v; want the prompt counted", tc.reason, resp.UsageMetadata)
			}
		}
	}
}

func TestBlocked(t *testing.T) {
	srv := newServer(t)
	c := srv.Client()
	srv.Enqueue(fake.Blocked(genai.BlockedReasonProhibitedContent), fake.Blocked(genai.BlockedReasonSafety))
	resp, err := c.Models.GenerateContent(context.Background(), model, []*genai.Content{user("hi")}, nil)
	if err != nil || len(resp.Candidates) != 0 || resp.PromptFeedback.BlockReason != genai.BlockedReasonProhibitedContent {
		t.Errorf("GenerateContent = %+v, %v; want no candidates and blockReason PROHIBITED_CONTENT", resp, err)
	}
	chunks, err := stream(context.Background(), c, model, []*genai.Content{user("hi")}, nil)
	if err != nil || len(chunks) != 1 || chunks[0].PromptFeedback.BlockReason != genai.BlockedReasonSafety {
		t.Errorf("stream = %+v, %v; want one chunk with blockReason SAFETY", chunks, err)
	}
}

func TestFaults(t *testing.T) {
	text := fake.Text("one two three four").WithTextChunk(4) // 5 events when streamed
	with := func(f func(r *fake.Reply)) *fake.Reply {
		r := *text
		f(&r)
		return &r
	}
	for _, tc := range []struct {
		name      string
		reply     *fake.Reply
		streaming bool
		chunks    int    // chunks yielded before the error
		want      string // in the error
		apiError  int    // the error is a genai.APIError with this code
	}{
		{name: "drop", reply: fake.Drop(), want: "EOF"},
		{name: "drop stream", reply: fake.Drop(), streaming: true, want: "EOF"},
		{name: "malformed", reply: fake.Malformed(), want: "deserializeUnaryResponse: error unmarshalling response"},
		{name: "malformed stream", reply: with(func(r *fake.Reply) { r.Fault, r.CutAfter = fake.FaultMalformedBody, 1 }), streaming: true,
			chunks: 1, want: "error unmarshalling data data: {not json"},
		{name: "cut before the first event", reply: with(func(r *fake.Reply) { r.Fault = fake.FaultCutStream }), streaming: true, want: "unexpected EOF"},
		{name: "cut after 2", reply: with(func(r *fake.Reply) { r.Fault, r.CutAfter = fake.FaultCutStream, 2 }), streaming: true, chunks: 2, want: "unexpected EOF"},
		{name: "cut after all", reply: with(func(r *fake.Reply) { r.Fault, r.CutAfter = fake.FaultCutStream, 99 }), streaming: true, chunks: 5, want: "unexpected EOF"},
		{name: "cut mid-event", reply: with(func(r *fake.Reply) { r.Fault, r.CutAfter = fake.FaultCutMidEvent, 1 }), streaming: true,
			chunks: 1, want: "unexpected end of JSON input"},
		{name: "cut unary", reply: with(func(r *fake.Reply) { r.Fault = fake.FaultCutStream }), want: "unexpected EOF"},
		{name: "stream error after 3", reply: with(func(r *fake.Reply) {
			r.StreamErr, r.CutAfter = &fake.APIError{Code: 503, Message: "The model is overloaded."}, 3
		}),
			streaming: true, chunks: 3, apiError: 503},
		{name: "stream error as unary", reply: fake.Text("x").WithStreamError(1, 500, "internal"), apiError: 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t)
			srv.Enqueue(tc.reply)
			c := srv.Client()
			var chunks []*genai.GenerateContentResponse
			var err error
			if tc.streaming {
				chunks, err = stream(context.Background(), c, model, []*genai.Content{user("hi")}, nil)
			} else {
				_, err = c.Models.GenerateContent(context.Background(), model, []*genai.Content{user("hi")}, nil)
			}
			if err == nil || len(chunks) != tc.chunks {
				t.Fatalf("got %d chunks, error %v; want %d chunks and an error", len(chunks), err, tc.chunks)
			}
			var ae genai.APIError
			if isAPIError := errors.As(err, &ae); isAPIError != (tc.apiError != 0) || isAPIError && ae.Code != tc.apiError {
				t.Errorf("error %v (%T); want APIError with code %d: %t", err, err, tc.apiError, tc.apiError != 0)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q; want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestChainedModifiers(t *testing.T) {
	r := fake.Text("x").WithDelay(time.Second).WithIDs().WithSignatures().WithTextChunk(2).WithTrailingSignature().WithFault(fake.FaultCutMidEvent, 3)
	if r.Delay != time.Second || !r.AddIDs || !r.AddSignatures || r.TextChunk != 2 || !r.TrailingSignature || r.Fault != fake.FaultCutMidEvent || r.CutAfter != 3 {
		t.Errorf("modifiers gave %+v", r)
	}
	if got := fake.FaultCutStream.String(); got != "FaultCutStream" {
		t.Errorf("FaultCutStream.String() = %q", got)
	}
}

// A raw Body scripts what genai types cannot say: here a functionCall
// whose args are a string, which the SDK refuses to decode.
func TestRawBody(t *testing.T) {
	srv := newServer(t)
	c := srv.Client()
	body := []byte(`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"f","args":"not an object"}}]},"finishReason":"STOP"}]}`)
	srv.Enqueue(&fake.Reply{Body: body}, &fake.Reply{Body: body})
	_, err := c.Models.GenerateContent(context.Background(), model, []*genai.Content{user("hi")}, nil)
	if err == nil || !strings.Contains(err.Error(), "cannot unmarshal string") {
		t.Errorf("unary raw body: err = %v, want the SDK's decoding error", err)
	}
	var got error
	for _, err := range c.Models.GenerateContentStream(context.Background(), model, []*genai.Content{user("hi")}, nil) {
		got = err
	}
	if got == nil || !strings.Contains(got.Error(), "cannot unmarshal string") {
		t.Errorf("stream raw body: err = %v, want the SDK's decoding error", got)
	}
}
