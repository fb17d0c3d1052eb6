package eval_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/eval"
	"github.com/toolnexus/toolnexus-go/geminitest"
	"google.golang.org/genai"
)

// counter counts calls by key, safely.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) next(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[key]++
	return c.n[key]
}

// runJudged runs the weather set with one judged metric on srv.
func runJudged(t *testing.T, srv *geminitest.Server, m eval.Metric, set *eval.Set) *eval.Report {
	t.Helper()
	rep, err := eval.Evaluate(context.Background(), set, eval.Options{Agent: weatherAgent(t, srv), Metrics: []eval.Metric{m}})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// The response-match judge sees the user's message, the agent's answer and
// the reference; its samples' majority decides each turn, a tie is
// invalid, and its usage is counted apart from the agent's.
func TestFinalResponseMatch(t *testing.T) {
	srv := geminitest.Start(t)
	var samples counter
	srv.SetReplyFunc(models(func(req *geminitest.Request) *geminitest.Reply {
		if !isJudge(req, matchJudge) {
			return nil
		}
		prompt := req.Text()
		n := samples.next(between(prompt, "user_message"))
		switch between(prompt, "user_message") {
		case "What is the weather in Paris?": // valid, invalid, valid: valid
			return jsonText(map[string]any{"reasoning": "sample " + string(rune('0'+n)), "is_the_agent_response_valid": n != 2})
		case "Thanks!": // valid, invalid: a tie, invalid
			return jsonText(map[string]any{"reasoning": "tie", "is_the_agent_response_valid": n == 1})
		}
		// Oslo: the answer names another city than the reference.
		valid := strings.Contains(between(prompt, "agent_answer"), "Bergen")
		return jsonText(map[string]any{"reasoning": "the reference says Bergen", "is_the_agent_response_valid": valid})
	}))
	judge := &eval.Judge{Models: srv.Client().Models, Model: "gemini-3-flash-preview", Samples: 3}
	set := weatherSet()
	set.Cases[0].Turns[1].WithResponse("You are welcome.")
	rep := runJudged(t, srv, eval.FinalResponseMatch{Judge: judge, Threshold: 0.5}, set)

	paris := rep.Cases[0].Runs[0].Scores[0]
	if len(paris.Turns) != 2 || paris.Turns[0].Value != 1 || paris.Turns[1].Value != 0 {
		t.Fatalf("paris turns = %+v; want valid (2 of 3), then invalid (a tie)", paris.Turns)
	}
	if !strings.HasPrefix(paris.Turns[0].Reason, "valid (2 of 3 samples): sample ") {
		t.Errorf("turn reason = %q", paris.Turns[0].Reason)
	}
	if paris.Value != 0.5 || paris.Status != eval.Passed {
		t.Errorf("paris = %v %v; want 0.5 (one valid turn of two), passed", paris.Value, paris.Status)
	}
	oslo := rep.Cases[1].Runs[0].Scores[0]
	if oslo.Value != 0 || oslo.Status != eval.Failed || !strings.Contains(oslo.Turns[0].Reason, "invalid (3 of 3 samples): the reference says Bergen") {
		t.Errorf("oslo = %+v", oslo)
	}
	// Each turn was judged 3 times, on the judge's model, apart from the
	// agent's calls.
	var judged, agentCalls int
	for _, r := range srv.Requests() {
		if isJudge(r, matchJudge) {
			judged++
			if r.Model != "gemini-3-flash-preview" || r.GenerationConfig == nil || r.GenerationConfig.ResponseMIMEType != "application/json" {
				t.Errorf("a judge request went to %s with %+v", r.Model, r.GenerationConfig)
			}
		} else {
			agentCalls++
		}
	}
	if judged != 9 || rep.JudgeCalls != 9 || rep.ModelCalls != agentCalls {
		t.Errorf("%d judge requests, report %d judge calls, %d agent calls (report %d); want 9, 9 and the agent's own", judged, rep.JudgeCalls, agentCalls, rep.ModelCalls)
	}
	if rep.JudgeUsage.TotalTokens == 0 || paris.Usage.TotalTokens == 0 {
		t.Errorf("judge usage %+v; want it counted", rep.JudgeUsage)
	}
	var agentTokens int
	for _, c := range rep.Cases {
		for _, run := range c.Runs {
			agentTokens += run.Usage.TotalTokens
		}
	}
	if rep.AgentUsage.TotalTokens != agentTokens {
		t.Errorf("agent usage %d; want the runs' own %d, the judge's left out", rep.AgentUsage.TotalTokens, agentTokens)
	}
}

// A judge that answers garbage, times out, refuses, or is absent gives no
// verdict: the turn, and the metric, are not evaluated, and say why.
func TestJudgeFailures(t *testing.T) {
	set := &eval.Set{ID: "s", Cases: []eval.Case{weatherSet().Cases[1]}}
	for _, tc := range []struct {
		name   string
		reply  func(*geminitest.Request) *geminitest.Reply
		judge  func(*geminitest.Server) *eval.Judge
		reason string
	}{
		{"garbage", func(*geminitest.Request) *geminitest.Reply { return geminitest.Text("Looks fine to me!") },
			nil, "the judge answered no verdict"},
		{"timeout", func(*geminitest.Request) *geminitest.Reply { return geminitest.Text("{}").WithDelay(time.Hour) },
			func(s *geminitest.Server) *eval.Judge {
				return &eval.Judge{Models: s.Client().Models, Samples: 2, Timeout: 20 * time.Millisecond}
			}, "the judge timed out (20ms)"},
		{"refusal", func(*geminitest.Request) *geminitest.Reply { return geminitest.Blocked(genai.BlockedReasonSafety) },
			nil, "the judge refused"},
		{"unknown model", func(*geminitest.Request) *geminitest.Reply {
			return geminitest.Error(404, "models/groq/llama-3.3-70b-versatile is not found for API version v1beta")
		}, nil, "the judge model failed"},
		{"no judge", nil, func(*geminitest.Server) *eval.Judge { return nil }, "needs a judge: set Options.Judge"},
		{"a judge of another provider", nil, func(s *geminitest.Server) *eval.Judge {
			return &eval.Judge{Models: s.Client().Models, Model: "groq/llama-3.3-70b-versatile"}
		}, `judge model "groq/llama-3.3-70b-versatile" is not a Gemini model`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := geminitest.Start(t)
			srv.SetReplyFunc(models(func(req *geminitest.Request) *geminitest.Reply {
				if tc.reply == nil {
					return nil
				}
				return tc.reply(req)
			}))
			judge := &eval.Judge{Models: srv.Client().Models, Samples: 2}
			if tc.judge != nil {
				judge = tc.judge(srv)
			}
			for _, m := range []eval.Metric{
				eval.FinalResponseMatch{Judge: judge, Threshold: 0.5},
				eval.ResponseQuality{Judge: judge, Threshold: 0.5, Rubrics: []eval.Rubric{{ID: "r", Text: "The answer names a city."}}},
			} {
				rep := runJudged(t, srv, m, set)
				s := rep.Cases[0].Runs[0].Scores[0]
				if s.Status != eval.NotEvaluated || !strings.Contains(s.Reason, tc.reason) {
					t.Errorf("%s: %v %q; want NotEvaluated saying %q", m.Name(), s.Status, s.Reason, tc.reason)
				}
				if len(s.Turns) != 1 || s.Turns[0].Status != eval.NotEvaluated {
					t.Errorf("%s: turns %+v; want one not evaluated", m.Name(), s.Turns)
				}
				if cm := rep.Cases[0].Metrics[0]; cm.Status != eval.NotEvaluated || cm.Reason == "" {
					t.Errorf("%s: case metric %+v; want not evaluated, with the reason", m.Name(), cm)
				}
			}
		})
	}
}

// Samples that give no verdict do not count: the others' majority decides.
func TestJudgeSomeSamplesFail(t *testing.T) {
	srv := geminitest.Start(t)
	var n counter
	srv.SetReplyFunc(models(func(req *geminitest.Request) *geminitest.Reply {
		if isJudge(req, matchJudge) && n.next("all")%2 == 1 {
			return geminitest.Error(400, "Request contains an invalid argument.")
		}
		return jsonText(map[string]any{"reasoning": "fine", "is_the_agent_response_valid": true})
	}))
	set := &eval.Set{ID: "s", Cases: []eval.Case{weatherSet().Cases[0]}}
	set.Cases[0].Turns = set.Cases[0].Turns[:1]
	rep := runJudged(t, srv, eval.FinalResponseMatch{Judge: &eval.Judge{Models: srv.Client().Models, Samples: 4}, Threshold: 1}, set)
	s := rep.Cases[0].Runs[0].Scores[0]
	if s.Value != 1 || s.Status != eval.Passed || !strings.Contains(s.Turns[0].Reason, "valid (2 of 4 samples)") {
		t.Errorf("score %+v; want valid by the 2 samples that answered", s)
	}
}

// Rubric judges grade each turn against the metric's rubrics and the
// case's and turn's of the metric's type, rubric by rubric by majority; a
// run scores the mean of every verdict.
func TestRubricMetrics(t *testing.T) {
	srv := geminitest.Start(t)
	var n counter
	var mu sync.Mutex
	prompts := map[string]string{}
	srv.SetReplyFunc(models(func(req *geminitest.Request) *geminitest.Reply {
		prompt := req.Text()
		kind := "response"
		if isJudge(req, toolUseJudge) {
			kind = "tools"
		}
		mu.Lock()
		prompts[kind] = prompt
		mu.Unlock()
		sample := n.next(kind + between(prompt, "user_message"))
		var verdicts []map[string]any
		for _, id := range propertyIDs(prompt) {
			holds := true
			switch id {
			case "names_city":
				holds = strings.Contains(between(prompt, "final_answer"), "Paris")
			case "polite": // no, yes, no: no
				holds = sample == 2
			case "one_call":
				holds = strings.Count(between(prompt, "tool_calls"), `"step"`) == 1
			}
			verdicts = append(verdicts, map[string]any{"property_id": id, "rationale": id + " checked", "holds": holds})
		}
		return jsonText(map[string]any{"verdicts": verdicts})
	}))
	judge := &eval.Judge{Models: srv.Client().Models, Samples: 3}
	set := &eval.Set{ID: "s", Cases: []eval.Case{{
		ID: "paris",
		Turns: []eval.Turn{
			eval.UserTurn("What is the weather in Paris?"),
			eval.UserTurn("And the weather in Rome and the weather in Oslo?"),
		},
		Rubrics: []eval.Rubric{
			{ID: "polite", Text: "The answer is polite.", Type: eval.RubricFinalResponse},
			{ID: "untyped", Text: "Left out: no type."},
			{ID: "one_call", Text: "The agent makes one call.", Type: eval.RubricToolUse},
		},
	}}}
	set.Cases[0].Turns[1].Rubrics = []eval.Rubric{{ID: "turn_only", Text: "The answer covers both cities.", Type: eval.RubricFinalResponse}}
	rubrics := []eval.Rubric{{ID: "names_city", Text: "The answer names Paris."}}
	rep, err := eval.Evaluate(context.Background(), set, eval.Options{Agent: weatherAgent(t, srv), Metrics: []eval.Metric{
		eval.ResponseQuality{Judge: judge, Threshold: 0.6, Rubrics: rubrics},
		eval.ToolUseQuality{Judge: judge, Threshold: 1},
	}})
	if err != nil {
		t.Fatal(err)
	}
	rq := rep.Cases[0].Runs[0].Scores[0]
	// Turn 1: names_city yes, polite no: 0.5. Turn 2: names_city no,
	// polite no, turn_only yes: 1/3. The run: 2 yes of 5 verdicts.
	if len(rq.Turns) != 2 || rq.Turns[0].Value != 0.5 || !near(rq.Turns[1].Value, 1.0/3) || !near(rq.Value, 0.4) || rq.Status != eval.Failed {
		t.Fatalf("response quality = %v (%v), turns %+v", rq.Value, rq.Status, rq.Turns)
	}
	if !strings.Contains(rq.Reason, "of another type than FINAL_RESPONSE_QUALITY, or of none, are left out, as ADK leaves them out: one_call, untyped") {
		t.Errorf("reason %q; want the untyped rubric's exclusion explained", rq.Reason)
	}
	if d := rq.Turns[0].Detail; !strings.Contains(d, `polite ("The answer is polite."): polite checked`) {
		t.Errorf("detail = %q", d)
	}
	want := map[string]float64{"names_city": 0.5, "polite": 0, "turn_only": 1}
	if len(rq.Rubrics) != 3 {
		t.Errorf("rubric scores = %+v", rq.Rubrics)
	}
	for _, r := range rq.Rubrics {
		if v, ok := want[r.ID]; !ok || r.Value != v {
			t.Errorf("rubric %s = %v, want %v", r.ID, r.Value, want[r.ID])
		}
	}
	tu := rep.Cases[0].Runs[0].Scores[1]
	if len(tu.Turns) != 2 || tu.Turns[0].Value != 1 || tu.Turns[1].Value != 0 || tu.Value != 0.5 {
		t.Errorf("tool use quality = %v, turns %+v; want one call, then two", tu.Value, tu.Turns)
	}
	// What the judges read.
	for _, want := range []string{"<developer_instructions>\nYou report the weather.", `"name": "get_weather"`,
		"<user_message>\nAnd the weather in Rome and the weather in Oslo?", `"city": "Oslo"`, "sunny in Oslo", "<final_answer>\nIt is sunny in Rome and sunny in Oslo.",
		"- id names_city: The answer names Paris.", "- id turn_only:"} {
		if !strings.Contains(prompts["response"], want) {
			t.Errorf("the response judge's prompt lacks %q:\n%s", want, prompts["response"])
		}
	}
	if p := prompts["tools"]; strings.Contains(p, "<final_answer>") || !strings.Contains(p, "- id one_call:") || strings.Contains(p, "polite") {
		t.Errorf("the tool-use judge's prompt:\n%s", p)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
