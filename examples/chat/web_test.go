package main

import (
	"bufio"
	"context"
	"encoding/json"
	"github.com/gorilla/websocket"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// startWeb runs the chat with -web on a free port and returns the page's
// address; the chat stops, and must return nil, when the test ends.
func startWeb(t *testing.T, opts options) string {
	t.Helper()
	opts.web, opts.clock = "127.0.0.1:0", fixedClock
	ctx, cancel := context.WithCancel(context.Background())
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, opts, strings.NewReader(""), w)
		w.CloseWithError(io.EOF)
		done <- err
	}()
	urls := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`Serving the dev UI at (http://\S+/)`)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run() = %v", err)
		}
	})
	select {
	case u := <-urls:
		return u
	case err := <-done:
		t.Fatalf("the chat ended: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the chat printed no address")
	}
	return ""
}

// ask posts a message to the page's chat route and returns the stream.
func ask(t *testing.T, base, thread, text string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"id": thread, "messages": []any{map[string]any{
		"id": "m1", "role": "user", "parts": []any{map[string]any{"type": "text", "text": text}}}}})
	resp, err := http.Post(base+"api/chat", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("POST api/chat: %d %s", resp.StatusCode, b)
	}
	return string(b)
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// -web serves the same agent, offline: its tools, the weather answer.
func TestWeb(t *testing.T) {
	base := startWeb(t, options{approve: false})
	stream := ask(t, base, "t1", "What is the weather in Paris and Tokyo?")
	for _, want := range []string{`"toolName":"get_weather","input":{"city":"Paris"}`, `"toolName":"get_weather","input":{"city":"Tokyo"}`, "Paris: heavy"} {
		if !strings.Contains(stream, want) {
			t.Errorf("the stream lacks %s:\n%s", want, stream)
		}
	}
	var info struct {
		Agent struct {
			Name  string
			Model string
			Tools []struct{ Name string }
		}
		Recording bool
	}
	getJSON(t, base+"api/info", &info)
	if info.Agent.Name != "chat" || info.Agent.Model != "gemini-3-offline-demo" || len(info.Agent.Tools) != 4 || !info.Recording {
		t.Errorf("info: %+v", info)
	}
}

// -approve in the page: the call waits for its approval. A tool run by
// hand from the Agent page runs: the page's user, who approves the calls,
// asked for it.
func TestWebApprove(t *testing.T) {
	base := startWeb(t, options{approve: true})
	stream := ask(t, base, "t1", "What is the weather in Paris?")
	if !strings.Contains(stream, `"type":"tool-approval-request"`) || strings.Contains(stream, "tool-output-available") {
		t.Errorf("the stream:\n%s", stream)
	}
	resp, err := http.Post(base+"api/tools/get_weather/run", "application/json", strings.NewReader(`{"args":{"city":"Oslo"}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), "Oslo") || strings.Contains(string(b), `"isError":true`) {
		t.Errorf("running get_weather by hand under -approve: %d %s", resp.StatusCode, b)
	}
}

// -session: the terminal's conversation is the page's thread, and the
// page's thread the terminal's conversation.
func TestWebSession(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	chatOutput(t, options{session: "demo", sessionDB: db}, "What is the weather in Paris?\n")
	base := startWeb(t, options{session: "demo", sessionDB: db})
	var info struct{ Thread string }
	getJSON(t, base+"api/info", &info)
	var page struct {
		Threads []struct {
			ID  string
			Len int
		}
	}
	getJSON(t, base+"api/threads", &page)
	if threads := page.Threads; info.Thread != "demo" || len(threads) != 1 || threads[0].ID != "demo" || threads[0].Len != 4 {
		t.Fatalf("the page opens %q; threads %+v", info.Thread, threads)
	}
	ask(t, base, "demo", "And the weather in Tokyo?")
	var th struct{ Len int }
	getJSON(t, base+"api/threads/demo", &th)
	if th.Len != 8 {
		t.Errorf("the thread after the page's message: %d contents", th.Len)
	}
	// The terminal chat continues what the page added.
	out := chatOutput(t, options{session: "demo", sessionDB: db}, "/history\n")
	if !strings.Contains(out, "user:  And the weather in Tokyo?") {
		t.Errorf("the terminal's history:\n%s", out)
	}
}

// -web offline: the page's Voice button has the offline model behind it
// (api/info says live; api/live is the websocket): a spoken turn is taken
// for the weather in Paris and answered in speech, its tool call shown.
func TestWebVoice(t *testing.T) {
	base := startWeb(t, options{})
	var info struct{ Live bool }
	getJSON(t, base+"api/info", &info)
	if !info.Live {
		t.Fatal("api/info: no live")
	}
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+"api/live?thread=spoken", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if err := ws.WriteMessage(websocket.BinaryMessage, make([]byte, 3200)); err != nil { // 100 ms at 16 kHz
		t.Fatal(err)
	}
	if err := ws.WriteMessage(websocket.TextMessage, []byte(`{"type":"audio_end"}`)); err != nil {
		t.Fatal(err)
	}
	var seen []string
	var heard, said string
	for {
		kind, data, err := ws.ReadMessage()
		if err != nil {
			t.Fatalf("after %v: %v", seen, err)
		}
		if kind == websocket.BinaryMessage {
			continue
		}
		var m struct{ Type, Text, Name string }
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		seen = append(seen, m.Type)
		switch m.Type {
		case "input_transcript":
			heard += m.Text
		case "output_transcript":
			said += m.Text
		case "error":
			t.Fatalf("error: %s", data)
		}
		if m.Type == "turn_complete" {
			break
		}
	}
	if !strings.Contains(heard, "weather in Paris") || !strings.Contains(said, "Paris: ") || !strings.Contains(strings.Join(seen, " "), "tool_call tool_result") {
		t.Errorf("heard %q, said %q; events %v", heard, said, seen)
	}
}
