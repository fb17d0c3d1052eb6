package geminitest_test

import (
	"net/http"
	"path/filepath"
	"testing"

	"github.com/toolnexus/toolnexus-go/geminitest"
)

// benchConversations is how many conversations a benchmark's recording
// holds: more than any run of it replays.
const benchConversations = 130

// BenchmarkConverseFake has converse's conversation (four requests, two
// of them streams) with the fake server.
func BenchmarkConverseFake(b *testing.B) {
	srv := geminitest.NewServer() // no per-request log, unlike Start
	b.Cleanup(srv.Close)
	client := srv.Client()
	b.ReportAllocs()
	for b.Loop() {
		script(srv)
		if _, err := converse(b, client); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkConverseReplay has the same conversation replayed from a
// recording of it.
func BenchmarkConverseReplay(b *testing.B) {
	file := filepath.Join(b.TempDir(), "bench.json")
	srv := geminitest.NewServer() // no per-request log, unlike Start
	b.Cleanup(srv.Close)
	b.Setenv(geminitest.RecordEnv, "1")
	b.Setenv("CI", "")
	tb := &fakeTB{TB: b, name: "BenchmarkConverseReplay"}
	rec := geminitest.Replay(tb, file, &geminitest.ReplayOptions{BaseURL: srv.URL, APIKey: secretKey, HTTPClient: &http.Client{Transport: srv.ClientConfig().HTTPClient.Transport}})
	for range benchConversations {
		script(srv)
		if _, err := converse(b, rec.Client()); err != nil {
			b.Fatal(err)
		}
	}
	tb.end()
	b.Setenv(geminitest.RecordEnv, "")
	replay := &fakeTB{TB: b, name: "BenchmarkConverseReplay"}
	client := geminitest.Replay(replay, file, nil).Client()
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if n++; n > benchConversations {
			b.Fatalf("the recording holds %d conversations: run fewer", benchConversations)
		}
		if _, err := converse(b, client); err != nil {
			b.Fatal(err)
		}
	}
	if len(replay.errors) > 0 {
		b.Fatal(replay.errors)
	}
}
