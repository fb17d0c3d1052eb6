package geminitest_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/toolnexus/toolnexus-go/geminitest"
	"google.golang.org/genai"
)

// recorder is a testing.TB that records failures and cleanups instead of
// acting on them, to test the helpers that report to a test.
type recorder struct {
	testing.TB
	mu       sync.Mutex
	errors   []string
	logs     int
	cleanups []func()
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Logf(string, ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs++
}

func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }

// end runs the cleanups as the end of a test would, last first.
func (r *recorder) end() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

func user(text string) []*genai.Content {
	return []*genai.Content{genai.NewContentFromText(text, genai.RoleUser)}
}

func TestStartReportsRejectionsAndCloses(t *testing.T) {
	rec := &recorder{TB: t}
	srv := geminitest.Start(rec)
	srv.Enqueue(geminitest.Text("hi"))
	ctx := context.Background()
	if _, err := srv.Client().Models.GenerateContent(ctx, "gemini-2.5-flash", user("hello"), nil); err != nil {
		t.Fatal(err)
	}
	// tools:[{}], which the API refuses.
	cfg := &genai.GenerateContentConfig{Tools: []*genai.Tool{{}}}
	if _, err := srv.Client().Models.GenerateContent(ctx, "gemini-2.5-flash", user("hello"), cfg); err == nil {
		t.Fatal("a request with tools:[{}] was accepted")
	}
	rec.end()
	if len(rec.errors) != 1 || !strings.Contains(rec.errors[0], "request #2 broke the protocol (rule tool-type)") {
		t.Errorf("errors reported = %q; want one naming request #2 and rule tool-type", rec.errors)
	}
	if rec.logs != 2 {
		t.Errorf("%d lines logged; want one per request", rec.logs)
	}
	if _, err := srv.Client().Models.GenerateContent(ctx, "gemini-2.5-flash", user("hello"), nil); err == nil {
		t.Error("the server still answers after the test ended")
	}
}

func TestStartQuietWhenAllIsWell(t *testing.T) {
	rec := &recorder{TB: t}
	srv := geminitest.Start(rec)
	srv.Enqueue(geminitest.Text("hi"), geminitest.Text("unused"))
	if _, err := srv.Client().Models.GenerateContent(context.Background(), "gemini-2.5-flash", user("hello"), nil); err != nil {
		t.Fatal(err)
	}
	rec.end()
	if len(rec.errors) != 0 {
		t.Errorf("errors reported = %q; want none (unused replies are AssertComplete's to report)", rec.errors)
	}
}

func TestAssertComplete(t *testing.T) {
	srv := geminitest.Start(t)
	ctx := context.Background()
	c := srv.Client()

	rec := &recorder{TB: t}
	srv.AssertComplete(rec)
	if len(rec.errors) != 0 {
		t.Errorf("a fresh server: %q; want complete", rec.errors)
	}

	srv.Enqueue(geminitest.Text("one"), geminitest.Text("never asked for"))
	if _, err := c.Models.GenerateContent(ctx, "gemini-2.5-flash", user("1"), nil); err != nil {
		t.Fatal(err)
	}
	rec = &recorder{TB: t}
	srv.AssertComplete(rec)
	if len(rec.errors) != 1 || !strings.Contains(rec.errors[0], "1 scripted replies were never requested") {
		t.Errorf("a reply left: %q; want it reported", rec.errors)
	}

	if _, err := c.Models.GenerateContent(ctx, "gemini-2.5-flash", user("2"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Models.GenerateContent(ctx, "gemini-2.5-flash", user("3"), nil); err == nil {
		t.Fatal("an unscripted request succeeded")
	}
	rec = &recorder{TB: t}
	srv.AssertComplete(rec)
	if len(rec.errors) != 1 || !strings.Contains(rec.errors[0], "request #3 (generateContent gemini-2.5-flash) found no scripted reply") {
		t.Errorf("an unscripted request: %q; want it reported", rec.errors)
	}
}

// The request helpers find calls, responses and declarations by name.
func TestRequestHelpers(t *testing.T) {
	srv := geminitest.Start(t)
	srv.Enqueue(geminitest.Text("ok"))
	history := []*genai.Content{
		genai.NewContentFromText("Weather and time?", genai.RoleUser),
		{Role: genai.RoleModel, Parts: []*genai.Part{
			{FunctionCall: geminitest.Call("get_weather", map[string]any{"city": "Paris"})},
			{FunctionCall: geminitest.Call("get_time", nil)}}},
		{Role: genai.RoleUser, Parts: []*genai.Part{
			genai.NewPartFromFunctionResponse("get_weather", map[string]any{"result": "sunny"}),
			genai.NewPartFromFunctionResponse("get_time", map[string]any{"result": "noon"})}},
	}
	cfg := &genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{
		{Name: "get_weather", Description: "weather"}, {Name: "get_time", Description: "time"}}}}}
	if _, err := srv.Client().Models.GenerateContent(context.Background(), "gemini-2.5-flash", history, cfg); err != nil {
		t.Fatal(err)
	}
	req := srv.LastRequest()
	if got := req.FunctionCalls("get_weather"); len(got) != 1 || got[0].Args["city"] != "Paris" {
		t.Errorf("FunctionCalls(get_weather) = %+v", got)
	}
	if got := req.FunctionCalls(""); len(got) != 2 {
		t.Errorf("FunctionCalls(\"\") = %d calls; want 2", len(got))
	}
	if got := req.LastFunctionResponses("get_time"); len(got) != 1 || got[0].Response["result"] != "noon" {
		t.Errorf("LastFunctionResponses(get_time) = %+v", got)
	}
	if got := req.FunctionResponses(""); len(got) != 2 {
		t.Errorf("FunctionResponses(\"\") = %d; want 2", len(got))
	}
	if d := req.FunctionDeclaration("get_time"); d == nil || d.Description != "time" {
		t.Errorf("FunctionDeclaration(get_time) = %+v", d)
	}
	if d := req.FunctionDeclaration("nope"); d != nil {
		t.Errorf("FunctionDeclaration(nope) = %+v; want nil", d)
	}
	if req.Text() != "" {
		t.Errorf("Text() of a request ending with function responses = %q; want empty", req.Text())
	}
}
