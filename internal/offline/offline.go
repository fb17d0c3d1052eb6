// Package offline is the offline model of the examples and of the public
// package offline: it plays Gemini for the demo tools (get_weather,
// current_time, calculate, count_primes) behind internal/fake, so that the
// chat, the server, the eval example and a newcomer's first program work
// with no key and no network. It reads the conversation the way the real
// model would receive it, over HTTP through the real client and the agent
// loop, answers a question with real function calls, and turns the
// function responses into an answer.
package offline

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

// ModelName is the model the fake serves. Its gemini-3 prefix makes the
// fake behave like Gemini 3: call ids, thought signatures, and the check
// that signatures come back.
const ModelName = "gemini-3-offline-demo"

// Chunk and EventDelay make the offline answer stream in visible pieces.
const (
	Chunk      = 12
	EventDelay = 15 * time.Millisecond
)

// NewServer returns a fake Gemini server that answers as the offline
// model. Each of extra is asked first, in order, and answers a request
// when it returns a reply: an example's agents of its own (the chat's
// trip planner) answer so. It answers Live sessions too (see [ServeLive]),
// on [LiveModelName].
func NewServer(extra ...func(*fake.Request) *fake.Reply) *fake.Server {
	srv := fake.NewServer()
	ServeLive(srv)
	srv.SetReplyFunc(func(req *fake.Request) *fake.Reply {
		for _, f := range extra {
			if reply := f(req); reply != nil {
				return reply
			}
		}
		return Model(req)
	})
	return srv
}

// Model answers one request as the offline model: the calls or the text
// [Answer] gives, the text streamed in visible pieces.
func Model(req *fake.Request) *fake.Reply {
	calls, text := Answer(req)
	if len(calls) > 0 {
		return fake.Calls(calls...)
	}
	return Streamed(fake.Text(text))
}

// Streamed makes r stream its text in visible pieces, as the offline
// model's answers do.
func Streamed(r *fake.Reply) *fake.Reply {
	r.TextChunk, r.EventDelay = Chunk, EventDelay
	return r
}

// Help is the answer to a message the offline model does not understand.
const Help = "I am the offline demo model, so I only understand a few things: the weather in a city " +
	"(\"What's the weather in Paris and Tokyo?\"), the time in a time zone (\"what time is it in UTC\"), " +
	"arithmetic (\"what is (12+7)*3\") and primes (\"primes below 500 million?\"). Set GEMINI_API_KEY to chat with Gemini about anything."

// Answer returns the offline model's answer to a request: the function
// calls its last message asks for, bound to the tools the request declares
// (see [Bind]), or, for a follow-up ("And in Oslo?"), the calls that ask
// the conversation's last question about places again for the places it
// names (see [FollowUp]); or the call that hands it to an agent the
// message names (an agent tool: agent.AsTool's, a2aagent.RemoteTool's) or
// that answers such an agent's question; or, when the last content holds
// function responses, the text that sums them up; or, when it understands
// none of it, [Help].
func Answer(req *fake.Request) (calls []*genai.FunctionCall, text string) {
	if len(req.Contents) == 0 {
		return nil, "I did not get a message."
	}
	last := req.Contents[len(req.Contents)-1]
	if results := FunctionResponses(last); len(results) > 0 {
		return nil, Summarize(results)
	}
	question := Text(last)
	if call := direct(question, Declared(req)); call != nil {
		return []*genai.FunctionCall{call}, ""
	}
	if call := delegate(req, question); call != nil {
		return []*genai.FunctionCall{call}, ""
	}
	calls = Bind(Plan(question), Declared(req))
	if len(calls) == 0 {
		calls = Bind(FollowUp(req.Contents[:len(req.Contents)-1], question), Declared(req))
	}
	if len(calls) == 0 {
		return nil, Help
	}
	return calls, ""
}

var (
	weatherRE = regexp.MustCompile(`(?i)\b(weather|temperature|forecast|rain|sunny|hot|cold)\b`)
	timeRE    = regexp.MustCompile(`(?i)\b(time|clock|hour)\b`)
	// chartRE asks for a chart: weather_chart, of the places named.
	chartRE = regexp.MustCompile(`(?i)\b(chart|graph|plot)\b`)
	// exprRE finds an arithmetic expression: digits, operators, parentheses.
	exprRE = regexp.MustCompile(`[-+(]*\d[\d\s.+\-*/%()]*`)
	// placeRE finds the place after "in", "for" or "at".
	placeRE = regexp.MustCompile(`(?i)\b(?:in|for|at)\s+([^?!.]+)`)
	listRE  = regexp.MustCompile(`(?i),|\band\b|&`)
	zoneRE  = regexp.MustCompile(`\b([A-Z][A-Za-z_]+/[A-Za-z_/]+|UTC|GMT)\b`)
	// primesRE finds a count of primes below a number: "primes below
	// 500 million", "prime numbers under 1,000,000".
	primesRE = regexp.MustCompile(`(?i)\bprimes?\b[^?!.]*?\b(?:below|under|up to|less than|smaller than)\s+(\d[\d,_]*)(?:\s*(thousand|million|billion)\b)?`)
	// questionRE ends a list of places where another question starts:
	// "Paris and what is 2+2".
	questionRE = regexp.MustCompile(`(?i)\b(what|what's|whats|how|who|when|where|which|calculate|compute)\b`)
)

// cityZones maps a few cities to their IANA zones, for "time in Tokyo".
var cityZones = map[string]string{
	"paris": "Europe/Paris", "london": "Europe/London", "berlin": "Europe/Berlin", "madrid": "Europe/Madrid",
	"rome": "Europe/Rome", "tokyo": "Asia/Tokyo", "sydney": "Australia/Sydney", "new york": "America/New_York",
	"los angeles": "America/Los_Angeles", "chicago": "America/Chicago", "delhi": "Asia/Kolkata",
	"mumbai": "Asia/Kolkata", "beijing": "Asia/Shanghai", "singapore": "Asia/Singapore", "cairo": "Africa/Cairo",
	"sao paulo": "America/Sao_Paulo", "moscow": "Europe/Moscow", "dubai": "Asia/Dubai",
	"oslo": "Europe/Oslo", "lisbon": "Europe/Lisbon", "amsterdam": "Europe/Amsterdam", "stockholm": "Europe/Stockholm",
}

// directRE is a message that names the call to make: "call NAME" and, if
// the tool takes arguments, a JSON object of them.
var directRE = regexp.MustCompile(`(?s)^\s*call\s+([A-Za-z_][A-Za-z0-9_.:-]*)\s*(\{.*\})?\s*$`)

// direct returns the call a message of the form "call NAME {json}" asks
// for, when NAME is a declared tool (any tool: one of an OpenAPI
// description, say, which the offline model has no other way to call).
func direct(q string, declared []string) *genai.FunctionCall {
	m := directRE.FindStringSubmatch(q)
	if m == nil || !slices.Contains(declared, m[1]) {
		return nil
	}
	args := map[string]any{}
	if m[2] != "" && json.Unmarshal([]byte(m[2]), &args) != nil {
		return nil
	}
	return fake.Call(m[1], args)
}

// Plan decides which calls answer a question, in the order the question
// asks them. Each weather or time keyword starts a clause that runs to the
// next one, so that "weather in Oslo and the time in Tokyo" gives two
// calls, and every arithmetic expression is a calculate call, so that
// "what is (12+7)*3 and what time is it in Tokyo?" gives two calls as
// well: several requests in one message are parallel calls in one turn.
// "chart", "graph" or "plot" asks for weather_chart of the places named
// (Paris, London and Tokyo when none is). The calls name the demo tools;
// Bind maps them to the tools declared.
func Plan(q string) []*genai.FunctionCall {
	type clause struct {
		start int
		time  bool
	}
	var clauses []clause
	for _, m := range weatherRE.FindAllStringIndex(q, -1) {
		clauses = append(clauses, clause{start: m[0]})
	}
	for _, m := range timeRE.FindAllStringIndex(q, -1) {
		clauses = append(clauses, clause{start: m[0], time: true})
	}
	slices.SortFunc(clauses, func(a, b clause) int { return a.start - b.start })

	type planned struct {
		at   int
		call *genai.FunctionCall
	}
	var calls []planned
	seen := map[string]bool{}
	add := func(at int, key, name string, args map[string]any) {
		if !seen[key] {
			seen[key] = true
			calls = append(calls, planned{at, fake.Call(name, args)})
		}
	}
	for i, c := range clauses {
		end := len(q)
		if i+1 < len(clauses) {
			end = clauses[i+1].start
		}
		text := q[c.start:end]
		ps := places(text)
		if len(ps) == 0 {
			ps = places(q)
		}
		if !c.time {
			for _, city := range ps {
				add(c.start, "w:"+city, "get_weather", map[string]any{"city": city})
			}
			continue
		}
		zone := "UTC"
		if m := zoneRE.FindString(text); m != "" {
			zone = m
		} else if len(ps) > 0 {
			zone = ps[0]
			if z, ok := cityZones[strings.ToLower(zone)]; ok {
				zone = z
			}
		}
		add(c.start, "t:"+zone, "current_time", map[string]any{"timezone": zone})
	}
	if m := chartRE.FindStringIndex(q); m != nil {
		cities := places(q[m[0]:])
		if len(cities) == 0 {
			cities = places(q)
		}
		if len(cities) == 0 {
			cities = []string{"Paris", "London", "Tokyo"}
		}
		list := make([]any, len(cities))
		for i, c := range cities {
			list[i] = c
		}
		add(m[0], "chart", "weather_chart", map[string]any{"cities": list})
	}
	for _, m := range expressions(q) {
		add(m.at, "c:"+m.expr, "calculate", map[string]any{"expression": m.expr})
	}
	for _, m := range primesRE.FindAllStringSubmatchIndex(q, -1) {
		n, _ := strconv.ParseFloat(strings.NewReplacer(",", "", "_", "").Replace(q[m[2]:m[3]]), 64)
		if m[4] >= 0 {
			n *= map[string]float64{"thousand": 1e3, "million": 1e6, "billion": 1e9}[strings.ToLower(q[m[4]:m[5]])]
		}
		add(m[0], fmt.Sprint("p:", n), "count_primes", map[string]any{"below": n})
	}
	slices.SortStableFunc(calls, func(a, b planned) int { return a.at - b.at })
	out := make([]*genai.FunctionCall, len(calls))
	for i, c := range calls {
		out[i] = c.call
	}
	return out
}

// followUpRE finds a follow-up: a message that starts "and", "what about"
// or "how about", and what follows.
var followUpRE = regexp.MustCompile(`(?i)^\s*(and|what about|how about)\b(.*)`)

// FollowUp plans the calls that answer a follow-up to the conversation
// before it, history: "And in Oslo?" (an "and" names its places after
// "in", "for" or "at") or "What about Oslo and Rome?" asks
// what the last model turn that called get_weather or current_time asked
// (the weather, the time, or both), about the places it names. It returns
// nil for a message that is not a follow-up, names no place, or follows
// no such turn.
func FollowUp(history []*genai.Content, q string) []*genai.FunctionCall {
	m := followUpRE.FindStringSubmatch(q)
	if m == nil {
		return nil
	}
	ps := places(m[2])
	if len(ps) == 0 && !strings.EqualFold(m[1], "and") {
		ps = places("in " + m[2]) // "what about Oslo?"
	}
	if len(ps) == 0 {
		return nil
	}
	var asked []string // the questions to ask again, as Plan reads them
	for i := len(history) - 1; i >= 0 && len(asked) == 0; i-- {
		if history[i].Role != genai.RoleModel {
			continue
		}
		seen := map[string]bool{}
		for _, p := range history[i].Parts {
			if p.FunctionCall == nil || seen[jobOf(p.FunctionCall.Name)] {
				continue
			}
			switch job := jobOf(p.FunctionCall.Name); job {
			case "get_weather":
				asked = append(asked, "weather in "+strings.Join(ps, " and "))
				seen[job] = true
			case "current_time":
				for _, p := range ps {
					asked = append(asked, "time in "+p)
				}
				seen[job] = true
			}
		}
	}
	return Plan(strings.Join(asked, ", "))
}

// Declared returns the names of the functions a request declares.
func Declared(req *fake.Request) []string {
	var names []string
	for _, t := range req.Tools {
		for _, d := range t.FunctionDeclarations {
			names = append(names, d.Name)
		}
	}
	return names
}

// Bind renames each planned call to the declared tool that does its job,
// and drops calls no declared tool can answer. A tool does a demo tool's
// job when it has its name, or ends with it after a prefix and a
// separator: an MCP server's get_weather may be declared as
// demo_get_weather or demo.get_weather.
func Bind(calls []*genai.FunctionCall, names []string) []*genai.FunctionCall {
	var out []*genai.FunctionCall
	for _, c := range calls {
		if name := toolFor(names, c.Name); name != "" {
			bound := *c
			bound.Name = name
			out = append(out, &bound)
		}
	}
	return out
}

// toolFor returns the declared tool that does the job of the demo tool
// named base, or "". When several do, the last declared wins: the chat
// declares its MCP servers' tools after its own, and a user who adds a
// server wants it used.
func toolFor(names []string, base string) string {
	for i := len(names) - 1; i >= 0; i-- {
		n := names[i]
		if n == base {
			return n
		}
		if prefix, ok := strings.CutSuffix(n, base); ok && prefix != "" && strings.ContainsRune("_.:-", rune(prefix[len(prefix)-1])) {
			return n
		}
	}
	return ""
}

// jobOf returns the demo tool whose job the declared tool name does:
// "get_weather" for mcp_get_weather.
func jobOf(name string) string {
	for _, base := range demoJobs {
		if toolFor([]string{name}, base) != "" {
			return base
		}
	}
	return name
}

// demoJobs are the demo tools the offline model calls.
var demoJobs = []string{"get_weather", "current_time", "calculate", "count_primes", "weather_chart"}

// places returns the places named after "in", "for" or "at": "Paris and
// Tokyo" gives Paris and Tokyo.
func places(q string) []string {
	m := placeRE.FindStringSubmatch(q)
	if m == nil {
		return nil
	}
	list := m[1]
	if loc := questionRE.FindStringIndex(list); loc != nil {
		list = list[:loc[0]] // the next question starts
	}
	var out []string
	for _, p := range listRE.Split(list, -1) {
		p = strings.TrimSpace(p)
		p = strings.TrimPrefix(strings.TrimPrefix(p, "the "), "The ")
		if p == "" || strings.EqualFold(p, "it") || strings.EqualFold(p, "the") || strings.ContainsAny(p, "0123456789+*/%()=") {
			continue
		}
		out = append(out, titleCase(p))
	}
	return out
}

func titleCase(s string) string {
	if strings.ContainsAny(s, "/") || strings.ToUpper(s) == s {
		return s
	}
	words := strings.Fields(s)
	for i, w := range words {
		words[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	return strings.Join(words, " ")
}

// expr is an arithmetic expression found in a question, and where.
type expr struct {
	at   int
	expr string
}

// expressions returns the arithmetic expressions in q that have an
// operator after their first number, in order: "2+2 and 3*4" has two;
// "+3" (as in Etc/GMT+3) has none.
func expressions(q string) []expr {
	var out []expr
	for _, m := range exprRE.FindAllStringIndex(q, -1) {
		e := strings.TrimSpace(q[m[0]:m[1]])
		if strings.ContainsAny(strings.TrimLeft(e, "-+("), "+-*/%") {
			out = append(out, expr{m[0], e})
		}
	}
	return out
}

// Summarize turns function responses into the answer. A demo tool's
// result in the shape the examples' tools return is written out field by
// field; any other result (a newcomer's own get_weather that returns a
// string) as it is.
func Summarize(results []*genai.FunctionResponse) string {
	var lines []string
	demoData := false
	for _, r := range results {
		if msg, ok := r.Response["error"]; ok {
			lines = append(lines, fmt.Sprintf("%s failed: %v.", r.Name, msg))
			continue
		}
		out, ok := r.Response["result"].(map[string]any)
		job := jobOf(r.Name)
		if !ok && slices.Contains(demoJobs, job) {
			lines = append(lines, fmt.Sprintf("%s: %v", r.Name, r.Response["result"]))
			continue
		}
		if job == "get_weather" {
			demoData = true
		}
		switch job {
		case "get_weather":
			unit := "°C"
			if out["units"] == "fahrenheit" {
				unit = "°F"
			}
			lines = append(lines, fmt.Sprintf("%v: %v, %v%s, humidity %v%%, wind %v km/h.",
				out["city"], out["condition"], out["temperature"], unit, out["humidity"], out["wind_kph"]))
		case "current_time":
			lines = append(lines, fmt.Sprintf("In %v it is %v (UTC%v).", out["timezone"], out["local"], out["utc_offset"]))
		case "calculate":
			lines = append(lines, fmt.Sprintf("%v = %v", out["expression"], out["result"]))
		case "weather_chart":
			demoData = true
			temps, _ := out["temperatures_c"].(map[string]any)
			cities := slices.Sorted(maps.Keys(temps))
			files, _ := out["files"].([]any)
			var names []string
			for _, f := range files {
				names = append(names, fmt.Sprint(f))
			}
			lines = append(lines, fmt.Sprintf("Here is a chart of the temperatures in %s: %s.", strings.Join(cities, ", "), strings.Join(names, " and its data, ")))
		case "count_primes":
			line := fmt.Sprintf("There are %s primes below %s", number(out["primes"]), number(out["below"]))
			if out["largest"] != nil {
				line += fmt.Sprintf("; the largest is %s", number(out["largest"]))
			}
			lines = append(lines, line+".")
		default:
			switch res := r.Response["result"].(type) {
			case string: // an agent's answer
				lines = append(lines, fmt.Sprintf("%s says: %s", r.Name, res))
			case map[string]any:
				if res["state"] == "input-required" {
					q := fmt.Sprint(res["question"])
					if res["waiting_for"] != nil {
						q += " Answer yes or no."
					}
					lines = append(lines, fmt.Sprintf("%s asks: %s", r.Name, q))
					continue
				}
				lines = append(lines, fmt.Sprintf("%s returned %v.", r.Name, res))
			default:
				lines = append(lines, fmt.Sprintf("%s returned %v.", r.Name, res))
			}
		}
	}
	answer := strings.Join(lines, "\n")
	if demoData {
		answer += "\n(The weather here is made-up demo data.)"
	}
	return answer
}

// number writes a JSON number as an integer when it is one.
func number(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// FunctionResponses returns the function responses of a content.
func FunctionResponses(c *genai.Content) []*genai.FunctionResponse {
	var out []*genai.FunctionResponse
	for _, p := range c.Parts {
		if p.FunctionResponse != nil {
			out = append(out, p.FunctionResponse)
		}
	}
	return out
}

// Text returns the text of a content, thought parts left out.
func Text(c *genai.Content) string {
	var b strings.Builder
	for _, p := range c.Parts {
		if !p.Thought {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// delegate returns the call that hands the question to an agent: a
// declared tool that takes a "request" (agent.AsTool's and
// a2aagent.RemoteTool's do) and that the question names, its
// underscores read as spaces ("Ask the demo agent: …" names demo_agent);
// or, when the question is a yes or a no and the last thing an agent
// answered was a question of its own (A2A's input-required), the call
// that answers it.
func delegate(req *fake.Request, question string) *genai.FunctionCall {
	if name, yes, ok := pendingQuestion(req, question); ok {
		return fake.Call(name, map[string]any{"request": question, "approve": yes})
	}
	q := strings.ToLower(question)
	for _, t := range req.Tools {
		for _, d := range t.FunctionDeclarations {
			if takesRequest(d) && strings.Contains(q, strings.ReplaceAll(strings.ToLower(d.Name), "_", " ")) {
				return fake.Call(d.Name, map[string]any{"request": question})
			}
		}
	}
	return nil
}

func takesRequest(d *genai.FunctionDeclaration) bool {
	if d.Parameters != nil {
		return d.Parameters.Properties["request"] != nil
	}
	m, _ := d.ParametersJsonSchema.(map[string]any)
	props, _ := m["properties"].(map[string]any)
	return props["request"] != nil
}

var yesRE, noRE = regexp.MustCompile(`(?i)^\s*(y|yes|ok|sure|approve)\b`), regexp.MustCompile(`(?i)^\s*(n|no|deny|refuse)\b`)

// pendingQuestion reports whether question answers an agent's question:
// the last function response of the conversation is an agent's
// input-required, and question is a yes or a no.
func pendingQuestion(req *fake.Request, question string) (name string, yes, ok bool) {
	yes = yesRE.MatchString(question)
	if !yes && !noRE.MatchString(question) {
		return "", false, false
	}
	for i := len(req.Contents) - 2; i >= 0; i-- {
		rs := FunctionResponses(req.Contents[i])
		if len(rs) == 0 {
			continue
		}
		for _, r := range rs {
			if res, _ := r.Response["result"].(map[string]any); res["state"] == "input-required" {
				return r.Name, yes, true
			}
		}
		return "", false, false
	}
	return "", false, false
}
