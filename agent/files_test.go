package agent_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/internal/fake"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// keeper is a FileKeeper that keeps media by counting them, refers to
// them as "kept:{tool}", and resolves each function response's parts to
// inline bytes, or fails.
type keeper struct {
	kept       atomic.Int32
	resolves   atomic.Int32
	resolveErr error
}

func (k *keeper) Keep(ctx context.Context, call *genai.FunctionCall, media []toolset.Media) ([]toolset.Media, error) {
	out := make([]toolset.Media, len(media))
	for i, m := range media {
		k.kept.Add(1)
		out[i] = toolset.Media{MIMEType: m.MIMEType, URI: "kept:" + call.Name, Name: m.Name}
	}
	return out, nil
}

func (k *keeper) Resolve(ctx context.Context, contents []*genai.Content) ([]*genai.Content, error) {
	k.resolves.Add(1)
	if k.resolveErr != nil {
		return nil, k.resolveErr
	}
	out := make([]*genai.Content, len(contents))
	for i, c := range contents {
		nc := &genai.Content{Role: c.Role}
		for _, p := range c.Parts {
			if fr := p.FunctionResponse; fr != nil && len(fr.Parts) > 0 {
				frc := *fr
				frc.Parts = []*genai.FunctionResponsePart{{InlineData: &genai.FunctionResponseBlob{MIMEType: "image/png", Data: []byte("resolved")}}}
				p = &genai.Part{FunctionResponse: &frc}
			}
			nc.Parts = append(nc.Parts, p)
		}
		out[i] = nc
	}
	return out, nil
}

func drawing() *toolset.Set {
	return toolset.MustNew(toolset.MustFunc("draw", "Draws.", func(ctx context.Context, _ struct{}) (toolset.MediaOutput, error) {
		return toolset.MediaOutput{Output: "drawn", Media: []toolset.Media{{MIMEType: "image/png", Data: []byte("\x89PNG"), Name: "a.png"}}}, nil
	}))
}

// A FileKeeper keeps a tool's media before they enter the history, which
// holds its references; each model call sends what Resolve makes of them,
// streamed or not; the history is not changed by it.
func TestFileKeeper(t *testing.T) {
	for _, stream := range []bool{false, true} {
		srv := newServer(t)
		k := &keeper{}
		a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model3, Tools: drawing(), Files: k})
		if err != nil {
			t.Fatal(err)
		}
		srv.Enqueue(fake.Calls(fake.Call("draw", nil)), fake.Text("Done."))
		var res *agent.Result
		if stream {
			for e, err := range a.Stream(context.Background(), genai.Text("Draw.")) {
				if err != nil {
					t.Fatal(err)
				}
				if e.Kind == agent.EventToolResult && (len(e.ToolResult.Media) != 1 || e.ToolResult.Media[0].URI != "kept:draw") {
					t.Errorf("the tool result event's media: %+v", e.ToolResult.Media)
				}
				if e.Kind == agent.EventDone {
					res = e.Result
				}
			}
		} else if res, err = a.Run(context.Background(), genai.Text("Draw.")); err != nil {
			t.Fatal(err)
		}
		if k.kept.Load() != 1 || k.resolves.Load() != 2 {
			t.Errorf("stream %t: kept %d, resolved %d times; want 1 and 2", stream, k.kept.Load(), k.resolves.Load())
		}
		if p := res.History[2].Parts[0].FunctionResponse.Parts[0]; p.FileData == nil || p.FileData.FileURI != "kept:draw" {
			t.Errorf("stream %t: the history's function response part %+v; want the reference", stream, p)
		}
		if body := string(srv.LastRequest().Body); !strings.Contains(body, `"data":"cmVzb2x2ZWQ="`) || strings.Contains(body, "kept:draw") {
			t.Errorf("stream %t: the request sent %s; want what Resolve made", stream, body)
		}
	}
}

// A reference that cannot be resolved fails the model call with a
// FileError: nothing is sent.
func TestFileKeeperResolveFails(t *testing.T) {
	srv := newServer(t)
	gone := errors.New("the file is gone")
	k := &keeper{resolveErr: gone}
	a, err := agent.New(agent.Config{Models: srv.Client().Models, Model: model3, Files: k})
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Run(context.Background(), genai.Text("Hi."))
	var fe *agent.FileError
	if !errors.As(err, &fe) || !errors.Is(err, gone) {
		t.Fatalf("Run = %v; want a FileError wrapping the Resolve error", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests reached the model", n)
	}
}
