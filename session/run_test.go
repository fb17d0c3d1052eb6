package session_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// model3 is a Gemini 3 model: the fake then requires every function call
// of the current turn to carry its thought signature, and sends them.
const model3 = "gemini-3-flash-preview"

var ctx = context.Background()

// newServer starts a fake Gemini server, closed when the test ends, that
// fails the test if any request broke the protocol.
func newServer(t *testing.T) *fake.Server {
	t.Helper()
	srv := fake.NewServer()
	t.Cleanup(func() {
		for _, rj := range srv.Rejections() {
			t.Errorf("the fake rejected request #%d (rule %s): %s", rj.Seq, rj.Rule, rj.Err.Message)
		}
		srv.Close()
	})
	return srv
}

type cityIn struct {
	City string `json:"city"`
}

// weather is a get_weather tool; a call for "slow" waits for its context.
var weather = toolset.MustFunc("get_weather", "Current weather for a city", func(ctx context.Context, in cityIn) (string, error) {
	if in.City == "slow" {
		<-ctx.Done()
		return "", ctx.Err()
	}
	return "sunny in " + in.City, nil
})

func newAgent(t *testing.T, srv *fake.Server, edit ...func(*agent.Config)) *agent.Agent {
	t.Helper()
	cfg := agent.Config{Models: srv.Client().Models, Model: model3, Tools: toolset.MustNew(weather),
		Retry: agent.RetryPolicy{MaxAttempts: 1}}
	for _, e := range edit {
		e(&cfg)
	}
	a, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func call(city string) *genai.FunctionCall {
	return fake.Call("get_weather", map[string]any{"city": city})
}

// Two runs on one conversation: the second sends the first's history, and
// the store ends up with the whole conversation, which the second Result's
// History is.
func TestRunSavesAndContinues(t *testing.T) {
	srv := newServer(t)
	a := newAgent(t, srv)
	store := session.NewMemory()

	srv.Enqueue(fake.Calls(call("Paris")), fake.Text("Sunny in Paris."))
	res, err := session.Run(ctx, a, store, "alice", genai.Text("Weather in Paris?")...)
	if err != nil || res.Text != "Sunny in Paris." {
		t.Fatalf("first Run = %q, %v", res.Text, err)
	}
	srv.Enqueue(fake.Text("You asked about Paris."))
	res, err = session.Run(ctx, a, store, "alice", genai.Text("Which city did I ask about?")...)
	if err != nil {
		t.Fatalf("second Run = %v", err)
	}
	if sent := srv.LastRequest().Contents; len(sent) != 5 {
		t.Errorf("the second run sent %d contents; want the first run's 4 and the new message", len(sent))
	}
	stored, err := store.Load(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(res.History, stored); diff != "" {
		t.Errorf("stored conversation differs from Result.History (-result +stored):\n%s", diff)
	}
	if len(stored) != 6 {
		t.Errorf("%d contents stored; want 6", len(stored))
	}
}

// Whatever way a run fails, what it did is saved up to a point where the
// conversation goes on: a Gemini 3 model continues it (with no new input,
// so that the saved function calls are checked for their signatures), and
// the fake accepts every request.
func TestFailedRunsAreSavedContinuably(t *testing.T) {
	for _, tc := range []struct {
		name    string
		replies []*fake.Reply
		edit    func(*agent.Config)
		cancel  bool // cancel the run once a tool starts
		stream  bool
		wantErr func(error) bool
		saved   int // contents saved, input included
	}{
		{name: "model call fails after calls", replies: []*fake.Reply{fake.Calls(call("Paris"), call("Oslo")), fake.Error(http.StatusBadRequest, "boom")},
			wantErr: isAPIError(http.StatusBadRequest), saved: 3},
		{name: "turn limit", replies: []*fake.Reply{fake.Calls(call("Paris")), fake.Calls(call("Oslo"))},
			edit: func(c *agent.Config) { c.MaxTurns = 2 }, wantErr: is(agent.ErrMaxTurns), saved: 5},
		{name: "cancelled during a tool", replies: []*fake.Reply{fake.Calls(call("Paris"), call("slow"))}, cancel: true,
			wantErr: is(context.Canceled), saved: 3},
		{name: "first model call fails", replies: []*fake.Reply{fake.Error(http.StatusInternalServerError, "down")},
			wantErr: isAPIError(http.StatusInternalServerError), saved: 1},
		{name: "stream: model call fails after calls", stream: true,
			replies: []*fake.Reply{fake.Calls(call("Paris")), fake.Error(http.StatusBadRequest, "boom")},
			wantErr: isAPIError(http.StatusBadRequest), saved: 3},
		{name: "stream: cancelled during a tool", stream: true, cancel: true,
			replies: []*fake.Reply{fake.Calls(call("slow"))}, wantErr: is(context.Canceled), saved: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t)
			var edits []func(*agent.Config)
			if tc.edit != nil {
				edits = append(edits, tc.edit)
			}
			runCtx, cancel := context.WithCancel(ctx)
			defer cancel()
			if tc.cancel {
				edits = append(edits, func(c *agent.Config) {
					c.Observer = agent.ObserverFunc(func(_ context.Context, e *agent.Event) {
						if e.Kind == agent.EventToolCall && e.Call.Args["city"] == "slow" {
							cancel()
						}
					})
				})
			}
			a := newAgent(t, srv, edits...)
			store := session.NewMemory()
			srv.Enqueue(tc.replies...)
			res, err := runOrStream(runCtx, tc.stream, a, store, "c", genai.Text("Weather in Paris and Oslo?")...)
			if !tc.wantErr(err) {
				t.Fatalf("Run() error = %v; not the failure expected", err)
			}
			stored, lerr := store.Load(ctx, "c")
			if lerr != nil {
				t.Fatal(lerr)
			}
			if diff := cmp.Diff(res.History, stored); diff != "" {
				t.Errorf("stored differs from the partial Result.History (-result +stored):\n%s", diff)
			}
			if len(stored) != tc.saved {
				t.Errorf("%d contents saved; want %d", len(stored), tc.saved)
			}
			// The conversation goes on from there, signatures checked.
			srv.Enqueue(fake.Text("Here is what I found."))
			if _, err := session.Run(ctx, a, store, "c"); err != nil {
				t.Errorf("continuing the saved conversation: %v", err)
			}
			srv.Enqueue(fake.Text("Anything else?"))
			if _, err := session.Run(ctx, a, store, "c", genai.Text("Thanks.")...); err != nil {
				t.Errorf("continuing with a new message: %v", err)
			}
		})
	}
}

func is(target error) func(error) bool {
	return func(err error) bool { return errors.Is(err, target) }
}

func isAPIError(code int) func(error) bool {
	return func(err error) bool {
		var ae genai.APIError
		return errors.As(err, &ae) && ae.Code == code
	}
}

// runOrStream runs with session.Run, or with session.Stream and returns
// what its EventDone carried.
func runOrStream(ctx context.Context, stream bool, a *agent.Agent, store session.Store, id string, input ...*genai.Content) (*agent.Result, error) {
	if !stream {
		return session.Run(ctx, a, store, id, input...)
	}
	var res *agent.Result
	var err error
	for e, e2 := range session.Stream(ctx, a, store, id, input...) {
		if e.Kind == agent.EventDone {
			res, err = e.Result, e2
			if e.Err != e2 {
				panic("EventDone.Err differs from the yielded error")
			}
		}
	}
	return res, err
}

// A Stream consumer that breaks out of its loop stops the run, which is
// saved as far as it went before Stream returns.
func TestStreamConsumerBreaks(t *testing.T) {
	srv := newServer(t)
	a := newAgent(t, srv)
	store := session.NewMemory()
	srv.Enqueue(fake.Calls(call("Paris"), call("Oslo")))
	for e, err := range session.Stream(ctx, a, store, "c", genai.Text("Weather?")...) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Kind == agent.EventToolResult {
			break
		}
	}
	stored, err := store.Load(ctx, "c")
	if err != nil || len(stored) != 3 {
		t.Fatalf("after the consumer broke: %d contents stored, %v; want the question, the calls and their answers", len(stored), err)
	}
	srv.Enqueue(fake.Text("Sunny in both."))
	if _, err := session.Run(ctx, a, store, "c"); err != nil {
		t.Errorf("continuing: %v", err)
	}
}

// The events of session.Stream are the agent's.
func TestStreamEvents(t *testing.T) {
	srv := newServer(t)
	a := newAgent(t, srv)
	store := session.NewMemory()
	srv.Enqueue(fake.Calls(call("Paris")), fake.Text("Sunny."))
	var kinds []string
	var text strings.Builder
	for e, err := range session.Stream(ctx, a, store, "c", genai.Text("Weather?")...) {
		if err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, e.Kind.String())
		if e.Kind == agent.EventText {
			text.WriteString(e.Text)
		}
	}
	if got := strings.Join(kinds, " "); !strings.HasPrefix(got, "RunStart ModelRequest") || !strings.HasSuffix(got, "TurnEnd Done") ||
		!strings.Contains(got, "ToolCall ToolResult") {
		t.Errorf("events = %s", got)
	}
	if text.String() != "Sunny." {
		t.Errorf("streamed text = %q", text.String())
	}
	if stored, _ := store.Load(ctx, "c"); len(stored) != 4 {
		t.Errorf("%d contents stored; want 4", len(stored))
	}
}

// failingStore is a Memory store whose Load or Append fails.
type failingStore struct {
	session.Memory
	loadErr, appendErr error
}

func (s *failingStore) Load(ctx context.Context, id string) ([]*genai.Content, error) {
	if s.loadErr != nil {
		return nil, s.loadErr
	}
	return s.Memory.Load(ctx, id)
}

func (s *failingStore) Append(ctx context.Context, id string, contents []*genai.Content) error {
	if s.appendErr != nil {
		return s.appendErr
	}
	return s.Memory.Append(ctx, id, contents)
}

var errDisk = errors.New("disk full")

// A failure to save is reported, joined with the run's own error, and the
// Result is the run's.
func TestSaveFails(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprint("stream=", stream), func(t *testing.T) {
			srv := newServer(t)
			a := newAgent(t, srv)
			store := &failingStore{appendErr: errDisk}

			srv.Enqueue(fake.Text("Hi."))
			res, err := runOrStream(ctx, stream, a, store, "c", genai.Text("Hello")...)
			if !errors.Is(err, errDisk) || !strings.Contains(err.Error(), `session: saving the run to "c": disk full`) {
				t.Errorf("error = %v; want the save's failure", err)
			}
			if res == nil || res.Text != "Hi." {
				t.Errorf("Result = %+v; want the run's", res)
			}

			srv.Enqueue(fake.Error(http.StatusBadRequest, "bad"))
			_, err = runOrStream(ctx, stream, a, store, "c", genai.Text("Hello")...)
			if !errors.Is(err, errDisk) || !isAPIError(http.StatusBadRequest)(err) {
				t.Errorf("error = %v; want both the run's and the save's", err)
			}
		})
	}
}

// A conversation that cannot be loaded is not run.
func TestLoadFails(t *testing.T) {
	for _, stream := range []bool{false, true} {
		srv := newServer(t)
		a := newAgent(t, srv)
		res, err := runOrStream(ctx, stream, a, &failingStore{loadErr: errDisk}, "c", genai.Text("Hello")...)
		if !errors.Is(err, errDisk) || res == nil || len(res.History) != 1 {
			t.Errorf("stream=%v: Run() = %+v, %v; want the load's error and the input", stream, res, err)
		}
		if n := len(srv.Requests()); n != 0 {
			t.Errorf("stream=%v: %d model calls; want none", stream, n)
		}
	}
}

// Nothing to run is an error, not a request the API refuses.
func TestNothingToRun(t *testing.T) {
	srv := newServer(t)
	a := newAgent(t, srv)
	if _, err := session.Run(ctx, a, session.NewMemory(), "empty"); err == nil || !strings.Contains(err.Error(), "nothing to run") {
		t.Errorf("Run() on an empty conversation without input = %v; want an error", err)
	}
	if _, err := session.Run(ctx, a, session.NewMemory(), "", genai.Text("hi")...); err == nil {
		t.Errorf("Run() with an empty id = nil error")
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d model calls; want none", n)
	}
}

// Runs that overlap on one conversation each save their whole exchange;
// none is lost, none is split.
func TestOverlappingRuns(t *testing.T) {
	srv := newServer(t)
	srv.SetReplyFunc(func(r *fake.Request) *fake.Reply {
		last := r.Contents[len(r.Contents)-1]
		if last.Parts[0].FunctionResponse != nil {
			return fake.Text("done " + last.Parts[0].FunctionResponse.Response["result"].(string))
		}
		time.Sleep(time.Millisecond)
		return fake.Calls(call(last.Parts[0].Text))
	})
	a := newAgent(t, srv)
	store := session.NewMemory()
	const runs = 8
	var wg sync.WaitGroup
	for i := range runs {
		wg.Go(func() {
			if _, err := session.Run(ctx, a, store, "shared", genai.Text(fmt.Sprint("city-", i))...); err != nil {
				t.Errorf("Run %d = %v", i, err)
			}
		})
	}
	wg.Wait()
	stored, err := store.Load(ctx, "shared")
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != runs*4 {
		t.Fatalf("%d contents; want %d", len(stored), runs*4)
	}
	for i := 0; i < len(stored); i += 4 {
		city := stored[i].Parts[0].Text
		if fc := stored[i+1].Parts[0].FunctionCall; fc == nil || fc.Args["city"] != city ||
			stored[i+2].Parts[0].FunctionResponse == nil || stored[i+3].Parts[0].Text != "done sunny in "+city {
			t.Errorf("exchange at %d is not whole: %s", i, city)
		}
	}
	srv.SetReplyFunc(nil)
	srv.Enqueue(fake.Text("ok"))
	if _, err := session.Run(ctx, a, store, "shared", genai.Text("and now?")...); err != nil {
		t.Errorf("continuing the interleaved conversation: %v", err)
	}
}
