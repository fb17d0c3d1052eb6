package demoeval

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/internal/offline"
)

// Model answers a request as the offline stand-in for Gemini: the offline
// model for the agent (package offline's), an offline judge for the judged
// metrics and an offline user for scenarios, which it tells apart by the
// typed answer the request asks for (its response schema). Set it with
// geminitest's Server.SetReplyFunc.
func Model(req *fake.Request) *fake.Reply {
	switch verdict(req) {
	case "is_the_agent_response_valid":
		return judgeMatch(offline.Text(req.Contents[len(req.Contents)-1]))
	case "verdicts":
		return judgeRubrics(offline.Text(req.Contents[len(req.Contents)-1]))
	case "finished":
		return simulateUser(offline.Text(req.Contents[len(req.Contents)-1]))
	}
	calls, text := offline.Answer(req)
	if len(calls) > 0 {
		return fake.Calls(calls...)
	}
	return fake.Text(text)
}

// answers are the properties that tell the typed answers apart: the
// response-match judge's, the rubric judges', the simulated user's.
var answers = []string{"is_the_agent_response_valid", "verdicts", "finished"}

// verdict returns the property of answers a request's response schema
// has, or "" for a request that asks for no typed answer.
func verdict(req *fake.Request) string {
	if req.GenerationConfig == nil {
		return ""
	}
	if s := req.GenerationConfig.ResponseSchema; s != nil {
		for _, k := range answers {
			if _, ok := s.Properties[k]; ok {
				return k
			}
		}
	}
	if raw, err := json.Marshal(req.GenerationConfig.ResponseJsonSchema); err == nil {
		for _, k := range answers {
			if strings.Contains(string(raw), `"`+k+`"`) {
				return k
			}
		}
	}
	return ""
}

// between returns the text of a judge prompt's <tag> part.
func between(prompt, tag string) string {
	_, after, _ := strings.Cut(prompt, "<"+tag+">\n")
	inside, _, _ := strings.Cut(after, "\n</"+tag+">")
	return inside
}

// facts are the words of a text that an answer must repeat: its numbers,
// and its capitalized words but the first of each sentence.
var facts = regexp.MustCompile(`[0-9]+(?:[.:][0-9]+)*|(?:[^.!?\s]\s+)([A-Z][a-z]+)`)

// judgeMatch is the offline final_response_match_v2 judge: the agent's
// answer is valid when it repeats every number and every name of the
// reference answer.
func judgeMatch(prompt string) *fake.Reply {
	answer, reference := between(prompt, "agent_answer"), between(prompt, "reference_answer")
	var missing []string
	for _, m := range facts.FindAllStringSubmatch(reference, -1) {
		fact := m[0]
		if m[1] != "" {
			fact = m[1]
		}
		if !strings.Contains(strings.ToLower(answer), strings.ToLower(fact)) {
			missing = append(missing, fact)
		}
	}
	v := map[string]any{"reasoning": "The answer gives every figure and name of the reference.", "is_the_agent_response_valid": len(missing) == 0}
	if len(missing) > 0 {
		v["reasoning"] = "The answer lacks " + strings.Join(missing, ", ") + ", which the reference gives."
	}
	b, _ := json.Marshal(v)
	return fake.Text(string(b))
}

var quoted = regexp.MustCompile(`"([^"]+)"`)

// judgeRubrics is the offline rubric judge: a property holds when the
// final answer holds every phrase the property quotes ("made-up demo
// data"); a property that quotes nothing holds when there is a final
// answer.
func judgeRubrics(prompt string) *fake.Reply {
	answer := between(prompt, "final_answer")
	var verdicts []map[string]any
	for _, line := range strings.Split(between(prompt, "properties"), "\n") {
		rest, ok := strings.CutPrefix(line, "- id ")
		if !ok {
			continue
		}
		id, text, _ := strings.Cut(rest, ": ")
		holds, why := answer != "" && answer != "(none)", "The agent gave a final answer."
		for _, q := range quoted.FindAllStringSubmatch(text, -1) {
			if !strings.Contains(strings.ToLower(answer), strings.ToLower(q[1])) {
				holds, why = false, "The answer does not say \""+q[1]+"\"."
				break
			}
			why = "The answer says \"" + q[1] + "\"."
		}
		verdicts = append(verdicts, map[string]any{"property_id": id, "rationale": why, "holds": holds})
	}
	b, _ := json.Marshal(map[string]any{"verdicts": verdicts})
	return fake.Text(string(b))
}

// simulateUser is the offline simulated user of scenarios: after the
// starting prompt it asks what 2+2 is, and then it is done.
func simulateUser(prompt string) *fake.Reply {
	v := map[string]any{"finished": true, "message": ""}
	if strings.Count(between(prompt, "conversation"), "user: ") == 1 {
		v = map[string]any{"finished": false, "message": "And what is 2+2?"}
	}
	b, _ := json.Marshal(v)
	return fake.Text(string(b))
}
