package artifact

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolnexus/toolnexus-go/toolset"
)

// ToolName is the name of the tool [Keeper.Tool] makes.
const ToolName = "load_artifacts"

// MaxToolText is the largest text file the tool returns as text in its
// output, which every model reads; a larger one, and every file that is
// not text, comes back as a medium (a reference the Keeper resolves).
const MaxToolText = 64 << 10

// toolIn is what the model sends the tool.
type toolIn struct {
	Names   []string `json:"names,omitempty" jsonschema:"the files to load, named as the listing names them; leave it out to list the files"`
	Version int      `json:"version,omitempty" jsonschema:"the version to load, when names holds one file; leave it out for the latest"`
}

// toolFile describes a file to the model.
type toolFile struct {
	Name        string    `json:"name"`
	Version     int       `json:"version"`
	ContentType string    `json:"contentType"`
	Size        int64     `json:"size"`
	Created     time.Time `json:"created"`
	Text        string    `json:"text,omitempty"`
}

func describe(info Info) toolFile {
	return toolFile{Name: DisplayName(info), Version: info.Version, ContentType: info.ContentType, Size: info.Size, Created: info.Created}
}

// Tool returns the tool that lets the model list and load the files of
// the run's scope on demand ("load_artifacts", as ADK names its own):
// called without names it lists the thread's files and the user's own
// ("user:" names), the latest version of each; called with names it
// loads them (a version, when it names one file): a text file up to
// MaxToolText comes back as text in the output, any other file as a
// medium that refers to it, which the Keeper (agent.Config.Files)
// resolves for the model. Names it cannot find are listed under
// "missing". Add it to the agent's tools beside a Keeper.
func (k *Keeper) Tool() *toolset.Tool {
	return toolset.MustFunc(ToolName,
		"Lists the files of this conversation (those the user uploaded, those tools made, and the user's own, named user:…), or loads some of them to look at.",
		func(ctx context.Context, in toolIn) (toolset.MediaOutput, error) {
			scope, ok := ScopeOf(ctx)
			if !ok {
				return toolset.MediaOutput{}, errors.New("this conversation keeps no files")
			}
			if len(in.Names) == 0 {
				return k.listTool(ctx, scope)
			}
			if in.Version != 0 && len(in.Names) != 1 {
				return toolset.MediaOutput{}, errors.New("a version may be asked for one file at a time")
			}
			return k.loadTool(ctx, scope, in)
		})
}

func (k *Keeper) listTool(ctx context.Context, scope Scope) (toolset.MediaOutput, error) {
	files := []toolFile{}
	for _, thread := range []string{scope.Thread, ""} {
		list, err := k.store.List(ctx, scope.User, thread)
		if err != nil {
			return toolset.MediaOutput{}, err
		}
		for _, info := range list {
			files = append(files, describe(info))
		}
		if scope.Thread == "" {
			break
		}
	}
	return toolset.MediaOutput{Output: map[string]any{"files": files}}, nil
}

func (k *Keeper) loadTool(ctx context.Context, scope Scope, in toolIn) (toolset.MediaOutput, error) {
	loaded := []toolFile{}
	var (
		missing []string
		media   []toolset.Media
	)
	for _, name := range in.Names {
		key, err := scope.Key(name)
		if err != nil {
			missing = append(missing, name)
			continue
		}
		f, err := k.store.Open(ctx, key, in.Version)
		if errors.Is(err, ErrNotFound) {
			missing = append(missing, name)
			continue
		}
		if err != nil {
			return toolset.MediaOutput{}, err
		}
		info := f.Info()
		d := describe(info)
		if text, ok := readText(f, info); ok {
			d.Text = text
		} else {
			media = append(media, Media(info))
		}
		f.Close()
		loaded = append(loaded, d)
	}
	out := map[string]any{"loaded": loaded}
	if len(missing) > 0 {
		out["missing"] = missing
	}
	return toolset.MediaOutput{Output: out, Media: media}, nil
}

// readText returns f's bytes as text when it is a text file (by its type,
// and valid UTF-8) of at most MaxToolText bytes.
func readText(f File, info Info) (string, bool) {
	mt, _, _ := mime.ParseMediaType(info.ContentType)
	if info.Size > MaxToolText || !(strings.HasPrefix(mt, "text/") || mt == "application/json") {
		return "", false
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxToolText+1))
	if err != nil || len(b) > MaxToolText || !utf8.Valid(b) {
		return "", false
	}
	return string(b), true
}

// String describes the Keeper, for logs.
func (k *Keeper) String() string {
	return fmt.Sprintf("artifact.Keeper(%T, inline up to %d bytes, uploads %t)", k.store, k.opts.InlineLimit, k.opts.Uploader != nil)
}
