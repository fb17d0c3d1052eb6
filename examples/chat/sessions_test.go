package main

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/internal/pgtest"
)

// The commands: a first chat with -session, then a second that
// shows the first conversation, on the offline model.
func TestOfflineSessionIsKept(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	first := chatOutput(t, options{session: "demo"}, "What is the weather in Paris?\n")
	if !strings.Contains(first, "Paris: heavy rain") {
		t.Fatalf("first chat:\n%s", first)
	}
	second := chatOutput(t, options{session: "demo"}, "/history\n")
	for _, want := range []string{
		"user:  What is the weather in Paris?\n",
		"model: call get_weather {\"city\":\"Paris\"}\n",
		"tool:  get_weather -> {\"result\":{\"city\":\"Paris\"",
		"model: Paris: heavy rain, 3°C",
	} {
		if !strings.Contains(second, want) {
			t.Errorf("/history lacks %q:\n%s", want, second)
		}
	}
	// A call the user denied is shown denied in the next chat's
	// /history, not as a tool's failure.
	chatOutput(t, options{session: "demo", approve: true}, "What is the weather in Oslo?\nn\n")
	third := chatOutput(t, options{session: "demo"}, "/history\n")
	if want := "tool:  get_weather denied: the user did not allow this call\n"; !strings.Contains(third, want) {
		t.Errorf("/history lacks %q:\n%s", want, third)
	}
	path := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "toolnexus", "chat-sessions.db")
	if _, err := os.Stat(path); err != nil {
		t.Errorf("no sessions file where the user's config goes: %v", err)
	}
}

// A conversation continues in the next chat; /new, /sessions and /reset
// work on the file.
func TestSessionCommands(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	srv := fake.NewServer()
	defer srv.Close()
	opts := options{models: srv.Client().Models, model: "gemini-3-flash-preview", session: "work", sessionDB: db}

	srv.Enqueue(fake.Text("Hi!"))
	chatOutput(t, opts, "hello\n")
	srv.Enqueue(fake.Text("You said hello."), fake.Text("A fresh one."))
	out := chatOutput(t, opts, "what did I say?\n/new\nnew topic\n/sessions\n/new work\n/history\n/reset\n/history\n")
	for _, want := range []string{
		"You said hello.",
		`(conversation "work-2")`,
		"(2 conversations in " + db + ")\n* work-2                 2 contents",
		"\n  work                   4 contents",
		`(conversation "work")`,
		"user:  hello\nmodel: Hi!\nuser:  what did I say?\nmodel: You said hello.\n",
		"(conversation cleared)\n(no conversation yet)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	reqs := srv.Requests()
	if n := len(reqs[1].Contents); n != 3 {
		t.Errorf("the second chat's first request has %d contents; want the first chat's 2 and the question", n)
	}
	if n := len(reqs[2].Contents); n != 1 {
		t.Errorf("the request after /new has %d contents; want 1", n)
	}
}

// The chat trims what it sends once the conversation passes its limit.
func TestChatTrims(t *testing.T) {
	srv := fake.NewServer()
	defer srv.Close()
	srv.SetReplyFunc(func(*fake.Request) *fake.Reply { return fake.Text(strings.Repeat("long answer ", 100)) })
	chatOutput(t, options{models: srv.Client().Models, model: "gemini-2.5-flash", trimAt: 2000},
		strings.Repeat("tell me more\n", 20))
	reqs := srv.Requests()
	if n := len(reqs[len(reqs)-1].Contents); n >= 39 {
		t.Errorf("the last request sent %d contents; want the history trimmed", n)
	}
	if first := reqs[len(reqs)-1].Contents[0].Parts[0].Text; first != "tell me more" {
		t.Errorf("the first message is gone: %q", first)
	}
}

func TestSessionFileErrors(t *testing.T) {
	dir := t.TempDir()
	notDB := filepath.Join(dir, "x.db")
	if err := os.WriteFile(notDB, []byte(strings.Repeat("garbage ", 200)), 0o600); err != nil {
		t.Fatal(err)
	}
	err := run(t.Context(), options{session: "a", sessionDB: notDB}, strings.NewReader(""), &strings.Builder{})
	if err == nil || !strings.Contains(err.Error(), "opening the conversations") {
		t.Errorf("run() with a file that is not a database = %v", err)
	}
}

// With -session-db a postgres:// URL, the conversation is kept in that
// PostgreSQL database, and shown as kept there without the password.
func TestSessionPostgres(t *testing.T) {
	db := pgtest.Database(t)
	srv := fake.NewServer()
	defer srv.Close()
	opts := options{models: srv.Client().Models, model: "gemini-3-flash-preview", session: "work", sessionDB: db}
	srv.Enqueue(fake.Text("Hi!"), fake.Text("You said hello."))
	chatOutput(t, opts, "hello\n")
	out := chatOutput(t, opts, "what did I say?\n/sessions\n")
	password, _ := must(url.Parse(db)).User.Password()
	if !strings.Contains(out, "You said hello.") || !strings.Contains(out, "in postgres://toolnexus@127.0.0.1:") || strings.Contains(out, password) {
		t.Errorf("output:\n%s", out)
	}
	if n := len(srv.Requests()[1].Contents); n != 3 {
		t.Errorf("the second chat's request has %d contents; want the first chat's 2 and the question", n)
	}
}
