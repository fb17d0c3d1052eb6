package main

// The offline model: a reply function for internal/fake that plays Gemini
// for this example's tools, so that the chat works with no key and no
// network. It reads the conversation the way the real model would receive
// it, over HTTP through the real client and the agent loop, answers a
// question with real function calls, and turns the function responses into
// an answer.

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

// offlineModelName is the model the fake serves. Its gemini-3 prefix makes
// the fake behave like Gemini 3: call ids, thought signatures, and the
// check that signatures come back.
const offlineModelName = "gemini-3-offline-demo"

// offlineChunk and offlineEventDelay make the offline answer stream in
// visible pieces.
const (
	offlineChunk      = 12
	offlineEventDelay = 15 * time.Millisecond
)

// offlineModel answers one request.
func offlineModel(req *fake.Request) *fake.Reply {
	if len(req.Contents) == 0 {
		return offlineText("I did not get a message.")
	}
	if reply := offlineTrip(req); reply != nil { // the /trip planner
		return reply
	}
	last := req.Contents[len(req.Contents)-1]
	if results := functionResponses(last); len(results) > 0 {
		return offlineText(summarize(results))
	}
	question := textOf(last)
	calls := plan(question)
	if len(calls) == 0 {
		return offlineText("I am the offline demo model, so I only understand a few things: the weather in a city " +
			"(\"What's the weather in Paris and Tokyo?\"), the time in a time zone (\"what time is it in UTC\") " +
			"and arithmetic (\"what is (12+7)*3\"). Set GEMINI_API_KEY to chat with Gemini about anything.")
	}
	return fake.Calls(calls...)
}

func offlineText(s string) *fake.Reply {
	r := fake.Text(s).WithTextChunk(offlineChunk)
	r.EventDelay = offlineEventDelay
	return r
}

var (
	weatherRE = regexp.MustCompile(`(?i)\b(weather|temperature|forecast|rain|sunny|hot|cold)\b`)
	timeRE    = regexp.MustCompile(`(?i)\b(time|clock|hour)\b`)
	// exprRE finds an arithmetic expression: digits, operators, parentheses.
	exprRE = regexp.MustCompile(`[-+(]*\d[\d\s.+\-*/%()]*`)
	// placeRE finds the place after "in", "for" or "at".
	placeRE = regexp.MustCompile(`(?i)\b(?:in|for|at)\s+([^?!.]+)`)
	listRE  = regexp.MustCompile(`(?i),|\band\b|&`)
	zoneRE  = regexp.MustCompile(`\b([A-Z][A-Za-z_]+/[A-Za-z_/]+|UTC|GMT)\b`)
)

// cityZones maps a few cities to their IANA zones, for "time in Tokyo".
var cityZones = map[string]string{
	"paris": "Europe/Paris", "london": "Europe/London", "berlin": "Europe/Berlin", "madrid": "Europe/Madrid",
	"rome": "Europe/Rome", "tokyo": "Asia/Tokyo", "sydney": "Australia/Sydney", "new york": "America/New_York",
	"los angeles": "America/Los_Angeles", "chicago": "America/Chicago", "delhi": "Asia/Kolkata",
	"mumbai": "Asia/Kolkata", "beijing": "Asia/Shanghai", "singapore": "Asia/Singapore", "cairo": "Africa/Cairo",
	"sao paulo": "America/Sao_Paulo", "moscow": "Europe/Moscow", "dubai": "Asia/Dubai",
}

// plan decides which calls answer a question. Each weather or time
// keyword starts a clause that runs to the next one, so that "weather in
// Oslo and the time in Tokyo" gives two calls; several intents give
// parallel calls.
func plan(q string) []*genai.FunctionCall {
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

	var calls []*genai.FunctionCall
	seen := map[string]bool{}
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
				if !seen["w:"+city] {
					seen["w:"+city] = true
					calls = append(calls, fake.Call("get_weather", map[string]any{"city": city}))
				}
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
		if !seen["t:"+zone] {
			seen["t:"+zone] = true
			calls = append(calls, fake.Call("current_time", map[string]any{"timezone": zone}))
		}
	}
	if len(calls) == 0 {
		if expr := expression(q); expr != "" {
			calls = append(calls, fake.Call("calculate", map[string]any{"expression": expr}))
		}
	}
	return calls
}

// places returns the places named after "in", "for" or "at": "Paris and
// Tokyo" gives Paris and Tokyo.
func places(q string) []string {
	m := placeRE.FindStringSubmatch(q)
	if m == nil {
		return nil
	}
	var out []string
	for _, p := range listRE.Split(m[1], -1) {
		p = strings.TrimSpace(p)
		p = strings.TrimPrefix(strings.TrimPrefix(p, "the "), "The ")
		if p == "" || strings.EqualFold(p, "it") || strings.EqualFold(p, "the") {
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

// expression returns the longest arithmetic expression in q that has an
// operator, or "".
func expression(q string) string {
	best := ""
	for _, m := range exprRE.FindAllString(q, -1) {
		m = strings.TrimSpace(m)
		if len(m) > len(best) && strings.ContainsAny(m, "+-*/%") {
			best = m
		}
	}
	return best
}

// summarize turns function responses into the answer.
func summarize(results []*genai.FunctionResponse) string {
	var lines []string
	for _, r := range results {
		if msg, ok := r.Response["error"]; ok {
			lines = append(lines, fmt.Sprintf("%s failed: %v.", r.Name, msg))
			continue
		}
		out, _ := r.Response["result"].(map[string]any)
		switch r.Name {
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
		default:
			lines = append(lines, fmt.Sprintf("%s returned %v.", r.Name, r.Response["result"]))
		}
	}
	answer := strings.Join(lines, "\n")
	for _, r := range results {
		if r.Name == "get_weather" {
			answer += "\n(The weather here is made-up demo data.)"
			break
		}
	}
	return answer
}

// functionResponses returns the function responses of a content.
func functionResponses(c *genai.Content) []*genai.FunctionResponse {
	var out []*genai.FunctionResponse
	for _, p := range c.Parts {
		if p.FunctionResponse != nil {
			out = append(out, p.FunctionResponse)
		}
	}
	return out
}

// textOf returns the text of a content.
func textOf(c *genai.Content) string {
	var b strings.Builder
	for _, p := range c.Parts {
		if !p.Thought {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
