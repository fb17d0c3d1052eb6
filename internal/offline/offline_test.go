package offline

import (
	"fmt"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

func TestPlan(t *testing.T) {
	for _, tc := range []struct {
		q    string
		want []string // name:arg
	}{
		{"What's the weather in Paris and Tokyo?", []string{"get_weather:Paris", "get_weather:Tokyo"}},
		{"weather in new york, london & rome", []string{"get_weather:New York", "get_weather:London", "get_weather:Rome"}},
		{"what time is it in UTC", []string{"current_time:UTC"}},
		{"What time is it in Tokyo?", []string{"current_time:Asia/Tokyo"}},
		{"time in Europe/Berlin please", []string{"current_time:Europe/Berlin"}},
		{"what time is it", []string{"current_time:UTC"}},
		{"what is (12+7)*3", []string{"calculate:(12+7)*3"}},
		{"calculate 2.5 / 4 for me", []string{"calculate:2.5 / 4"}},
		{"weather in Oslo and the time in Tokyo", []string{"get_weather:Oslo", "current_time:Asia/Tokyo"}},
		// Several requests in one message: one call each, in the order asked.
		{"what is (12+7)*3 and what time is it in Tokyo?", []string{"calculate:(12+7)*3", "current_time:Asia/Tokyo"}},
		{"what time is it in Tokyo and what is 2+2", []string{"current_time:Asia/Tokyo", "calculate:2+2"}},
		{"weather in Paris and what is 2+2", []string{"get_weather:Paris", "calculate:2+2"}},
		{"what is 2+2 and 3*4?", []string{"calculate:2+2", "calculate:3*4"}},
		{"what is -5+3", []string{"calculate:-5+3"}},
		{"I scored +3 and (4)", nil}, // a sign alone is no operation
		{"hello", nil},
		{"I have 3 cats", nil},
		{"how many primes are there below 500 million?", []string{"count_primes:5e+08"}},
		{"count the prime numbers under 1,000,000 and what is 2+2", []string{"count_primes:1e+06", "calculate:2+2"}},
		{"primes up to 12345", []string{"count_primes:12345"}},
		{"prime numbers below 2 billion", []string{"count_primes:2e+09"}},
		{"Chart the temperatures in Paris, Oslo and Tokyo", []string{"weather_chart:[Paris Oslo Tokyo]"}},
		{"draw a graph please", []string{"weather_chart:[Paris London Tokyo]"}},
	} {
		var got []string
		for _, c := range Plan(tc.q) {
			for _, v := range c.Args {
				got = append(got, c.Name+":"+fmt.Sprint(v))
			}
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("Plan(%q) = %v, want %v", tc.q, got, tc.want)
		}
	}
}

func TestBind(t *testing.T) {
	calls := Plan("weather in Oslo, what is 2+2 and the time in UTC")
	for _, tc := range []struct {
		declared []string
		want     string
	}{
		{[]string{"get_weather", "current_time", "calculate"}, "get_weather calculate current_time"},
		{[]string{"get_weather", "mcp_get_weather", "demo.calculate"}, "mcp_get_weather demo.calculate"},
		{[]string{"x:current_time", "not_a_calculator", "calculate_v2"}, "x:current_time"},
		{nil, ""},
	} {
		var got []string
		for _, c := range Bind(calls, tc.declared) {
			got = append(got, c.Name)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("Bind(%v) = %v, want %s", tc.declared, got, tc.want)
		}
	}
}

// A question that names an agent tool is handed to it; a yes or a no
// after an agent's question answers it.
func TestDelegate(t *testing.T) {
	agentTool := &genai.FunctionDeclaration{Name: "demo_agent", Parameters: &genai.Schema{Type: genai.TypeObject,
		Properties: map[string]*genai.Schema{"request": {Type: genai.TypeString}, "approve": {Type: genai.TypeBoolean}}}}
	weather := &genai.FunctionDeclaration{Name: "get_weather", Parameters: &genai.Schema{Type: genai.TypeObject,
		Properties: map[string]*genai.Schema{"city": {Type: genai.TypeString}}}}
	tools := []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{weather, agentTool}}}
	// ask returns the agent's call Answer makes, if any.
	ask := func(contents ...*genai.Content) *genai.FunctionCall {
		calls, _ := Answer(&fake.Request{Contents: contents, Tools: tools})
		for _, c := range calls {
			if c.Name == "demo_agent" {
				return c
			}
		}
		return nil
	}
	if c := ask(genai.NewContentFromText("Ask the demo agent: what is the weather in Paris?", genai.RoleUser)); c == nil ||
		c.Name != "demo_agent" || c.Args["request"] != "Ask the demo agent: what is the weather in Paris?" {
		t.Errorf("a question for the agent: %+v", c)
	}
	if calls, _ := Answer(&fake.Request{Contents: []*genai.Content{genai.NewContentFromText("What is the weather in Paris?", genai.RoleUser)}, Tools: tools}); len(calls) != 1 || calls[0].Name != "get_weather" {
		t.Errorf("a question for no agent: %+v", calls)
	}
	asked := []*genai.Content{
		genai.NewContentFromText("Ask the demo agent: weather in Paris?", genai.RoleUser),
		genai.NewContentFromFunctionCall("demo_agent", map[string]any{"request": "…"}, genai.RoleModel),
		genai.NewContentFromFunctionResponse("demo_agent", map[string]any{"result": map[string]any{"state": "input-required", "question": "get_weather needs approval."}}, genai.RoleUser),
		genai.NewContentFromText("demo_agent asks: get_weather needs approval.", genai.RoleModel),
	}
	for answer, approve := range map[string]bool{"yes": true, "y, go on": true, "no": false} {
		c := ask(append(asked, genai.NewContentFromText(answer, genai.RoleUser))...)
		if c == nil || c.Name != "demo_agent" || c.Args["approve"] != approve || c.Args["request"] != answer {
			t.Errorf("%q: %+v", answer, c)
		}
	}
	if c := ask(append(asked, genai.NewContentFromText("What is the time?", genai.RoleUser))...); c != nil {
		t.Errorf("another question answered the agent: %+v", c)
	}
	got := Summarize([]*genai.FunctionResponse{{Name: "demo_agent", Response: map[string]any{"result": map[string]any{
		"state": "input-required", "question": "get_weather needs approval.", "waiting_for": []any{}}}}})
	if got != "demo_agent asks: get_weather needs approval. Answer yes or no." {
		t.Errorf("Summarize: %q", got)
	}
}

// A follow-up asks the conversation's last question about places again,
// for the places it names.
func TestFollowUp(t *testing.T) {
	weather := []*genai.Content{
		genai.NewContentFromText("What's the weather in Paris and Tokyo?", genai.RoleUser),
		{Role: genai.RoleModel, Parts: []*genai.Part{
			genai.NewPartFromFunctionCall("get_weather", map[string]any{"city": "Paris"}),
			genai.NewPartFromFunctionCall("get_weather", map[string]any{"city": "Tokyo"}),
		}},
		{Role: genai.RoleUser, Parts: []*genai.Part{genai.NewPartFromFunctionResponse("get_weather", map[string]any{"result": "…"})}},
		genai.NewContentFromText("Paris: rain. Tokyo: windy.", genai.RoleModel),
	}
	both := []*genai.Content{
		genai.NewContentFromText("weather and time in Paris", genai.RoleUser),
		{Role: genai.RoleModel, Parts: []*genai.Part{
			genai.NewPartFromFunctionCall("mcp_get_weather", map[string]any{"city": "Paris"}),
			genai.NewPartFromFunctionCall("mcp_current_time", map[string]any{"timezone": "Europe/Paris"}),
		}},
	}
	calc := []*genai.Content{
		genai.NewContentFromText("what is 2+2", genai.RoleUser),
		{Role: genai.RoleModel, Parts: []*genai.Part{genai.NewPartFromFunctionCall("calculate", map[string]any{"expression": "2+2"})}},
	}
	for _, tc := range []struct {
		history []*genai.Content
		q       string
		want    []string // name:arg
	}{
		{weather, "And in Oslo?", []string{"get_weather:Oslo"}},
		{weather, "and for Berlin and Rome", []string{"get_weather:Berlin", "get_weather:Rome"}},
		{weather, "What about Oslo?", []string{"get_weather:Oslo"}},
		{both, "How about Oslo?", []string{"get_weather:Oslo", "current_time:Europe/Oslo"}},
		// The last question about places, not the last question.
		{append(both, calc...), "And in Oslo?", []string{"get_weather:Oslo", "current_time:Europe/Oslo"}},
		{weather, "and tell me a joke", nil}, // no place
		{weather, "In Oslo?", nil},           // not a follow-up
		{calc, "And in Oslo?", nil},          // nothing about places to ask again
		{nil, "And in Oslo?", nil},
	} {
		var got []string
		for _, c := range FollowUp(tc.history, tc.q) {
			for _, v := range c.Args {
				got = append(got, c.Name+":"+fmt.Sprint(v))
			}
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("FollowUp(%q) = %v, want %v", tc.q, got, tc.want)
		}
	}
}

// "call NAME {json}" calls a declared tool by name, whatever it is.
func TestDirect(t *testing.T) {
	declared := []string{"listItems", "getItem"}
	for q, want := range map[string]string{
		`call listItems`:                       `listItems map[]`,
		`call getItem {"itemId": "7"}`:         `getItem map[itemId:7]`,
		"  call getItem {\"a\": {\"b\": 1}}\n": `getItem map[a:map[b:1]]`,
		`call nope {}`:                         ``,
		`call getItem {broken`:                 ``,
		`please call getItem`:                  ``,
	} {
		got := ""
		if c := direct(q, declared); c != nil {
			got = fmt.Sprint(c.Name, " ", c.Args)
		}
		if got != want {
			t.Errorf("direct(%q) = %q, want %q", q, got, want)
		}
	}
}
