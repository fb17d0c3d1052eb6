package fake_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/internal/fake"
	"google.golang.org/genai"
	"google.golang.org/genai/interactions/models/apierrors"
	"google.golang.org/genai/interactions/models/interactions"
	"google.golang.org/genai/interactions/models/operations"
	"google.golang.org/genai/interactions/retry"
)

// The Interactions API through genai's own Interactions client.

var noRetries = operations.WithRetries(retry.Config{Strategy: "none"})

func create(t *testing.T, c *genai.Client, body string) (*operations.CreateInteractionResponse, error) {
	t.Helper()
	var m interactions.CreateModelInteraction
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	in := interactions.NewInteractionsInputUnknown(json.RawMessage(inputOf(t, body)))
	m.Input = &in
	opts := []operations.Option{noRetries}
	if m.Background == nil {
		opts = append(opts, operations.WithAutomaticContinuation(false))
	}
	return c.Interactions.Create(context.Background(), operations.CreateInteractionRequest{Body: operations.NewCreateInteractionRequestBody(m)}, opts...)
}

func inputOf(t *testing.T, body string) string {
	var b struct {
		Input json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		t.Fatal(err)
	}
	return string(b.Input)
}

// rawSteps reads an answer's steps from its body, which the SDK leaves.
func rawSteps(t *testing.T, res *operations.CreateInteractionResponse) []map[string]any {
	t.Helper()
	b, err := io.ReadAll(res.HTTPMeta.Response.Body)
	if err != nil {
		t.Fatal(err)
	}
	var ix struct {
		Steps []map[string]any `json:"steps"`
	}
	if err := json.Unmarshal(b, &ix); err != nil {
		t.Fatal(err)
	}
	return ix.Steps
}

func TestInteractionCreateGetDelete(t *testing.T) {
	srv := fake.NewServer()
	defer srv.Close()
	srv.Enqueue(fake.Calls(fake.Call("get", map[string]any{"city": "Paris"}), fake.Call("get", map[string]any{"city": "Rome"})), fake.Text("Both sunny."))
	c := srv.Client()
	res, err := create(t, c, `{"model":"gemini-3-flash-preview","input":"Paris and Rome?","tools":[{"type":"function","name":"get"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	ix := res.Interaction
	steps := rawSteps(t, res)
	// One signed thought, then the calls with ids and no signature (sec).
	if len(steps) != 3 || steps[0]["type"] != "thought" || steps[0]["signature"] == "" || steps[1]["type"] != "function_call" ||
		steps[1]["id"] == "" || steps[1]["signature"] != nil || *ix.ID == "" || ix.Status != interactions.InteractionStatusCompleted {
		t.Fatalf("interaction %s %s, steps %v", *ix.ID, ix.Status, steps)
	}
	id := *ix.ID
	body := `{"model":"gemini-3-flash-preview","previous_interaction_id":"` + id + `","input":[` +
		`{"type":"function_result","call_id":"` + steps[1]["id"].(string) + `","name":"get","result":"sunny"},` +
		`{"type":"function_result","call_id":"` + steps[2]["id"].(string) + `","name":"get","result":"sunny"}]}`
	res, err = create(t, c, body)
	if err != nil {
		t.Fatal(err)
	}
	if *res.Interaction.PreviousInteractionID != id {
		t.Errorf("previous_interaction_id = %v", res.Interaction.PreviousInteractionID)
	}
	// The record: the whole conversation, and what the input said.
	r := srv.LastRequest()
	if r.Method != fake.MethodCreateInteraction || r.PreviousInteractionID != id || len(r.Contents) != 3 || len(r.Input) != 1 ||
		len(r.LastFunctionResponses("get")) != 2 || r.InteractionID != *res.Interaction.ID {
		t.Errorf("request = %+v", r)
	}
	got, err := c.Interactions.Get(context.Background(), operations.GetInteractionByIDRequest{ID: id, IncludeInput: genai.Ptr(true)}, noRetries)
	if err != nil || *got.Interaction.ID != id || got.Interaction.Input == nil {
		t.Fatalf("Get() = %+v, %v", got, err)
	}
	if _, err := c.Interactions.Delete(context.Background(), operations.DeleteInteractionRequest{ID: id}, noRetries); err != nil {
		t.Fatal(err)
	}
	_, err = c.Interactions.Get(context.Background(), operations.GetInteractionByIDRequest{ID: id}, noRetries)
	var notFound *apierrors.GetInteractionByIDClientError
	if !errors.As(err, &notFound) || notFound.HTTPMeta.Response.StatusCode != 404 || *notFound.Error_.Code != "not_found" {
		t.Errorf("Get() after Delete = %v; want 404 not_found", err)
	}
	if n := len(srv.InteractionIDs()); n != 1 {
		t.Errorf("%d interactions kept; want the second only", n)
	}
}

// An interaction belongs to the key that created it.
func TestInteractionOwners(t *testing.T) {
	srv := fake.NewServer()
	defer srv.Close()
	srv.Enqueue(fake.Text("hi"))
	res, err := create(t, srv.Client(), `{"model":"gemini-3-flash-preview","input":"hi"}`)
	if err != nil {
		t.Fatal(err)
	}
	cfg := srv.ClientConfig()
	cfg.APIKey = "another-key"
	other, err := genai.NewClient(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Interactions.Get(context.Background(), operations.GetInteractionByIDRequest{ID: *res.Interaction.ID}, noRetries); err == nil {
		t.Error("another key read the interaction")
	}
	srv.Enqueue(fake.Text("unreachable"))
	_, err = create(t, other, `{"model":"gemini-3-flash-preview","previous_interaction_id":"`+*res.Interaction.ID+`","input":"hi"}`)
	var e *apierrors.CreateInteractionClientError
	if !errors.As(err, &e) || e.HTTPMeta.Response.StatusCode != 404 {
		t.Errorf("another key continued the interaction: %v", err)
	}
}

// The stream, on the wire: typed events with ids, the sentinel last; a
// GET resumes it after any of its events.
func TestInteractionStream(t *testing.T) {
	srv := fake.NewServer()
	defer srv.Close()
	srv.Enqueue(fake.Parts(&genai.Part{Text: "Hmm.", Thought: true}, &genai.Part{Text: "Hello there."}).WithTextChunk(3))
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1beta/interactions",
		strings.NewReader(`{"model":"gemini-3-flash-preview","input":"hi","stream":true}`))
	req.Header.Set("x-goog-api-key", fake.APIKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := readSSE(t, resp.Body)
	last := events[len(events)-1]
	if resp.Header.Get("Content-Type") != "text/event-stream" || last.typ != "done" || last.data != "[DONE]" {
		t.Fatalf("stream ends %+v", last)
	}
	var kinds []string
	var ids []string
	for _, e := range events[:len(events)-1] {
		var d struct {
			EventType string `json:"event_type"`
			EventID   string `json:"event_id"`
		}
		if err := json.Unmarshal([]byte(e.data), &d); err != nil || d.EventType != e.typ || d.EventID == "" {
			t.Fatalf("event %+v", e)
		}
		kinds = append(kinds, e.typ)
		ids = append(ids, d.EventID)
	}
	want := "interaction.created step.start step.delta step.delta step.delta step.stop step.start step.delta step.delta step.delta step.delta step.stop interaction.completed"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("events %s\nwant   %s", got, want)
	}
	var created struct {
		Interaction struct{ ID string } `json:"interaction"`
	}
	json.Unmarshal([]byte(events[0].data), &created)
	// Resume after the fifth event: the rest, once.
	c := srv.Client()
	res, err := c.Interactions.Get(context.Background(), operations.GetInteractionByIDRequest{ID: created.Interaction.ID, Stream: genai.Ptr(true), LastEventID: &ids[4]}, noRetries)
	if err != nil {
		t.Fatal(err)
	}
	es := res.InteractionSSEStreamEvent
	n := 0
	for es.Next() {
		n++
	}
	if es.Err() != nil || n != len(ids)-5 {
		t.Errorf("resumed %d events, %v; want %d", n, es.Err(), len(ids)-5)
	}
}

type sseEvent struct{ typ, data string }

func readSSE(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			out = append(out, cur)
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.typ = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		default:
			t.Fatalf("line %q", line)
		}
	}
	return out
}

// A background interaction answers in progress, completes after its delay
// unless cancelled; a completed one cannot be cancelled.
func TestInteractionBackgroundAndCancel(t *testing.T) {
	srv := fake.NewServer()
	defer srv.Close()
	c := srv.Client()
	srv.Enqueue(fake.Text("late").WithDelay(time.Hour), fake.Text("soon"))
	res, err := create(t, c, `{"model":"gemini-3-flash-preview","input":"hi","background":true}`)
	if err != nil || res.Interaction.Status != interactions.InteractionStatusInProgress {
		t.Fatalf("Create() = %+v, %v", res, err)
	}
	cancelled, err := c.Interactions.Cancel(context.Background(), operations.CancelInteractionByIDRequest{ID: *res.Interaction.ID}, noRetries)
	if err != nil || cancelled.Interaction.Status != interactions.InteractionStatusCancelled {
		t.Fatalf("Cancel() = %+v, %v", cancelled, err)
	}
	res, err = create(t, c, `{"model":"gemini-3-flash-preview","input":"hi","background":true}`)
	if err != nil {
		t.Fatal(err)
	}
	id := *res.Interaction.ID
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := c.Interactions.Get(context.Background(), operations.GetInteractionByIDRequest{ID: id}, noRetries)
		if err != nil {
			t.Fatal(err)
		}
		if got.Interaction.Status == interactions.InteractionStatusCompleted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the background interaction never completed")
		}
		time.Sleep(time.Millisecond)
	}
	_, err = c.Interactions.Cancel(context.Background(), operations.CancelInteractionByIDRequest{ID: id}, noRetries)
	var e *apierrors.CancelInteractionByIDClientError
	if !errors.As(err, &e) || e.HTTPMeta.Response.StatusCode != 400 {
		t.Errorf("Cancel() of a completed interaction = %v; want a 400", err)
	}
}

// Errors come in the API's shape: a string code, a message, the
// RetryInfo of a 429.
func TestInteractionErrors(t *testing.T) {
	srv := fake.NewServer()
	defer srv.Close()
	srv.Enqueue(fake.RateLimited(2 * time.Second))
	_, err := create(t, srv.Client(), `{"model":"gemini-3-flash-preview","input":"hi"}`)
	var e *apierrors.CreateInteractionClientError
	if !errors.As(err, &e) || e.HTTPMeta.Response.StatusCode != 429 || *e.Error_.Code != "resource_exhausted" || *e.Error_.Message != fake.RateLimitMessage {
		t.Fatalf("Create() = %v", err)
	}
	body, _ := io.ReadAll(e.HTTPMeta.Response.Body)
	if !strings.Contains(string(body), `"retryDelay":"2s"`) {
		t.Errorf("429 body = %s", body)
	}
	// A field the API does not know (the SDK would drop it).
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1beta/interactions", strings.NewReader(`{"model":"gemini-3-flash-preview","input":"hi","outputs":[]}`))
	req.Header.Set("x-goog-api-key", fake.APIKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || !strings.Contains(string(body), `"code":"invalid_request"`) {
		t.Errorf("outputs: %d %s", resp.StatusCode, body)
	}
}
