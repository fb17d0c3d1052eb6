package history_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

// model3 is a Gemini 3 model: the fake then requires the first function
// call of every step of the current turn to carry its thought signature.
const model3 = "gemini-3-flash-preview"

var ctx = context.Background()

func userText(s string) *genai.Content { return genai.NewContentFromText(s, genai.RoleUser) }

func modelText(s string, sig []byte) *genai.Content {
	return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: s, ThoughtSignature: sig}}}
}

// step returns a model turn calling get_weather for each city, the first
// call signed, and the user turn answering each call with output.
func step(sig []byte, output func(city string) any, cities ...string) []*genai.Content {
	calls := &genai.Content{Role: genai.RoleModel}
	answers := &genai.Content{Role: genai.RoleUser}
	for i, city := range cities {
		id := fmt.Sprintf("fc-%s-%d", city, i)
		p := &genai.Part{FunctionCall: &genai.FunctionCall{ID: id, Name: "get_weather", Args: map[string]any{"city": city}}}
		if i == 0 {
			p.ThoughtSignature = sig
		}
		calls.Parts = append(calls.Parts, p)
		answers.Parts = append(answers.Parts, &genai.Part{FunctionResponse: &genai.FunctionResponse{
			ID: id, Name: "get_weather", Response: map[string]any{"result": output(city)}}})
	}
	return []*genai.Content{calls, answers}
}

func bigOutput(n int) func(string) any {
	return func(city string) any { return city + ": " + strings.Repeat("x", n) }
}

// info is the HistoryInfo of a run's first call.
func info(contents []*genai.Content) *agent.HistoryInfo {
	return &agent.HistoryInfo{Contents: contents, Model: model3}
}

// randomHistory returns a history the fake accepts, as the loop builds
// them: exchanges of a user message (now and then two, as a failed run
// leaves), steps of parallel function calls (the first signed) and their
// answers, in any order, of random sizes, as results or errors, and a
// final text answer; the last exchange may stop after a step, as a run in
// progress does. It ends with a user content, as a model call's history
// does.
func randomHistory(r *rand.Rand) []*genai.Content {
	sig := func() []byte {
		b := make([]byte, 8+r.IntN(40))
		for i := range b {
			b[i] = byte(r.UintN(256))
		}
		return b
	}
	text := func(max int) string { return strings.Repeat("w", r.IntN(max)) + "." }
	var cs []*genai.Content
	if r.IntN(10) == 0 { // a greeting before the first message
		cs = append(cs, modelText("Hello! "+text(50), nil))
	}
	exchanges := 1 + r.IntN(10)
	for e := range exchanges {
		last := e == exchanges-1
		cs = append(cs, userText(fmt.Sprintf("message %d %s", e, text(300))))
		if r.IntN(8) == 0 {
			cs = append(cs, userText("again "+text(100)))
		}
		steps := r.IntN(4)
		for s := range steps {
			calls := make([]string, 1+r.IntN(3))
			for i := range calls {
				calls[i] = fmt.Sprintf("c%d-%d-%d", e, s, i)
			}
			st := step(sig(), func(city string) any {
				switch r.IntN(4) {
				case 0:
					return map[string]any{"temp": 21.5, "sky": text(800), "list": []any{1.0, "two", nil, true}}
				default:
					return city + " " + text(1500)
				}
			}, calls...)
			if r.IntN(3) == 0 { // a thought and some text before the calls
				st[0].Parts = append([]*genai.Part{{Text: text(200), Thought: true}, {Text: text(100)}}, st[0].Parts...)
			}
			if r.IntN(5) == 0 { // an error answer
				st[1].Parts[0].FunctionResponse.Response = map[string]any{"error": "failed: " + text(600)}
			}
			r.Shuffle(len(st[1].Parts), func(i, j int) { st[1].Parts[i], st[1].Parts[j] = st[1].Parts[j], st[1].Parts[i] })
			cs = append(cs, st...)
		}
		if last && steps > 0 && r.IntN(2) == 0 {
			return cs // a run in progress: its steps are the current turn
		}
		cs = append(cs, modelText("answer "+text(400), sig()))
	}
	return append(cs, userText("next "+text(100)))
}

// accepted sends contents to the fake, as a model call would, and returns
// the fake's refusal, if any.
func accepted(srv *fake.Server, client *genai.Client, contents []*genai.Content) error {
	srv.Enqueue(fake.Text("ok")) // a refused request takes none: the test then stops
	_, err := client.Models.GenerateContent(ctx, model3, contents, &genai.GenerateContentConfig{
		Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{Name: "get_weather",
			Parameters: &genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{"city": {Type: genai.TypeString}}}}}}},
	})
	return err
}

// newServer starts a fake that closes when the test ends.
func newServer(t testing.TB) *fake.Server {
	t.Helper()
	srv := fake.NewServer()
	t.Cleanup(srv.Close)
	return srv
}
