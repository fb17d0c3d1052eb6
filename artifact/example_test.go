package artifact_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/artifact"
	"github.com/toolnexus/toolnexus-go/geminitest"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// A tool's chart kept as a file of the thread: the history refers to it,
// and the store has it, version 1.
func ExampleKeeper() {
	ctx := context.Background()
	srv := geminitest.NewServer() // a fake Gemini: the model calls the tool, then answers
	defer srv.Close()
	srv.Enqueue(geminitest.Calls(geminitest.Call("chart", nil)), geminitest.Text("Here is your chart."))

	store := artifact.NewMemory(0)
	keeper := artifact.NewKeeper(store, artifact.KeeperOptions{Uploader: srv.Client().Files})
	chart := toolset.MustFunc("chart", "Draws a chart.", func(ctx context.Context, _ struct{}) (toolset.MediaOutput, error) {
		return toolset.MediaOutput{Output: "drawn", Media: []toolset.Media{{MIMEType: "image/png", Data: []byte("\x89PNG\r\n\x1a\n..."), Name: "chart.png"}}}, nil
	})
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: "gemini-3-flash-preview",
		Tools: toolset.MustNew(chart, keeper.Tool()), Files: keeper})
	if err != nil {
		panic(err)
	}
	res, err := a.Run(artifact.WithScope(ctx, "alice", "thread-1"), genai.Text("Chart my week."))
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text)
	fmt.Println("the history holds", res.History[2].Parts[0].FunctionResponse.Parts[0].FileData.FileURI)
	files, _ := store.List(ctx, "alice", "thread-1")
	for _, f := range files {
		fmt.Println("the store holds", f.Name, "version", f.Version, f.ContentType, f.Size, "bytes")
	}
	// Output:
	// Here is your chart.
	// the history holds artifact:chart.png?version=1
	// the store holds chart.png version 1 image/png 11 bytes
}

// A file's versions in a directory: every save a new one, each read back
// as asked.
func ExampleDir() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "artifacts")
	defer os.RemoveAll(dir)
	store, err := artifact.OpenDir(dir)
	if err != nil {
		panic(err)
	}
	key := artifact.Key{User: "alice", Thread: "thread-1", Name: "reports/q1.csv"}
	for _, text := range []string{"a,b\n1,2\n", "a,b\n1,3\n"} {
		info, err := store.Save(ctx, key, strings.NewReader(text), artifact.SaveOptions{ContentType: "text/csv"})
		if err != nil {
			panic(err)
		}
		fmt.Println("version", info.Version, info.Size, "bytes, sha256", info.SHA256[:12])
	}
	f, err := store.Open(ctx, key, 1)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	b, _ := io.ReadAll(f)
	fmt.Printf("version 1: %q\n", b)
	_, err = store.Save(ctx, artifact.Key{User: "alice", Thread: "thread-1", Name: "../../etc/passwd"}, strings.NewReader("x"), artifact.SaveOptions{})
	fmt.Println(err)
	// Output:
	// version 1 8 bytes, sha256 492d5ea49605
	// version 2 8 bytes, sha256 8baab0330389
	// version 1: "a,b\n1,2\n"
	// artifact: bad key: the file name "../../etc/passwd" has a segment ".."
}
