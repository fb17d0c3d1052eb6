package browsertest

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/agentserver/devui"
	"github.com/toolnexus/toolnexus-go/artifact"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// barChart draws a bar chart: a real PNG.
func barChart() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 200, 120))
	for y := range 120 {
		for x := range 200 {
			c := color.RGBA{255, 255, 255, 255}
			if x%60 >= 15 && x%60 < 45 && y > 120-(x/60+1)*30 {
				c = color.RGBA{48, 86, 211, 255}
			}
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	png.Encode(&b, img)
	return b.Bytes()
}

// The dev UI shows the files of a conversation: a tool's chart previewed
// as an image and its CSV as text, in the call's card, as the run streams
// and when the conversation is loaded again; a file the user attaches,
// kept as the thread's; and the conversation's files, listed in its view.
func TestFiles(t *testing.T) {
	fm := fake.NewServer()
	defer fm.Close()
	fm.SetReplyFunc(func(r *fake.Request) *fake.Reply {
		last := r.Contents[len(r.Contents)-1]
		switch {
		case len(last.Parts) > 0 && last.Parts[0].FunctionResponse != nil:
			return text("Here is the chart.")
		case strings.Contains(question(r), "chart"):
			return fake.Calls(fake.Call("make_chart", nil))
		}
		return text("It says to remember the milk.")
	})
	chart := toolset.MustFunc("make_chart", "Charts the temperatures.", func(ctx context.Context, _ nothing) (toolset.MediaOutput, error) {
		return toolset.MediaOutput{Output: "a bar chart", Media: []toolset.Media{
			{MIMEType: "image/png", Data: barChart(), Name: "chart.png"},
			{MIMEType: "text/csv", Data: []byte("city,celsius\nParis,21\nTokyo,26\nOslo,12\n"), Name: "data.csv"},
		}}, nil
	})
	a, err := agent.New(agent.Config{Models: fm.Client().Models, Model: model, Tools: toolset.MustNew(chart)})
	if err != nil {
		t.Fatal(err)
	}
	keeper := artifact.NewKeeper(artifact.NewMemory(0), artifact.KeeperOptions{})
	srv, err := agentserver.New(agentserver.Config{Agent: a, Artifacts: keeper, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(devui.Handler(srv, nil))
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Close(ctx)
		hs.Close()
	}()

	ctx := browser(t)
	run(t, ctx, "opening a conversation", chromedp.Navigate(hs.URL+"/#chat/charts"), chromedp.WaitVisible(chromedp.CSS("#input")))
	send(t, ctx, "Draw a chart of the weather")
	const card = `document.querySelector('#messages .tool[data-name=make_chart]')`
	until(t, ctx, "the chart previewed", card+`?.querySelector('.file[data-name="chart.png"] img.preview')?.naturalWidth === 200`)
	until(t, ctx, "the CSV previewed", card+`?.querySelector('.file[data-name="data.csv"] pre.preview')?.textContent.startsWith('city,celsius')`)
	until(t, ctx, "the answer", `document.querySelectorAll('#messages .end[data-finish=stop]').length === 1`)
	var link string
	eval(t, ctx, card+`.querySelector('.file[data-name="chart.png"] a.download').getAttribute('href')`, &link)
	if link != "api/artifacts/charts/chart.png?version=1" {
		t.Errorf("the chart's download link: %q", link)
	}
	shot(t, ctx, "chat-files")

	// A file attached to a message.
	note := filepath.Join(t.TempDir(), "note.txt")
	if err := os.WriteFile(note, []byte("remember the milk"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "attaching a file", chromedp.SetUploadFiles(chromedp.CSS("#attach"), []string{note}))
	until(t, ctx, "the file named", `document.querySelector('#attached').textContent === 'note.txt'`)
	send(t, ctx, "What is in this file?")
	until(t, ctx, "the second answer", `document.querySelectorAll('#messages .end[data-finish=stop]').length === 2`)
	list, err := keeper.Store().List(context.Background(), "local", "charts")
	if err != nil || len(list) != 3 {
		t.Fatalf("the thread's files: %+v, %v; want the chart, the CSV and the note", list, err)
	}
	history, err := srv.History(context.Background(), "local", "charts")
	if err != nil {
		t.Fatal(err)
	}
	if p := history[len(history)-2].Parts[0]; p.FileData == nil || p.FileData.FileURI != "artifact:note.txt?version=1" {
		t.Errorf("the stored message's file: %+v", p)
	}

	// Loaded again: the history shows the files.
	run(t, ctx, "reloading", chromedp.Navigate(hs.URL+"/#threads"), chromedp.Navigate(hs.URL+"/#chat/charts"))
	until(t, ctx, "the chart, from the history", card+`?.querySelector('.file[data-name="chart.png"] img.preview')?.naturalWidth === 200`)
	until(t, ctx, "the note, from the history", `document.querySelector('#messages .msg.user .file[data-name="note.txt"] pre.preview')?.textContent === 'remember the milk'`)

	// The conversation's view lists its files.
	run(t, ctx, "opening the conversation's view", chromedp.Navigate(hs.URL+"/#threads/charts"))
	until(t, ctx, "its files", `document.querySelectorAll('#thread-files .file').length === 3 && document.querySelector('#thread-files .file[data-name="chart.png"] img.preview')?.naturalWidth === 200 &&
		document.querySelector('#thread-files .file[data-name="data.csv"] pre.preview')?.textContent.startsWith('city,celsius') &&
		document.querySelector('#thread-files .file[data-name="note.txt"] pre.preview')?.textContent === 'remember the milk'`)
	shot(t, ctx, "conversation-files")
}
