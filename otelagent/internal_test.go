package otelagent

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// WithClient reads the backend and the server from a real genai client.
func TestWithClient(t *testing.T) {
	for _, tc := range []struct {
		name              string
		cc                genai.ClientConfig
		provider, address string
		port              int
	}{
		{"Gemini API", genai.ClientConfig{Backend: genai.BackendGeminiAPI, APIKey: "k"},
			"gcp.gemini", "generativelanguage.googleapis.com", 443},
		{"Vertex AI express", genai.ClientConfig{Backend: genai.BackendVertexAI, APIKey: "k"},
			"gcp.vertex_ai", "aiplatform.googleapis.com", 443},
		{"Vertex AI proxy", genai.ClientConfig{Backend: genai.BackendVertexAI, HTTPOptions: genai.HTTPOptions{BaseURL: "http://proxy.internal:8080/"}},
			"gcp.vertex_ai", "proxy.internal", 8080},
		{"Gemini API on loopback", genai.ClientConfig{Backend: genai.BackendGeminiAPI, APIKey: "k", HTTPOptions: genai.HTTPOptions{BaseURL: "http://127.0.0.1:4321"}},
			"gcp.gemini", "127.0.0.1", 4321},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, v := range []string{"GOOGLE_GEMINI_BASE_URL", "GOOGLE_VERTEX_BASE_URL", "GOOGLE_API_KEY", "GEMINI_API_KEY",
				"GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_CLOUD_REGION"} {
				t.Setenv(v, "")
			}
			client, err := genai.NewClient(context.Background(), &tc.cc)
			if err != nil {
				t.Fatal(err)
			}
			var c config
			WithClient(client)(&c)
			if c.provider.Value.AsString() != tc.provider || c.address != tc.address || c.port != tc.port {
				t.Errorf("WithClient: provider %s, server %s:%d; want %s, %s:%d",
					c.provider.Value.AsString(), c.address, c.port, tc.provider, tc.address, tc.port)
			}
		})
	}
}

func TestEndpointLocations(t *testing.T) {
	for _, tc := range []struct {
		backend genai.Backend
		url     string
		want    string
	}{
		{genai.BackendVertexAI, "https://us-central1-aiplatform.googleapis.com/", "gcp.vertex_ai us-central1-aiplatform.googleapis.com:443"},
		{genai.BackendEnterprise, "https://aiplatform.eu.rep.googleapis.com/", "gcp.vertex_ai aiplatform.eu.rep.googleapis.com:443"},
		{genai.BackendGeminiAPI, "", "gcp.gemini :0"},
		{genai.BackendGeminiAPI, "::not a url", "gcp.gemini :0"},
	} {
		p, a, port := endpoint(tc.backend, tc.url)
		if got := fmt.Sprintf("%s %s:%d", p.Value.AsString(), a, port); got != tc.want {
			t.Errorf("endpoint(%v, %q) = %s, want %s", tc.backend, tc.url, got, tc.want)
		}
	}
}

type typedErr struct{}

func (typedErr) Error() string     { return "typed" }
func (typedErr) ErrorType() string { return "my_type" }

func TestErrorType(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{&agent.ModelError{Err: genai.APIError{Code: 503}}, "503"},
		{fmt.Errorf("wrapped: %w", genai.APIError{Code: 429}), "429"},
		{agent.ErrStopped, "stopped"},
		{fmt.Errorf("agent: run stopped in turn 0: %w", context.Canceled), "canceled"},
		{context.DeadlineExceeded, "timeout"},
		{fmt.Errorf("%w after 1s", agent.ErrToolTimeout), "timeout"},
		{&agent.StopError{Kind: agent.ErrPromptBlocked}, "prompt_blocked"},
		{&agent.StopError{Kind: agent.ErrUnsafe}, "unsafe"},
		{&agent.StopError{Kind: agent.ErrMalformedCall}, "malformed_function_call"},
		{&agent.StopError{Kind: agent.ErrEmptyReply}, "empty_reply"},
		{&agent.StopError{Kind: agent.ErrMaxTokens}, "max_tokens"},
		{fmt.Errorf("%w (10)", agent.ErrMaxTurns), "max_turns"},
		{agent.ErrDenied, "denied"},
		{fmt.Errorf("%w %q", agent.ErrUnknownTool, "x"), "unknown_tool"},
		{agent.ErrTooManyCalls, "too_many_calls"},
		{fmt.Errorf("%w: /city", toolset.ErrInvalidArguments), "invalid_arguments"},
		{toolset.ErrOutputNotJSON, "output_not_json"},
		{&toolset.PanicError{Tool: "t", Value: "boom"}, "panic"},
		{fmt.Errorf("x: %w", typedErr{}), "my_type"},
		{errors.New("something else"), "_OTHER"},
	} {
		if got := errorType(tc.err); got != tc.want {
			t.Errorf("errorType(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

func TestFinishReason(t *testing.T) {
	for _, tc := range []struct {
		r     genai.FinishReason
		calls bool
		want  string
	}{
		{genai.FinishReasonStop, false, "stop"},
		{genai.FinishReasonStop, true, "tool_call"},
		{"", true, "tool_call"},
		{"", false, ""},
		{genai.FinishReasonMaxTokens, false, "length"},
		{genai.FinishReasonSafety, false, "content_filter"},
		{genai.FinishReasonRecitation, false, "content_filter"},
		{genai.FinishReasonMalformedFunctionCall, false, "error"},
		{genai.FinishReasonLanguage, false, "language"},
	} {
		if got := finishReason(tc.r, tc.calls); got != tc.want {
			t.Errorf("finishReason(%q, %v) = %q, want %q", tc.r, tc.calls, got, tc.want)
		}
	}
}
