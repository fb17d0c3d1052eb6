package main

import (
	"bufio"
	"context"
	"encoding/json"
	"github.com/toolnexus/toolnexus-go/examples/server/serverapp"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/examples/internal/demotools"
	"github.com/toolnexus/toolnexus-go/internal/pgtest"
	"github.com/toolnexus/toolnexus-go/session/pgstore"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv(mainArgsEnv); ok {
		// The test binary run again as the command (see startServer).
		os.Args = append([]string{"server"}, strings.Split(args, "\x1f")...)
		main()
		os.Exit(0)
	}
	// genai's dependencies start opencensus's stats worker at init.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"))
}

// start serves the example, offline, on a loopback port until the test
// ends, and returns its URL.
func start(t *testing.T, opts options) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- serve(ctx, opts, ln, slog.New(slog.DiscardHandler)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		http.DefaultClient.CloseIdleConnections()
	})
	return "http://" + ln.Addr().String()
}

// post sends body and returns the data of each event of the stream, or
// the body when the answer is not a stream.
func post(t testing.TB, url, body string) (status int, events []string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, []string{string(b)}
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			events = append(events, data)
		}
	}
	return resp.StatusCode, events
}

// field returns the value of key in the first event that has it.
func field(events []string, key string) string {
	for _, e := range events {
		var m map[string]any
		json.Unmarshal([]byte(e), &m)
		if v, ok := m[key].(string); ok {
			return v
		}
	}
	return ""
}

// The README's session: a run, an approval, a resume, over the AI SDK
// protocol, then a run over AG-UI, all on the offline model.
func TestServerOffline(t *testing.T) {
	url := start(t, options{Options: serverapp.Options{Approve: true}})
	resp, err := http.Get(url + "/")
	if err != nil {
		t.Fatal(err)
	}
	index, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(index), "POST /agui") || !strings.Contains(string(index), "POST /api/chat") || !strings.Contains(string(index), "POST /a2a") {
		t.Errorf("index %q", index)
	}

	_, events := post(t, url+"/api/chat", `{"id":"chat-1","messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"What is (12+7)*3?"}]}]}`)
	all := strings.Join(events, "\n")
	if !strings.Contains(all, `"toolName":"calculate"`) || !strings.Contains(all, `"result":"57"`) || events[len(events)-1] != "[DONE]" {
		t.Errorf("a run:\n%s", all)
	}

	_, events = post(t, url+"/api/chat", `{"id":"chat-2","messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"What is the weather in Paris?"}]}]}`)
	id := field(events, "approvalId")
	if id == "" || !strings.Contains(strings.Join(events, "\n"), `"finishReason":"tool-calls"`) {
		t.Fatalf("no approval request:\n%s", strings.Join(events, "\n"))
	}
	// The run waits: the resume route replays it.
	resp, err = http.Get(url + "/api/chat/chat-2/stream")
	if err != nil {
		t.Fatal(err)
	}
	replay, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(replay), `"tool-approval-request"`) {
		t.Errorf("resume: %d %s", resp.StatusCode, replay)
	}
	_, events = post(t, url+"/api/chat", `{"id":"chat-2","messages":[{"id":"a1","role":"assistant","parts":[{"type":"tool-get_weather","toolCallId":"`+id+
		`","state":"approval-responded","input":{"city":"Paris"},"approval":{"id":"`+id+`","approved":true}}]}]}`)
	if all := strings.Join(events, "\n"); !strings.Contains(all, `"tool-output-available"`) || !strings.Contains(all, "Paris: ") {
		t.Errorf("after the approval:\n%s", all)
	}
	resp, err = http.Get(url + "/api/chat/chat-2/stream")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 {
		t.Errorf("resume after the end: %d", resp.StatusCode)
	}

	_, events = post(t, url+"/agui", `{"threadId":"t1","runId":"r1","messages":[{"id":"m1","role":"user","content":"What time is it in UTC?"}]}`)
	if all := strings.Join(events, "\n"); !strings.Contains(all, `"RUN_STARTED"`) || !strings.Contains(all, `"toolCallName":"current_time"`) ||
		!strings.Contains(events[len(events)-1], `"RUN_FINISHED"`) {
		t.Errorf("AG-UI:\n%s", all)
	}
}

// README's A2A session: the card, a streamed message that waits for an
// approval, the decision on the same task.
func TestServerA2A(t *testing.T) {
	url := start(t, options{Options: serverapp.Options{Approve: true}})
	resp, err := http.Get(url + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	var card struct {
		Name, URL string
		Skills    []struct{ Name string }
	}
	json.NewDecoder(resp.Body).Decode(&card)
	resp.Body.Close()
	// One skill for the agent, then one for each demo tool, in order, then
	// the chart and the file tool.
	want := []string{"demo agent"}
	want = append(want, demotools.Set().Names()...)
	want = append(want, "weather_chart", "load_artifacts")
	var got []string
	for _, skill := range card.Skills {
		got = append(got, skill.Name)
	}
	if card.Name != "demo agent" || card.URL != url+"/a2a" || !slices.Equal(got, want) {
		t.Errorf("card %+v, want skills %v", card, want)
	}
	_, events := post(t, url+"/a2a", `{"jsonrpc":"2.0","id":1,"method":"message/stream","params":{"message":{"kind":"message","messageId":"m1",`+
		`"role":"user","contextId":"ctx-1","parts":[{"kind":"text","text":"What is the weather in Paris?"}]}}}`)
	var last struct {
		Result struct {
			TaskID string
			Status struct {
				State   string
				Message struct {
					Parts []struct {
						Data struct{ ID, Name string }
					}
				}
			}
		}
	}
	json.Unmarshal([]byte(events[len(events)-1]), &last)
	st := last.Result.Status
	if st.State != "input-required" || len(st.Message.Parts) != 2 || st.Message.Parts[1].Data.Name != "adk_request_confirmation" {
		t.Fatalf("the stream ended with %s", events[len(events)-1])
	}
	_, events = post(t, url+"/a2a", `{"jsonrpc":"2.0","id":2,"method":"message/send","params":{"message":{"kind":"message","messageId":"m2",`+
		`"role":"user","taskId":"`+last.Result.TaskID+`","contextId":"ctx-1","parts":[{"kind":"data","data":{"id":"`+st.Message.Parts[1].Data.ID+
		`","name":"adk_request_confirmation","response":{"confirmed":true}},"metadata":{"adk_type":"function_response"}}]}}}`)
	if answer := events[0]; !strings.Contains(answer, `"state":"completed"`) || !strings.Contains(answer, "Paris: ") {
		t.Errorf("after the approval: %s", answer)
	}
}

// Shutting down with a run waiting for approval ends it, saved.
func TestShutdownWithRunWaiting(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- serve(ctx, options{Options: serverapp.Options{Approve: true}}, ln, slog.New(slog.DiscardHandler))
	}()
	defer http.DefaultClient.CloseIdleConnections()
	_, events := post(t, "http://"+ln.Addr().String()+"/api/chat", `{"id":"c","messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"Weather in Oslo?"}]}]}`)
	if field(events, "approvalId") == "" {
		t.Fatalf("no approval request: %v", events)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve: %v", err)
		}
	case <-time.After(20 * time.Second): // a hang guard only
		t.Fatal("the server did not shut down")
	}
}

// With -db a postgres:// URL, the threads are in that PostgreSQL database:
// a thread served by one server is there for the next.
func TestServerPostgres(t *testing.T) {
	db := pgtest.Database(t)
	url := start(t, options{Options: serverapp.Options{DB: db}})
	_, events := post(t, url+"/api/chat", `{"id":"chat-1","messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"What is (12+7)*3?"}]}]}`)
	if all := strings.Join(events, "\n"); !strings.Contains(all, `"result":"57"`) {
		t.Fatalf("a run:\n%s", all)
	}
	store, err := pgstore.Open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	infos, err := store.List(t.Context())
	if err != nil || len(infos) != 1 || infos[0].Len < 3 {
		t.Errorf("the database holds %+v, %v; want the thread of the run", infos, err)
	}
}

// -cors lets a dev server's pages call both protocols: the browser's
// preflight is answered, and the stream is the page's to read.
func TestServerCORS(t *testing.T) {
	var cors serverapp.OriginList
	cors.Set("http://localhost:5173, http://127.0.0.1:5173")
	url := start(t, options{Options: serverapp.Options{CORS: cors}})
	for _, path := range []string{"/api/chat", "/api/chat/c1/stream", "/agui", "/agui/connect"} {
		req, _ := http.NewRequest(http.MethodOptions, url+path, nil)
		req.Header.Set("Origin", "http://127.0.0.1:5173")
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "content-type")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "http://127.0.0.1:5173" ||
			resp.Header.Get("Access-Control-Allow-Headers") != "content-type" {
			t.Errorf("preflight of %s = %d %v", path, resp.StatusCode, resp.Header)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, url+"/api/chat", strings.NewReader(
		`{"id":"chat-1","messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"What is (12+7)*3?"}]}]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", "http://localhost:5173")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Header.Get("Access-Control-Allow-Origin") != "http://localhost:5173" || !strings.Contains(string(body), `"result":"57"`) {
		t.Errorf("POST /api/chat from the dev server: %v\n%s", resp.Header, body)
	}
}

// The stop button: a long count of primes, stopped by DELETE on the
// stream's route while it reports its progress; the stream ends with the
// call answered, and the next message is taken at once.
func TestServerStop(t *testing.T) {
	url := start(t, options{})
	resp, err := http.Post(url+"/api/chat", "application/json", strings.NewReader(
		`{"id":"c1","messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"How many primes below 2 billion?"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var events []string
	for sc.Scan() && !strings.Contains(sc.Text(), `"data-tool-progress"`) {
		events = append(events, sc.Text())
	}
	req, _ := http.NewRequest(http.MethodDelete, url+"/api/chat/c1/stream", nil)
	stop, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(stop.Body)
	stop.Body.Close()
	if stop.StatusCode != http.StatusOK || !strings.Contains(string(body), `"state":"cancelled"`) {
		t.Fatalf("DELETE = %d %s", stop.StatusCode, body)
	}
	for sc.Scan() {
		events = append(events, sc.Text())
	}
	all := strings.Join(events, "\n")
	if !strings.Contains(all, `"toolName":"count_primes"`) || !strings.Contains(all, `"tool-output-error"`) || !strings.Contains(all, `"type":"abort"`) {
		t.Errorf("the stopped stream:\n%s", all)
	}
	_, events = post(t, url+"/api/chat", `{"id":"c1","messages":[{"id":"m2","role":"user","parts":[{"type":"text","text":"What is (12+7)*3?"}]}]}`)
	if all := strings.Join(events, "\n"); !strings.Contains(all, `"result":"57"`) {
		t.Errorf("the next message:\n%s", all)
	}
	// A reload: the chat's messages, the stopped call answered.
	resp, err = http.Get(url + "/api/chat/c1/messages")
	if err != nil {
		t.Fatal(err)
	}
	var messages []struct {
		Role  string
		Parts []struct{ Type, State string }
	}
	json.NewDecoder(resp.Body).Decode(&messages)
	resp.Body.Close()
	var states []string
	for _, m := range messages {
		for _, p := range m.Parts {
			if strings.HasPrefix(p.Type, "tool-") {
				states = append(states, p.Type+" "+p.State)
			}
		}
	}
	want := []string{"tool-count_primes output-error", "tool-calculate output-available"}
	if len(messages) != 4 || !slices.Equal(states, want) {
		t.Errorf("the chat's messages: %d, tool parts %q, want 4 and %q", len(messages), states, want)
	}
}

// The demo agent charts the weather offline: the chat's stream has the
// chart and its CSV as file parts, which download from the server; with
// -db a SQLite file, they are kept in it.
func TestServerChart(t *testing.T) {
	db := t.TempDir() + "/app.db"
	url := start(t, options{Options: serverapp.Options{DB: db}})
	_, events := post(t, url+"/api/chat", `{"id":"chat-c","messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"Chart the temperatures in Paris, Oslo and Tokyo"}]}]}`)
	var (
		files []map[string]any
		text  strings.Builder
	)
	for _, e := range events {
		var m map[string]any
		if json.Unmarshal([]byte(e), &m) != nil {
			continue
		}
		switch m["type"] {
		case "file":
			files = append(files, m)
		case "text-delta":
			text.WriteString(m["delta"].(string))
		}
	}
	if len(files) != 2 || files[0]["url"] != "/artifacts/chat-c/"+demotools.ChartName+"?version=1" || files[1]["mediaType"] != "text/csv" {
		t.Fatalf("file parts %v in:\n%s", files, strings.Join(events, "\n"))
	}
	if !strings.Contains(text.String(), "Here is a chart of the temperatures in Oslo, Paris, Tokyo: weather-chart.png and its data, weather-chart.csv.") {
		t.Errorf("the answer: %q", text.String())
	}
	resp, err := http.Get(url + files[0]["url"].(string))
	if err != nil {
		t.Fatal(err)
	}
	png, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" || !strings.HasPrefix(string(png), "\x89PNG") {
		t.Errorf("the chart: %d %v", resp.StatusCode, resp.Header)
	}
	resp, err = http.Get(url + "/artifacts/chat-c/" + demotools.TableName)
	if err != nil {
		t.Fatal(err)
	}
	csv, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.HasPrefix(string(csv), "city,temperature_c,condition\nParis,") {
		t.Errorf("the CSV: %q", csv)
	}
}
