package agent_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/geminiinteractions"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// The loop's 2026 mechanisms on the Interactions API (package
// geminiinteractions): long answers the API cut (requires_continuation)
// continued by the loop, and built-in tools beside ours.

// onInteractions is an agent edit that runs it on the Interactions API.
func onInteractions(srv *fake.Server) func(*agent.Config) {
	return func(c *agent.Config) { c.Models = geminiinteractions.New(srv.Client(), geminiinteractions.Config{}) }
}

// creates returns the server's create requests.
func creates(srv *fake.Server) []*fake.Request {
	var out []*fake.Request
	for _, r := range srv.Requests() {
		if r.Method == fake.MethodCreateInteraction {
			out = append(out, r)
		}
	}
	return out
}

// A three-hop answer, unary and streamed: each hop continues the
// interaction that issued its token, with no input; the history holds one
// model content with every hop's parts; the next call continues the last
// hop with only the function results; the HistoryFunc reads the first
// hop's prompt size.
func TestInteractionsLongAnswerThreeHops(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "Run", true: "Stream"}[stream], func(t *testing.T) {
			srv := newServer(t)
			weather := &weatherTool{}
			rec := &hopRecorder{}
			a := newAgent(t, srv, toolset.MustNew(weather.tool()), onInteractions(srv), func(c *agent.Config) {
				c.Model, c.Observer, c.PrepareHistory = model3, rec, rec.prepare
			})
			hops := fake.Hops(fake.Text(longHops[0]), fake.Text(longHops[1]), fake.Calls(fake.Call("get_weather", map[string]any{"city": "Paris"})))
			if stream {
				for _, h := range hops {
					h.WithTextChunk(6)
				}
			}
			srv.Enqueue(hops...)
			srv.Enqueue(fake.Text("Sunny in Paris."))
			var texts strings.Builder
			res, err := runStreaming(a, stream, user("Tell me a long story, then the weather."), &texts)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			reqs := creates(srv)
			if len(reqs) != 4 || len(rec.of(agent.EventHop)) != 3 {
				t.Fatalf("%d requests, %d hops; want 3 hops and a turn", len(reqs), len(rec.of(agent.EventHop)))
			}
			for i, r := range reqs[1:3] {
				if r.PreviousInteractionID != reqs[i].InteractionID || len(r.Input) != 0 || !strings.Contains(string(r.Body), `"continuation_token"`) {
					t.Errorf("hop %d: previous %q, %d contents, body %s; want hop %d's id, no input, a token", i+1, r.PreviousInteractionID, len(r.Input), r.Body, i)
				}
			}
			if r := reqs[3]; r.PreviousInteractionID != reqs[2].InteractionID || len(r.Input) != 1 || len(r.LastFunctionResponses("get_weather")) != 1 {
				t.Errorf("the next call: previous %q, %d contents; want the last hop's id and the function results", r.PreviousInteractionID, len(r.Input))
			}
			var got []string
			for _, p := range res.History[1].Parts {
				switch {
				case p.Text != "" && !p.Thought:
					got = append(got, p.Text)
				case p.FunctionCall != nil:
					got = append(got, "call:"+p.FunctionCall.Name)
				}
			}
			if want := []string{longHops[0], longHops[1], "call:get_weather"}; !slices.Equal(got, want) {
				t.Errorf("model content = %q, want %q", got, want)
			}
			if res.Turns[0].Continuations != 2 || weather.calls.Load() != 1 || res.Text != "Sunny in Paris." {
				t.Errorf("turn 0: %d continuations, %d tool calls, text %q", res.Turns[0].Continuations, weather.calls.Load(), res.Text)
			}
			if stream && texts.String() != longHops[0]+longHops[1]+"Sunny in Paris." {
				t.Errorf("streamed text %q, want every hop's once", texts.String())
			}
			first := rec.of(agent.EventHop)[0].Response.UsageMetadata.PromptTokenCount
			if want := []int{0, int(first)}; !slices.Equal(rec.prompts, want) {
				t.Errorf("HistoryFunc read prompt sizes %v, want %v", rec.prompts, want)
			}
		})
	}
}

// Google Search beside two of our tools: declared beside them, its steps
// come back as toolCall and toolResponse parts, reported as server tool
// events and never run, and go back with the history; the answer's
// url_citation annotations are its grounding and citations.
func TestInteractionsGoogleSearchBesideTwoTools(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "Run", true: "Stream"}[stream], func(t *testing.T) {
			srv := newServer(t)
			w := &weatherTool{}
			log := &eventLog{}
			stateless := func(c *agent.Config) {
				c.Models = geminiinteractions.New(srv.Client(), geminiinteractions.Config{Stateless: true})
			}
			a := newAgent(t, srv, searchTools(w), stateless, func(c *agent.Config) {
				c.Model, c.Observer, c.BuiltinTools = model3, log, []*genai.Tool{googleSearch}
			})
			turn0 := append([]*genai.Part{{FunctionCall: fake.Call("calculator", map[string]any{"expression": "2+2"})}},
				fake.GoogleSearch("current weather in Tokyo")...)
			turn0 = append(turn0, &genai.Part{FunctionCall: fake.Call("get_weather", map[string]any{"city": "Tokyo"})})
			answer := "2 + 2 is 4, and Tokyo is sunny."
			citation := &genai.Citation{URI: "https://weather.example/tokyo", StartIndex: 16, EndIndex: 31}
			srv.Enqueue(fake.Parts(turn0...),
				fake.Text(answer).WithGrounding(fake.WebGrounding(answer, "https://weather.example/tokyo")).WithCitations(citation).WithTextChunk(8))
			res, err := runStreaming(a, stream, user("What is 2+2? And the weather in Tokyo?"), nil)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			reqs := creates(srv)
			if len(reqs) != 2 || !strings.Contains(string(reqs[0].Body), `{"type":"google_search"}`) || reqs[0].FunctionDeclaration("calculator") == nil {
				t.Fatalf("%d requests; the first declares %s", len(reqs), reqs[0].Body)
			}
			if len(reqs[1].Contents) != 3 {
				t.Fatalf("the second request carries %d contents: %s", len(reqs[1].Contents), reqs[1].Body)
			}
			// The history sent back (stateless: all of it) holds the search
			// steps as they came, between our calls.
			types := []string{}
			for _, p := range reqs[1].Contents[1].Parts {
				switch {
				case p.FunctionCall != nil:
					types = append(types, "call")
				case p.ToolCall != nil:
					types = append(types, "search_call")
				case p.ToolResponse != nil:
					types = append(types, "search_result")
				}
			}
			if want := []string{"call", "search_call", "search_result", "call"}; !slices.Equal(types, want) {
				t.Errorf("the model turn sent back: %v, want %v", types, want)
			}
			answers := responses(reqs[1].Contents[2])
			if len(answers) != 2 || answers[0].Response["result"] != "4" || w.calls.Load() != 1 {
				t.Errorf("function responses %s", toJSON(answers))
			}
			calls, results := log.of(agent.EventServerToolCall), log.of(agent.EventServerToolResult)
			if len(calls) != 1 || len(results) != 1 || agent.ServerToolName(calls[0].Part) != "google_search" ||
				agent.ServerToolID(results[0].Part) != agent.ServerToolID(calls[0].Part) {
				t.Errorf("server tool events %v %v", calls, results)
			}
			if res.Text != answer {
				t.Errorf("Text %q", res.Text)
			}
			// The answer's grounding and citations: its text's annotations.
			if g := res.Grounding; g == nil || len(g.GroundingChunks) != 1 || g.GroundingChunks[0].Web.URI != citation.URI || len(g.GroundingSupports) != 2 {
				t.Errorf("Result.Grounding = %s", toJSON(res.Grounding))
			}
			if !slices.ContainsFunc(res.Citations, func(c *genai.Citation) bool {
				return c.URI == citation.URI && c.StartIndex == 16 && c.EndIndex == 31
			}) {
				t.Errorf("Result.Citations = %s", toJSON(res.Citations))
			}
		})
	}
}

// The loop owns continuation on the Interactions API too: genai's
// Interactions SDK continues nothing, and the agent's bound holds.
func TestInteractionsContinuationBounded(t *testing.T) {
	srv := newServer(t)
	a := newAgent(t, srv, nil, onInteractions(srv), func(c *agent.Config) { c.Model, c.MaxContinuations = model3, 2 })
	srv.Enqueue(fake.Hops(fake.Text("one "), fake.Text("two "), fake.Text("three "), fake.Text("four"))...)
	res, err := a.Run(context.Background(), user("Count."))
	if err == nil || len(creates(srv)) != 3 {
		t.Fatalf("Run() = %q, %v after %d requests; want the cut answer after 3", res.Text, err, len(creates(srv)))
	}
	if res.Text != "one two three " {
		t.Errorf("Text %q; want the three hops made", res.Text)
	}
}

// A stream cut right after a checkpoint (an interaction.status_update
// with a continuation token) is resumed by the loop from that token, when
// geminiinteractions does not resume it itself (without store, or with its
// resuming off): the text once, the second request a continuation from the
// checkpoint.
func TestInteractionsStreamResumesFromCheckpoint(t *testing.T) {
	for name, cfg := range map[string]geminiinteractions.Config{
		"stateless":   {Stateless: true},
		"resumes off": {StreamResumes: -1},
	} {
		t.Run(name, func(t *testing.T) {
			srv := newServer(t)
			a := newAgent(t, srv, nil, func(c *agent.Config) { c.Models = geminiinteractions.New(srv.Client(), cfg) })
			text := "The quick brown fox jumps over the lazy dog."
			// created, step.start, "The q", its checkpoint: cut.
			srv.Enqueue(fake.Text(text).WithTextChunk(5).WithCheckpoints(1).WithFault(fake.FaultCutStream, 4))
			var got strings.Builder
			res, err := runStreaming(a, true, user("go"), &got)
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if got.String() != text || res.Text != text {
				t.Errorf("yielded %q, result %q; want %q once", got.String(), res.Text, text)
			}
			reqs := creates(srv)
			if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), `"continuation_token":"fake-checkpoint-`) {
				t.Fatalf("%d requests; want the cut one and its continuation from the checkpoint", len(reqs))
			}
			if r := reqs[1]; cfg.Stateless != (r.PreviousInteractionID == "") || cfg.Stateless != (len(r.Input) == 1) {
				t.Errorf("the continuation sent previous %q and %d contents", r.PreviousInteractionID, len(r.Input))
			}
		})
	}
}
