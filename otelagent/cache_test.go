package otelagent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// A run through an agent's context cache: each model call's span has the
// tokens read from the cache as gen_ai.usage.cache_read.input_tokens
// (semconv v1.41.0), and the run's span an event "cache" for the cache
// made.
func TestCachedTokens(t *testing.T) {
	srv, tel := newServer(t), newTelemetry(t)
	client := srv.Client()
	rules := genai.NewContentFromText(strings.Repeat("Answer in one short sentence. ", 200), genai.RoleUser)
	a, err := agent.New(agent.Config{Models: client.Models, Model: model, Tools: toolset.MustNew(weather),
		GenerateConfig: &genai.GenerateContentConfig{SystemInstruction: rules},
		Cache:          &agent.CachePolicy{Caches: client.Caches, TTL: time.Hour},
		Observer:       tel.observer(srv)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(context.Background())
	srv.Enqueue(fake.Calls(call("Paris")), fake.Text("Sunny."))
	res, err := a.Run(context.Background(), user("Weather in Paris?"))
	if err != nil {
		t.Fatal(err)
	}
	spans := tel.ended(t)
	var read int64
	for i, s := range named(spans, "generate_content "+model) {
		n, _ := attrs(s)["gen_ai.usage.cache_read.input_tokens"].(int64)
		if n <= 0 {
			t.Errorf("model call %d: gen_ai.usage.cache_read.input_tokens = %d; want the cached tokens", i, n)
		}
		read += n
	}
	if read != int64(res.Usage.CachedTokens) {
		t.Errorf("spans read %d cached tokens; Result.Usage.CachedTokens = %d", read, res.Usage.CachedTokens)
	}
	runSpan := spans[len(spans)-1]
	var events []string
	for _, ev := range runSpan.Events() {
		if ev.Name != "cache" {
			continue
		}
		for _, kv := range ev.Attributes {
			if kv.Key == "toolnexus.cache.action" {
				events = append(events, kv.Value.AsString())
			}
		}
	}
	if len(events) != 1 || events[0] != string(agent.CacheCreated) {
		t.Errorf("run span %q cache events = %v; want [created]", runSpan.Name(), events)
	}
}
