package artifact_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/artifact"
	"github.com/toolnexus/toolnexus-go/geminitest"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

const model = "gemini-3-flash-preview"

// chartPNG is a small PNG-looking image.
func chartPNG(size int) []byte {
	b := make([]byte, size)
	copy(b, "\x89PNG\r\n\x1a\n")
	for i := 8; i < size; i++ {
		b[i] = byte(i * 7)
	}
	return b
}

// drawTool returns a tool that draws a chart of size bytes named name.
func drawTool(name string, size int) *toolset.Tool {
	return toolset.MustFunc("draw_chart", "Draws a chart.", func(ctx context.Context, in struct{}) (toolset.MediaOutput, error) {
		return toolset.MediaOutput{Output: "a chart", Media: []toolset.Media{{MIMEType: "image/png", Data: chartPNG(size), Name: name}}}, nil
	})
}

// requestJSON returns the body of the server's n-th request (from 1).
func requestJSON(t *testing.T, srv *geminitest.Server, n int) string {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) < n {
		t.Fatalf("%d requests, want at least %d", len(reqs), n)
	}
	return string(reqs[n-1].Body)
}

// A tool's media become a file of the run's thread: the history holds a
// reference, the request the model gets holds the bytes inline (a small
// file), and the file is in the store.
func TestKeeperToolFileInline(t *testing.T) {
	ctx := artifact.WithScope(context.Background(), "alice", "t1")
	srv := geminitest.Start(t)
	store := artifact.NewMemory(0)
	keeper := artifact.NewKeeper(store, artifact.KeeperOptions{Uploader: srv.Client().Files})
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model, Files: keeper,
		Tools: toolset.MustNew(drawTool("chart.png", 2000))})
	if err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(geminitest.Calls(geminitest.Call("draw_chart", nil)), geminitest.Text("Here is your chart."))
	res, err := a.Run(ctx, genai.Text("Draw a chart."))
	if err != nil {
		t.Fatal(err)
	}
	list, err := store.List(ctx, "alice", "t1")
	if err != nil || len(list) != 1 || list[0].Name != "chart.png" || list[0].Size != 2000 || list[0].ContentType != "image/png" {
		t.Fatalf("store.List = %+v, %v", list, err)
	}
	fr := res.History[2].Parts[0].FunctionResponse
	if len(fr.Parts) != 1 || fr.Parts[0].FileData == nil || fr.Parts[0].FileData.FileURI != "artifact:chart.png?version=1" || fr.Parts[0].InlineData != nil {
		t.Fatalf("the history's function response parts = %s; want a reference", mustJSON(fr.Parts))
	}
	if m := res.Turns[0].Results[0].Media; len(m) != 1 || m[0].URI != "artifact:chart.png?version=1" || m[0].Data != nil {
		t.Errorf("the turn's result media = %+v; want the reference", m)
	}
	body := requestJSON(t, srv, 2)
	if !strings.Contains(body, `"inlineData":{"data":"iVBORw0KGgo`) || strings.Contains(body, "artifact:") {
		t.Errorf("the second request does not send the chart inline: %.400s", body)
	}
	if len(srv.Files()) != 0 {
		t.Errorf("a file under the inline limit was uploaded")
	}
}

// A file over the inline limit is uploaded with the Files API once per
// version, named by its URI in every later request, and uploaded again
// when its upload nears its expiry.
func TestKeeperUploadsOnce(t *testing.T) {
	start := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	var (
		mu  sync.Mutex
		now = start
	)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	srv := geminitest.Start(t)
	srv.SetTimeNowFunc(clock)
	ctx := artifact.WithScope(context.Background(), "alice", "t1")
	store := artifact.NewMemory(0)
	keeper := artifact.NewKeeper(store, artifact.KeeperOptions{Uploader: srv.Client().Files, InlineLimit: 1024, Now: clock})
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model, Files: keeper,
		Tools: toolset.MustNew(drawTool("chart.png", 50_000))})
	if err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(geminitest.Calls(geminitest.Call("draw_chart", nil)), geminitest.Text("Here."))
	res, err := a.Run(ctx, genai.Text("Draw."))
	if err != nil {
		t.Fatal(err)
	}
	files := srv.Files()
	if len(files) != 1 || files[0].Size != 50_000 || files[0].MIMEType != "image/png" || files[0].DisplayName != "chart.png" {
		t.Fatalf("uploads: %+v", files)
	}
	body := requestJSON(t, srv, len(srv.Requests()))
	if !strings.Contains(body, `"fileUri":"`+files[0].URI+`"`) || strings.Contains(body, "inlineData") {
		t.Fatalf("the request after the tool does not name the upload: %.600s", body)
	}
	// Three more turns: no upload, each request names the file.
	history := res.History
	for range 3 {
		srv.Enqueue(geminitest.Text("Still the same chart."))
		res, err = a.Run(ctx, append(history, genai.NewContentFromText("And now?", genai.RoleUser)))
		if err != nil {
			t.Fatal(err)
		}
		history = res.History
		advance(10 * time.Hour)
	}
	if n := len(srv.Files()); n != 1 {
		t.Errorf("%d uploads after 3 more turns; want 1", n)
	}
	// 47 h after the upload its expiry is within UploadMargin: uploaded again.
	advance(17 * time.Hour)
	srv.Enqueue(geminitest.Text("Yes."))
	if _, err := a.Run(ctx, append(history, genai.NewContentFromText("Again?", genai.RoleUser))); err != nil {
		t.Fatalf("the turn after the upload's expiry: %v", err)
	}
	files = srv.Files()
	if len(files) != 2 || !strings.Contains(requestJSON(t, srv, len(srv.Requests())), `"fileUri":"`+files[1].URI+`"`) {
		t.Errorf("after the upload neared its expiry: %d live files, and the request does not name the new one", len(files))
	}
	uploads := 0
	for _, r := range srv.Requests() {
		if r.Method == geminitest.MethodUploadFile && r.Header.Get("X-Goog-Upload-Command") == "start" {
			uploads++
		}
	}
	if uploads != 2 {
		t.Errorf("%d uploads; want 2 (the first, and one when it neared its expiry)", uploads)
	}
}

// A user's message with a file inline is kept as a reference; the model
// reads the file inline (small) or through the Files API (large).
func TestKeeperUserUpload(t *testing.T) {
	for _, tc := range []struct {
		name   string
		size   int
		inline bool
	}{{"inline", 3000, true}, {"uploaded", 300_000, false}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := geminitest.Start(t)
			ctx := artifact.WithScope(context.Background(), "bob", "t")
			store := artifact.NewMemory(0)
			keeper := artifact.NewKeeper(store, artifact.KeeperOptions{Uploader: srv.Client().Files})
			pdf := append([]byte("%PDF-1.7\n"), bytes.Repeat([]byte("x"), tc.size)...)
			msg := &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{
				{InlineData: &genai.Blob{MIMEType: "application/pdf", Data: pdf, DisplayName: "report.pdf"}}, {Text: "Summarize it."}}}
			kept, err := keeper.KeepMessage(ctx, msg)
			if err != nil {
				t.Fatal(err)
			}
			if kept.Parts[0].FileData == nil || kept.Parts[0].FileData.FileURI != "artifact:report.pdf?version=1" || kept.Parts[1].Text != "Summarize it." {
				t.Fatalf("KeepMessage = %s", mustJSON(kept))
			}
			if msg.Parts[0].InlineData == nil {
				t.Error("KeepMessage modified its message")
			}
			a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model, Files: keeper})
			if err != nil {
				t.Fatal(err)
			}
			srv.Enqueue(geminitest.Text("It is a report."))
			if _, err := a.Run(ctx, []*genai.Content{kept}); err != nil {
				t.Fatal(err)
			}
			body := requestJSON(t, srv, len(srv.Requests()))
			files := srv.Files()
			if tc.inline {
				if !strings.Contains(body, `"inlineData":{"data":"JVBERi0xLjcK`) || len(files) != 0 {
					t.Errorf("the model did not get the file inline: %d uploads, body %.300s", len(files), body)
				}
				return
			}
			if len(files) != 1 || !bytes.Equal(files[0].Data, pdf) || !strings.Contains(body, `"fileUri":"`+files[0].URI+`"`) {
				t.Errorf("the model did not get the file through the Files API: %d uploads, body %.300s", len(files), body)
			}
		})
	}
}

// References the model cannot read, or to files deleted, become a
// sentence; the thread goes on.
func TestKeeperUnreadable(t *testing.T) {
	ctx := artifact.WithScope(context.Background(), "carol", "t")
	store := artifact.NewMemory(0)
	keeper := artifact.NewKeeper(store, artifact.KeeperOptions{})
	zip, err := keeper.Save(ctx, "data.zip", "application/zip", strings.NewReader("PK\x03\x04"))
	if err != nil {
		t.Fatal(err)
	}
	gone, err := keeper.Save(ctx, "gone.png", "image/png", bytes.NewReader(chartPNG(100)))
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Delete(ctx, gone.Key, 0); err != nil {
		t.Fatal(err)
	}
	csv, err := keeper.Save(ctx, "user:table.csv", "text/csv", strings.NewReader("a,b\n1,2\n"))
	if err != nil {
		t.Fatal(err)
	}
	contents := []*genai.Content{{Role: genai.RoleUser, Parts: []*genai.Part{artifact.Part(zip), artifact.Part(gone), artifact.Part(csv), {Text: "Look."}}}}
	out, err := keeper.Resolve(ctx, contents)
	if err != nil {
		t.Fatal(err)
	}
	p := out[0].Parts
	if p[0].Text != "[the file data.zip, version 1: application/zip, 4 bytes, which the model cannot read]" ||
		p[1].Text != "[the file gone.png, version 1, was deleted]" ||
		p[2].InlineData == nil || p[2].InlineData.MIMEType != "text/plain" || string(p[2].InlineData.Data) != "a,b\n1,2\n" || p[3].Text != "Look." {
		t.Errorf("Resolve = %s", mustJSON(out))
	}
	if contents[0].Parts[0].FileData == nil {
		t.Error("Resolve modified its contents")
	}
	if _, err := keeper.Resolve(context.Background(), contents); err == nil {
		t.Error("Resolve without a scope succeeded")
	}
	if out, _ := keeper.Resolve(context.Background(), []*genai.Content{genai.NewContentFromText("no files", genai.RoleUser)}); len(out) != 1 {
		t.Error("Resolve of contents without references changed them")
	}
}

// Every save of a file is a version, however many one turn makes
// (adk-python#474: only the first change of a step was kept): two calls
// of a tool in one turn each keep a version, and each function response
// names its own.
func TestKeeperEveryChange(t *testing.T) {
	srv := geminitest.Start(t)
	ctx := artifact.WithScope(context.Background(), "dave", "t")
	store := artifact.NewMemory(0)
	keeper := artifact.NewKeeper(store, artifact.KeeperOptions{})
	n := 0
	var mu sync.Mutex
	tool := toolset.MustFunc("note", "Writes a note.", func(ctx context.Context, in struct {
		Text string `json:"text"`
	}) (toolset.MediaOutput, error) {
		mu.Lock()
		n++
		mu.Unlock()
		return toolset.MediaOutput{Media: []toolset.Media{{MIMEType: "text/plain", Data: []byte(in.Text), Name: "notes.txt"}}}, nil
	})
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model, Files: keeper, Tools: toolset.MustNew(tool), MaxParallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(geminitest.Calls(geminitest.Call("note", map[string]any{"text": "first"}), geminitest.Call("note", map[string]any{"text": "second"})),
		geminitest.Text("Done."))
	res, err := a.Run(ctx, genai.Text("Take notes."))
	if err != nil {
		t.Fatal(err)
	}
	vs, err := store.Versions(ctx, artifact.Key{User: "dave", Thread: "t", Name: "notes.txt"})
	if err != nil || len(vs) != 2 {
		t.Fatalf("Versions = %+v, %v; want 2", vs, err)
	}
	uris := map[string]bool{}
	for _, p := range res.History[2].Parts {
		uris[p.FunctionResponse.Parts[0].FileData.FileURI] = true
	}
	if !uris["artifact:notes.txt?version=1"] || !uris["artifact:notes.txt?version=2"] {
		t.Errorf("the function responses name %v; want versions 1 and 2", uris)
	}
}

// The tool lists the thread's files and the user's own, and loads them:
// text as text, anything else as a reference the Keeper resolves.
func TestKeeperTool(t *testing.T) {
	srv := geminitest.Start(t)
	ctx := artifact.WithScope(context.Background(), "erin", "t")
	store := artifact.NewMemory(0)
	keeper := artifact.NewKeeper(store, artifact.KeeperOptions{})
	for _, f := range []struct{ name, ct, data string }{
		{"notes.txt", "text/plain", "v1"}, {"notes.txt", "text/plain", "v2"},
		{"chart.png", "image/png", string(chartPNG(500))}, {"user:profile.txt", "text/plain", "erin likes charts"},
	} {
		if _, err := keeper.Save(ctx, f.name, f.ct, strings.NewReader(f.data)); err != nil {
			t.Fatal(err)
		}
	}
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model, Files: keeper, Tools: toolset.MustNew(keeper.Tool())})
	if err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(
		geminitest.Calls(geminitest.Call(artifact.ToolName, nil)),
		geminitest.Calls(geminitest.Call(artifact.ToolName, map[string]any{"names": []any{"notes.txt"}, "version": 1.0})),
		geminitest.Calls(geminitest.Call(artifact.ToolName, map[string]any{"names": []any{"chart.png", "user:profile.txt", "nothing.txt"}})),
		geminitest.Text("Done."))
	res, err := a.Run(ctx, genai.Text("What files do I have?"))
	if err != nil {
		t.Fatal(err)
	}
	listed := mustJSON(res.Turns[0].Results[0].Output)
	for _, want := range []string{`"name":"chart.png","version":1`, `"name":"notes.txt","version":2`, `"name":"user:profile.txt","version":1`} {
		if !strings.Contains(listed, want) {
			t.Errorf("the listing %s lacks %s", listed, want)
		}
	}
	if out := mustJSON(res.Turns[1].Results[0].Output); !strings.Contains(out, `"text":"v1"`) {
		t.Errorf("loading version 1 of notes.txt: %s", out)
	}
	third := res.Turns[2].Results[0]
	if out := mustJSON(third.Output); !strings.Contains(out, `"missing":["nothing.txt"]`) || !strings.Contains(out, `"text":"erin likes charts"`) {
		t.Errorf("loading three files: %s", out)
	}
	if len(third.Media) != 1 || third.Media[0].URI != "artifact:chart.png?version=1" {
		t.Errorf("loading chart.png: media %+v", third.Media)
	}
	if body := requestJSON(t, srv, 4); !strings.Contains(body, `"inlineData":{"data":"iVBORw0KGgo`) {
		t.Errorf("the model did not get the chart: %.300s", body)
	}
}

// Without a scope, tools' media stay inline, as without a Keeper; a save
// past the user's quota answers the call with an error the model reads.
func TestKeeperNoScopeAndQuota(t *testing.T) {
	srv := geminitest.Start(t)
	store := artifact.NewMemory(0)
	keeper := artifact.NewKeeper(store, artifact.KeeperOptions{MaxBytesPerUser: 1000})
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model, Files: keeper, Tools: toolset.MustNew(drawTool("", 2000))})
	if err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(geminitest.Calls(geminitest.Call("draw_chart", nil)), geminitest.Text("Here."))
	res, err := a.Run(context.Background(), genai.Text("Draw."))
	if err != nil {
		t.Fatal(err)
	}
	if p := res.History[2].Parts[0].FunctionResponse.Parts; len(p) != 1 || p[0].InlineData == nil {
		t.Errorf("without a scope: %s; want the chart inline", mustJSON(p))
	}
	ctx := artifact.WithScope(context.Background(), "frank", "t")
	srv.Enqueue(geminitest.Calls(geminitest.Call("draw_chart", nil)), geminitest.Text("I could not keep it."))
	res, err = a.Run(ctx, genai.Text("Draw."))
	if err != nil {
		t.Fatal(err)
	}
	r := res.Turns[0].Results[0]
	if !r.IsError || !errors.Is(r.Err, artifact.ErrQuota) || !strings.Contains(r.Output.(string), "could not be kept") {
		t.Errorf("a file past the quota: %+v", r.Result)
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
