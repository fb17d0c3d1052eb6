package geminiinteractions_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/geminiinteractions"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
)

const longAnswer = "It is sunny in Paris, warm in Rome and raining in Oslo."

// streamText runs a's Stream on one message and returns the text it
// yielded, the result and the error.
func streamText(t *testing.T, a *agent.Agent) (string, *agent.Result, error) {
	t.Helper()
	var text strings.Builder
	var res *agent.Result
	var err error
	for e, e2 := range a.Stream(context.Background(), user("Weather?")) {
		if e.Kind == agent.EventText {
			text.WriteString(e.Text)
		}
		if e.Kind == agent.EventDone {
			res, err = e.Result, e2
		}
	}
	return text.String(), res, err
}

// A stream whose connection breaks is resumed from its last event: the
// answer arrives whole, nothing twice, in one attempt.
func TestStreamResumesFromItsLastEvent(t *testing.T) {
	for _, fault := range []fake.Fault{fake.FaultCutStream, fake.FaultCutMidEvent, fake.FaultMalformedBody} {
		t.Run(fault.String(), func(t *testing.T) {
			srv := newServer(t)
			m := geminiinteractions.New(srv.Client(), geminiinteractions.Config{})
			a := newAgent(t, m)
			srv.Enqueue(fake.Text(longAnswer).WithTextChunk(5).WithFault(fault, 6))
			text, res, err := streamText(t, a)
			if err != nil || text != longAnswer || res.Text != longAnswer || res.Turns[0].Attempts != 1 {
				t.Fatalf("Stream() = %q, %q, %v", text, res.Text, err)
			}
			var get *fake.Request
			for _, r := range srv.Requests() {
				if r.Method == fake.MethodGetInteraction {
					get = r
				}
			}
			if get == nil || get.Query.Get("last_event_id") == "" || get.InteractionID != creates(srv)[0].InteractionID || !get.Stream {
				t.Errorf("resumed with %+v; want a GET of the stream from its last event", get)
			}
			if s := m.Stats(); s.Resumes != 1 || s.Requests != 1 {
				t.Errorf("Stats() = %+v", s)
			}
		})
	}
}

// Without store, or with resuming off, nothing can be resumed: a turn
// whose text reached the consumer fails, as on generateContent.
func TestStreamNotResumed(t *testing.T) {
	for name, cfg := range map[string]geminiinteractions.Config{
		"stateless":   {Stateless: true},
		"resumes off": {StreamResumes: -1},
	} {
		t.Run(name, func(t *testing.T) {
			srv := newServer(t)
			a := newAgent(t, geminiinteractions.New(srv.Client(), cfg))
			srv.Enqueue(fake.Text(longAnswer).WithTextChunk(5).WithFault(fake.FaultCutStream, 6))
			_, _, err := streamText(t, a)
			var me *agent.ModelError
			if !errors.As(err, &me) || me.Attempts != 1 {
				t.Errorf("Stream() = %v; want a ModelError after one attempt", err)
			}
		})
	}
}

// A stream cut after interaction.completed, before the "[DONE]" sentinel
// (which genai's SDK reports as an error), is whole.
func TestStreamWithoutSentinelIsWhole(t *testing.T) {
	srv := newServer(t)
	m := geminiinteractions.New(srv.Client(), geminiinteractions.Config{})
	a := newAgent(t, m)
	srv.Enqueue(fake.Text(longAnswer).WithTextChunk(20).WithFault(fake.FaultCutStream, 1000))
	text, res, err := streamText(t, a)
	if err != nil || text != longAnswer || res.Turns[0].Attempts != 1 || m.Stats().Resumes != 0 {
		t.Errorf("Stream() = %q, %v after %d attempts, %+v", text, err, res.Turns[0].Attempts, m.Stats())
	}
}

// An error event ends the stream with the API's error, classified as an
// HTTP error of its code would be: retried when nothing was yielded yet,
// the run's end once text was.
func TestStreamErrorEvent(t *testing.T) {
	t.Run("before any text", func(t *testing.T) {
		srv := newServer(t)
		a := newAgent(t, geminiinteractions.New(srv.Client(), geminiinteractions.Config{}))
		srv.Enqueue(fake.Text(longAnswer).WithStreamError(1, 503, "The model is overloaded."), fake.Text("Later: sunny."))
		text, res, err := streamText(t, a)
		if err != nil || text != "Later: sunny." || res.Turns[0].Attempts != 2 {
			t.Errorf("Stream() = %q, %v", text, err)
		}
	})
	t.Run("after text", func(t *testing.T) {
		srv := newServer(t)
		a := newAgent(t, geminiinteractions.New(srv.Client(), geminiinteractions.Config{}))
		srv.Enqueue(fake.Text(longAnswer).WithTextChunk(5).WithStreamError(8, 503, "The model is overloaded."))
		_, _, err := streamText(t, a)
		var apiErr genai.APIError
		if !errors.As(err, &apiErr) || apiErr.Code != 503 || apiErr.Status != "unavailable" || apiErr.Message != "The model is overloaded." {
			t.Errorf("Stream() = %v; want the event's 503", err)
		}
	})
}

// A streamed call's chunks merge into what the unary call returns: the
// next request continues the streamed interaction with only the new
// message.
func TestStreamedTurnChains(t *testing.T) {
	srv := newServer(t)
	m := geminiinteractions.New(srv.Client(), geminiinteractions.Config{})
	a := newAgent(t, m)
	srv.Enqueue(fake.Parts(&genai.Part{Text: "Thinking about cities.", Thought: true}, &genai.Part{Text: "One moment."},
		&genai.Part{FunctionCall: call("Paris")}).WithTextChunk(3), fake.Text(longAnswer).WithTextChunk(4))
	_, res, err := streamText(t, a)
	if err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(fake.Text("Yes.").WithTextChunk(1))
	for _, err := range a.Stream(context.Background(), append(res.History, genai.NewContentFromText("Sure?", genai.RoleUser))) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if s := m.Stats(); s.Chained != 2 || s.Whole != 1 {
		t.Errorf("Stats() = %+v; want every call after the first chained", s)
	}
}
