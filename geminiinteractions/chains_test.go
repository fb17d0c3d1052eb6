package geminiinteractions_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/geminiinteractions"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// Each turn after the first sends previous_interaction_id and only what
// the server lacks: the function results, then the new message; tools and
// the system instruction go with every request.
func TestChainSendsOnlyWhatTheServerLacks(t *testing.T) {
	srv := newServer(t)
	m := geminiinteractions.New(srv.Client(), geminiinteractions.Config{})
	a := newAgent(t, m, func(c *agent.Config) {
		c.GenerateConfig = &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText("Be brief.", genai.RoleUser)}
	})
	srv.Enqueue(fake.Calls(call("Paris"), call("Rome")), fake.Calls(call("Oslo")), fake.Text("Sunny everywhere."), fake.Text("Yes."))
	res, err := a.Run(context.Background(), user("Paris, Rome, then Oslo?"))
	if err != nil || res.Text != "Sunny everywhere." {
		t.Fatalf("Run() = %+v, %v", res, err)
	}
	res, err = a.Run(context.Background(), append(res.History, genai.NewContentFromText("Sure?", genai.RoleUser)))
	if err != nil || res.Text != "Yes." {
		t.Fatalf("second Run() = %+v, %v", res, err)
	}
	reqs := creates(srv)
	want := [][]string{{"user_input"}, {"function_result", "function_result"}, {"function_result"}, {"user_input"}}
	for i, r := range reqs {
		if got := stepTypes(t, r); !slices.Equal(got, want[i]) {
			t.Errorf("request %d sent %v; want %v", i, got, want[i])
		}
		if (i > 0) != (r.PreviousInteractionID != "") || i > 0 && r.PreviousInteractionID != reqs[i-1].InteractionID {
			t.Errorf("request %d continued %q; want the interaction before it, %q", i, r.PreviousInteractionID, reqs[max(i-1, 0)].InteractionID)
		}
		if r.SystemInstruction == nil || r.SystemInstruction.Parts[0].Text != "Be brief." || r.FunctionDeclaration("get_weather") == nil {
			t.Errorf("request %d lost the system instruction or the tools", i)
		}
	}
	// The server sees the whole conversation, as generateContent would
	// have sent it.
	if diff := cmp.Diff(res.History[:len(res.History)-1], reqs[3].Contents); diff != "" {
		t.Errorf("the server's conversation differs from the history (-history +server):\n%s", diff)
	}
	if s := m.Stats(); s.Requests != 4 || s.Chained != 3 || s.Whole != 1 || s.Fallbacks != 0 {
		t.Errorf("Stats() = %+v", s)
	}
}

// The whole history goes whenever the contents extend no interaction this
// Models created: in another process (a new Models), after a HistoryFunc
// changed the history, for a session this process did not create; and the
// chain goes on from that request.
func TestWholeHistoryWhenTheChainIsUnknown(t *testing.T) {
	srv := newServer(t)
	m := geminiinteractions.New(srv.Client(), geminiinteractions.Config{})
	a := newAgent(t, m)
	srv.Enqueue(fake.Calls(call("Paris")), fake.Text("Sunny."))
	res, err := a.Run(context.Background(), user("Paris?"))
	if err != nil {
		t.Fatal(err)
	}
	history := res.History

	wantWhole := func(name string, r *fake.Request, contents int) {
		t.Helper()
		if r.PreviousInteractionID != "" || len(r.Input) != contents {
			t.Errorf("%s: sent previous %q and %d contents; want the whole history, %d contents", name, r.PreviousInteractionID, len(r.Input), contents)
		}
	}
	wantChained := func(name string, r *fake.Request) {
		t.Helper()
		if r.PreviousInteractionID == "" || len(r.Input) != 1 {
			t.Errorf("%s: sent previous %q and %d contents; want the new message only", name, r.PreviousInteractionID, len(r.Input))
		}
	}

	// A new process: nothing is known.
	other := newAgent(t, geminiinteractions.New(srv.Client(), geminiinteractions.Config{}))
	srv.Enqueue(fake.Text("Still sunny."), fake.Text("Yes."))
	res, err = other.Run(context.Background(), append(history, genai.NewContentFromText("And now?", genai.RoleUser)))
	if err != nil {
		t.Fatal(err)
	}
	wantWhole("another process", srv.LastRequest(), 5)
	// ... and from there on, that process chains.
	if _, err := other.Run(context.Background(), append(res.History, genai.NewContentFromText("Sure?", genai.RoleUser))); err != nil {
		t.Fatal(err)
	}
	wantChained("another process, next turn", srv.LastRequest())

	// A stored session, read back by this process: the same contents, in
	// new memory, extend what the server holds.
	srv.Enqueue(fake.Text("Sunny still."))
	if _, err := a.Run(context.Background(), append(roundTrip(t, history), genai.NewContentFromText("Really?", genai.RoleUser))); err != nil {
		t.Fatal(err)
	}
	wantChained("a stored session", srv.LastRequest())

	// A session stored before this process ran: whole.
	fresh := newAgent(t, geminiinteractions.New(srv.Client(), geminiinteractions.Config{}))
	srv.Enqueue(fake.Text("Sunny."))
	if _, err := fresh.Run(context.Background(), append(roundTrip(t, history), genai.NewContentFromText("Again?", genai.RoleUser))); err != nil {
		t.Fatal(err)
	}
	wantWhole("a session stored before", srv.LastRequest(), 5)

	// A HistoryFunc that drops the first exchange.
	trimmed := newAgent(t, m, func(c *agent.Config) {
		c.PrepareHistory = func(_ context.Context, h *agent.HistoryInfo) ([]*genai.Content, error) {
			if len(h.Contents) > 3 {
				return h.Contents[3:], nil
			}
			return h.Contents, nil
		}
	})
	srv.Enqueue(fake.Text("Trimmed."))
	if _, err := trimmed.Run(context.Background(), append(history, genai.NewContentFromText("Short?", genai.RoleUser))); err != nil {
		t.Fatal(err)
	}
	wantWhole("a trimmed history", srv.LastRequest(), 2)

	// A changed answer in the history: the server holds the history up to
	// the call turn before it, which the request continues.
	changed := slices.Clone(history)
	changed[3] = genai.NewContentFromText("Cloudy.", genai.RoleModel)
	srv.Enqueue(fake.Text("Hm."))
	if _, err := a.Run(context.Background(), append(changed, genai.NewContentFromText("Cloudy?", genai.RoleUser))); err != nil {
		t.Fatal(err)
	}
	if r, first := srv.LastRequest(), creates(srv)[0]; r.PreviousInteractionID != first.InteractionID || len(r.Input) != 3 {
		t.Errorf("a changed history: sent previous %q and %d contents; want %q, the interaction before the change, and 3 contents",
			r.PreviousInteractionID, len(r.Input), first.InteractionID)
	}
}

// The server forgot the interaction (retention, another region, deleted):
// the request goes again once with the whole history, and the chain
// starts again from it.
func TestUnknownInteractionFallsBackOnce(t *testing.T) {
	srv := fake.NewServer() // it rejects the expired ids: that is the test
	defer srv.Close()
	m := geminiinteractions.New(srv.Client(), geminiinteractions.Config{})
	a := newAgent(t, m)
	srv.Enqueue(fake.Calls(call("Paris")), fake.Text("Sunny."))
	res, err := a.Run(context.Background(), user("Paris?"))
	if err != nil {
		t.Fatal(err)
	}
	srv.ExpireInteractions()
	srv.Enqueue(fake.Text("Still sunny."))
	if _, err := a.Run(context.Background(), append(res.History, genai.NewContentFromText("Now?", genai.RoleUser))); err != nil {
		t.Fatal(err)
	}
	reqs := creates(srv)
	if n := len(reqs); n != 4 {
		t.Fatalf("%d creates; want 4 (2 turns, a 404, the whole history)", n)
	}
	if r := reqs[2]; r.PreviousInteractionID == "" || r.Rejection == nil || r.Rejection.Err.Code != 404 {
		t.Errorf("request 2 = previous %q, rejection %+v; want a 404 for the expired interaction", r.PreviousInteractionID, r.Rejection)
	}
	if r := reqs[3]; r.PreviousInteractionID != "" || len(r.Input) != 5 {
		t.Errorf("request 3 sent previous %q and %d contents; want the whole history", r.PreviousInteractionID, len(r.Input))
	}
	if s := m.Stats(); s.Fallbacks != 1 {
		t.Errorf("Stats() = %+v; want one fallback", s)
	}
	// Once only: a 404 for the whole history is the answer.
	srv.ExpireInteractions()
	srv.Enqueue(fake.Error(404, "Model not found."))
	_, err = a.Run(context.Background(), append(res.History, genai.NewContentFromText("And?", genai.RoleUser)))
	var apiErr genai.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != 404 {
		t.Errorf("Run() = %v; want the 404", err)
	}
	if n := len(creates(srv)); n != 6 {
		t.Errorf("%d creates; want 6: one fallback, no more", n)
	}
	for _, r := range srv.Rejections() {
		if r.Rule != "previous-interaction" {
			t.Errorf("request #%d rejected by %q", r.Seq, r.Rule)
		}
	}
}

// Stateless: store false on every request, the whole history each time,
// thoughts and their signatures included; nothing is kept.
func TestStateless(t *testing.T) {
	srv := newServer(t)
	m := geminiinteractions.New(srv.Client(), geminiinteractions.Config{Stateless: true})
	a := newAgent(t, m)
	srv.Enqueue(fake.Parts(&genai.Part{Text: "Two cities.", Thought: true}, &genai.Part{FunctionCall: call("Paris")}, &genai.Part{FunctionCall: call("Rome")}),
		fake.Text("Sunny."))
	if _, err := a.Run(context.Background(), user("Paris and Rome?")); err != nil {
		t.Fatal(err)
	}
	reqs := creates(srv)
	for _, r := range reqs {
		if r.Store == nil || *r.Store || r.PreviousInteractionID != "" {
			t.Errorf("request #%d: store %v, previous %q; want store false and no previous", r.Seq, r.Store, r.PreviousInteractionID)
		}
	}
	steps := input(t, reqs[1])
	if got := stepTypes(t, reqs[1]); !slices.Equal(got, []string{"user_input", "thought", "function_call", "function_call", "function_result", "function_result"}) {
		t.Errorf("second request sent %v", got)
	}
	if sig, _ := steps[1]["signature"].(string); sig == "" || steps[1]["summary"] == nil {
		t.Errorf("the thought went back as %v; want its summary and signature", steps[1])
	}
	if ids := srv.InteractionIDs(); len(ids) != 0 {
		t.Errorf("the server kept %v", ids)
	}
	// One request's config can say so too.
	m2 := geminiinteractions.New(srv.Client(), geminiinteractions.Config{})
	f := false
	b := newAgent(t, m2, func(c *agent.Config) { c.GenerateConfig = &genai.GenerateContentConfig{Store: &f} })
	srv.Enqueue(fake.Text("ok"))
	if _, err := b.Run(context.Background(), user("hi")); err != nil {
		t.Fatal(err)
	}
	if r := srv.LastRequest(); r.Store == nil || *r.Store {
		t.Errorf("GenerateContentConfig.Store false sent store %v", r.Store)
	}
}

// Without store, the server checks the signatures it needs: a history
// whose thought lost its signature is refused, as the API refuses it, and
// the loop does not retry the 400.
func TestStatelessSignatureDropped(t *testing.T) {
	srv := fake.NewServer()
	defer srv.Close()
	m := geminiinteractions.New(srv.Client(), geminiinteractions.Config{Stateless: true})
	a := newAgent(t, m, func(c *agent.Config) {
		c.PrepareHistory = func(_ context.Context, h *agent.HistoryInfo) ([]*genai.Content, error) {
			out := make([]*genai.Content, len(h.Contents))
			for i, c := range h.Contents {
				out[i] = &genai.Content{Role: c.Role}
				for _, p := range c.Parts {
					if !p.Thought {
						out[i].Parts = append(out[i].Parts, p)
					}
				}
			}
			return out, nil
		}
	})
	srv.Enqueue(fake.Calls(call("Paris")), fake.Text("unreachable"))
	_, err := a.Run(context.Background(), user("Paris?"))
	var apiErr genai.APIError
	var me *agent.ModelError
	if !errors.As(err, &apiErr) || apiErr.Code != 400 || apiErr.Message != "Request contains an invalid argument." || !errors.As(err, &me) || me.Attempts != 1 {
		t.Errorf("Run() = %v; want the API's 400 after one attempt", err)
	}
	if rj := srv.Rejections(); len(rj) != 1 || rj[0].Rule != "thought-signature" {
		t.Errorf("Rejections() = %+v", rj)
	}
}

// Concurrent runs share one Models: each chain is its own.
func TestConcurrentRuns(t *testing.T) {
	srv := newServer(t)
	m := geminiinteractions.New(srv.Client(), geminiinteractions.Config{})
	a := newAgent(t, m)
	srv.SetReplyFunc(func(r *fake.Request) *fake.Reply {
		if len(r.Contents) == 1 {
			return fake.Calls(call(r.Text()))
		}
		return fake.Text("done " + r.Contents[0].Parts[0].Text)
	})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			city := string(rune('A' + i))
			res, err := a.Run(context.Background(), user(city))
			if err == nil && res.Text != "done "+city {
				err = errors.New("run " + city + " answered " + res.Text)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if s := m.Stats(); s.Chained != 8 || s.Whole != 8 {
		t.Errorf("Stats() = %+v; want each run's second call chained", s)
	}
}

// MaxInteractions bounds what is remembered: a conversation whose
// interaction was forgotten sends its whole history.
func TestMaxInteractions(t *testing.T) {
	srv := newServer(t)
	m := geminiinteractions.New(srv.Client(), geminiinteractions.Config{MaxInteractions: 1})
	a := newAgent(t, m)
	srv.Enqueue(fake.Text("one"), fake.Text("two"), fake.Text("three"))
	first, err := a.Run(context.Background(), user("first"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), user("second")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), append(first.History, genai.NewContentFromText("again", genai.RoleUser))); err != nil {
		t.Fatal(err)
	}
	if r := srv.LastRequest(); r.PreviousInteractionID != "" {
		t.Errorf("the forgotten conversation continued %q", r.PreviousInteractionID)
	}
	m.Forget()
	if s := m.Stats(); s.Whole != 3 {
		t.Errorf("Stats() = %+v", s)
	}
}

// A tool's output that is a Go value (its members in the struct's order)
// and the same output read back from a store (a map, its members sorted)
// are one result: the stored conversation still continues the server's.
func TestStoredStructOutputsChain(t *testing.T) {
	type reading struct {
		Temp float64 `json:"temp"`
		City string  `json:"city"`
	}
	srv := newServer(t)
	m := geminiinteractions.New(srv.Client(), geminiinteractions.Config{})
	a := newAgent(t, m, func(c *agent.Config) {
		c.Tools = toolset.MustNew(toolset.MustFunc("get_weather", "Weather", func(ctx context.Context, in struct {
			City string `json:"city"`
		}) (reading, error) {
			return reading{21.5, in.City}, nil
		}))
	})
	srv.Enqueue(fake.Calls(call("Paris")), fake.Text("21.5 in Paris."), fake.Text("Yes."))
	res, err := a.Run(context.Background(), user("Paris?"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), append(roundTrip(t, res.History), genai.NewContentFromText("Sure?", genai.RoleUser))); err != nil {
		t.Fatal(err)
	}
	if r := srv.LastRequest(); len(r.Input) != 1 || r.PreviousInteractionID != creates(srv)[1].InteractionID {
		t.Errorf("sent previous %q and %d contents; want the last interaction and the new message", r.PreviousInteractionID, len(r.Input))
	}
}
