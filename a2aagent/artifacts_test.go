package a2aagent_test

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	a2a "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/artifact"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// withFiles keeps the threads' files, and gives the agent a tool that
// makes a small chart and a file too large to carry in a task.
func withFiles(c *agentserver.Config) {
	c.Artifacts = artifact.NewKeeper(artifact.NewMemory(0), artifact.KeeperOptions{})
	draw := toolset.MustFunc("draw", "Draws.", func(ctx context.Context, _ struct{}) (toolset.MediaOutput, error) {
		return toolset.MediaOutput{Output: "drawn", Media: []toolset.Media{
			{MIMEType: "image/png", Data: []byte("\x89PNG\r\n\x1a\nchart"), Name: "chart.png"},
			{MIMEType: "application/octet-stream", Data: make([]byte, 2<<20), Name: "big.bin"},
		}}, nil
	})
	c.Agent = c.Agent.With(agent.Overrides{Tools: []*toolset.Tool{draw}})
}

// A task's files are A2A artifacts, in 0.3 and in 1.0: a small file's
// bytes, a large one's download URI (absolute when the card's URL is).
func TestFileArtifacts(t *testing.T) {
	l := newLocal(t, nil, false, withFiles)
	script := func() { l.model.Enqueue(fake.Calls(fake.Call("draw", nil)), fake.Text("Here.")) }

	script()
	_, _, m := l.rpc(`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"messageId":"m","role":"user","parts":[{"kind":"text","text":"draw"}]}}}`,
		"application/json", true)
	res, _ := m["result"].(map[string]any)
	if res == nil {
		t.Fatalf("message/send %s", jsonOf(m))
	}
	var files []map[string]any
	for _, a := range res["artifacts"].([]any) {
		a := a.(map[string]any)
		for _, p := range a["parts"].([]any) {
			if p := p.(map[string]any); p["kind"] == "file" {
				f := p["file"].(map[string]any)
				f["artifactName"] = a["name"]
				files = append(files, f)
			}
		}
	}
	if len(files) != 2 {
		t.Fatalf("0.3: the task's file parts: %s", jsonOf(res["artifacts"]))
	}
	if f := files[0]; f["artifactName"] != "chart.png" || f["name"] != "chart.png" || f["mimeType"] != "image/png" ||
		f["bytes"] != base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\nchart")) {
		t.Errorf("0.3: the chart: %s", jsonOf(f))
	}
	if f := files[1]; f["name"] != "big.bin" || !strings.HasPrefix(f["uri"].(string), "/artifacts/") || f["bytes"] != nil {
		t.Errorf("0.3: the large file: %s", jsonOf(f))
	}

	for _, b := range v1Bindings {
		t.Run(string(b), func(t *testing.T) {
			script()
			c, _ := v1Client(t, l.http.URL, "alice", b)
			events := v1Collect(t, c.SendStreamingMessage(context.Background(), &a2a.SendMessageRequest{Message: v1Text("draw")}))
			var names []string
			for _, ev := range events {
				au, ok := ev.(*a2a.TaskArtifactUpdateEvent)
				if !ok {
					continue
				}
				for _, p := range au.Artifact.Parts {
					switch {
					case p.Raw() != nil:
						if string(p.Raw()) != "\x89PNG\r\n\x1a\nchart" || p.MediaType != "image/png" || p.Filename != "chart.png" {
							t.Errorf("1.0: the chart: %s", jsonOf(p))
						}
						names = append(names, au.Artifact.Name)
					case p.URL() != "":
						if !strings.Contains(string(p.URL()), "/artifacts/") || p.Filename != "big.bin" {
							t.Errorf("1.0: the large file: %s", jsonOf(p))
						}
						names = append(names, au.Artifact.Name)
					}
				}
			}
			if strings.Join(names, " ") != "chart.png big.bin" {
				t.Errorf("1.0: the file artifacts: %v", names)
			}
		})
	}
}

// A file part with bytes in a user's message is kept as a file of the
// thread, named after it; the stored message refers to it.
func TestFileUpload(t *testing.T) {
	l := newLocal(t, nil, false, withFiles)
	l.model.Enqueue(fake.Text("A note about milk."))
	_, _, m := l.rpc(`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"messageId":"m","role":"user","contextId":"ctx-up","parts":[`+
		`{"kind":"text","text":"What is in it?"},{"kind":"file","file":{"name":"note.txt","mimeType":"text/plain","bytes":"`+
		base64.StdEncoding.EncodeToString([]byte("remember the milk"))+`"}}]}}}`, "application/json", true)
	if res, _ := m["result"].(map[string]any); res == nil || res["status"].(map[string]any)["state"] != "completed" {
		t.Fatalf("message/send %s", jsonOf(m))
	}
	list, err := l.srv.Artifacts().Store().List(context.Background(), "alice", "ctx-up")
	if err != nil || len(list) != 1 || list[0].Name != "note.txt" || list[0].Size != int64(len("remember the milk")) {
		t.Fatalf("the thread's files: %+v, %v", list, err)
	}
	history, err := l.srv.History(context.Background(), "alice", "ctx-up")
	if err != nil {
		t.Fatal(err)
	}
	if p := history[0].Parts[1]; p.FileData == nil || p.FileData.FileURI != "artifact:note.txt?version=1" {
		t.Errorf("the stored message's file: %s", jsonOf(p))
	}
	if got := jsonOf(l.model.LastRequest().Contents[0].Parts[1]); !strings.Contains(got, base64.StdEncoding.EncodeToString([]byte("remember the milk"))) {
		t.Errorf("the model got %s", got)
	}
}
