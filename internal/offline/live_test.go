package offline

import (
	"context"
	"slices"
	"strings"
	"testing"

	"google.golang.org/genai"
)

// The offline model over Live, through the real genai client: a question
// gets calls with ids, the responses, sent one by one as geminilive sends
// them, get the answer that sums them up, and a follow-up asks again
// about other places; in text, then in audio with its transcription.
func TestServeLive(t *testing.T) {
	for _, modality := range []genai.Modality{genai.ModalityText, genai.ModalityAudio} {
		t.Run(string(modality), func(t *testing.T) {
			srv := NewServer()
			defer srv.Close()
			client, err := genai.NewClient(context.Background(), srv.LiveClientConfig())
			if err != nil {
				t.Fatal(err)
			}
			weather := &genai.FunctionDeclaration{Name: "get_weather", Parameters: &genai.Schema{Type: genai.TypeObject,
				Properties: map[string]*genai.Schema{"city": {Type: genai.TypeString}}}}
			sess, err := client.Live.Connect(context.Background(), LiveModelName, &genai.LiveConnectConfig{
				ResponseModalities:       []genai.Modality{modality},
				OutputAudioTranscription: &genai.AudioTranscriptionConfig{},
				Tools:                    []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{weather}}},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			if _, err := sess.Receive(); err != nil { // setupComplete
				t.Fatal(err)
			}

			turn := func(question string) (cities []string, answer string) {
				t.Helper()
				if err := sess.SendRealtimeInput(genai.LiveRealtimeInput{Text: question}); err != nil {
					t.Fatal(err)
				}
				for {
					m, err := sess.Receive()
					if err != nil {
						t.Fatalf("%q: %v", question, err)
					}
					if m.ToolCall != nil {
						// Answered one by one, as geminilive answers, the last call first:
						// the answer still follows the calls' order.
						for _, c := range slices.Backward(m.ToolCall.FunctionCalls) {
							if !strings.HasPrefix(c.ID, "offline-") {
								t.Errorf("call id %q", c.ID)
							}
							city := c.Args["city"].(string)
							cities = append([]string{city}, cities...)
							r := &genai.FunctionResponse{ID: c.ID, Name: c.Name, Response: map[string]any{"result": "sunny in " + city}}
							if err := sess.SendToolResponse(genai.LiveToolResponseInput{FunctionResponses: []*genai.FunctionResponse{r}}); err != nil {
								t.Fatal(err)
							}
						}
					}
					if sc := m.ServerContent; sc != nil {
						if sc.ModelTurn != nil {
							for _, p := range sc.ModelTurn.Parts {
								answer += p.Text
							}
						}
						if sc.OutputTranscription != nil {
							answer += sc.OutputTranscription.Text
						}
						if sc.TurnComplete {
							return cities, answer
						}
					}
				}
			}
			cities, answer := turn("What is the weather in Paris and Tokyo?")
			if strings.Join(cities, ",") != "Paris,Tokyo" || answer != "get_weather: sunny in Paris\nget_weather: sunny in Tokyo" {
				t.Errorf("first turn: calls for %v, answer %q", cities, answer)
			}
			cities, answer = turn("And in Oslo?")
			if strings.Join(cities, ",") != "Oslo" || answer != "get_weather: sunny in Oslo" {
				t.Errorf("follow-up: calls for %v, answer %q", cities, answer)
			}
			if _, answer = turn("hello"); answer != Help {
				t.Errorf("hello: answer %q", answer)
			}
			for _, m := range srv.LiveMessages() {
				if m.Rejection != nil || m.Unscripted {
					t.Errorf("message #%d: rejected %v, unscripted %v", m.Seq, m.Rejection, m.Unscripted)
				}
			}
		})
	}
}
