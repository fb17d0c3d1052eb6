package a2aagent

import (
	"context"
	"encoding/base64"
	"io"
	"net/url"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/toolnexus/toolnexus-go/agentserver"
	artifacts "github.com/toolnexus/toolnexus-go/artifact"
)

// MaxFileBytes is the largest file of a task's artifacts carried in the
// task itself (a file part with bytes); a larger one is a file part with
// the URI it is downloaded from (agentserver.Server.ArtifactsHandler),
// absolute when Options.URL is.
const MaxFileBytes = 1 << 20

// fileSource makes the file parts of a run's artifacts.
type fileSource struct {
	s    *agentserver.Server
	base *url.URL // the card's url: absolute, or a path
	run  agentserver.RunInfo
}

// files returns the handler's fileSource.
func (h *handler) files() fileSource { return fileSource{s: h.s, base: h.url} }

// part returns the file part of f, one of the files a call of the run
// made: its bytes when it is at most MaxFileBytes, else its download URI;
// false when the server keeps no files, or the file is gone.
func (fs fileSource) part(f agentserver.File) (a2a.Part, bool) {
	if fs.s == nil || fs.s.Artifacts() == nil {
		return nil, false
	}
	name, version, ok, err := artifacts.ParseURI(f.URI)
	if !ok || err != nil {
		return nil, false
	}
	key, err := artifacts.Scope{User: fs.run.User, Thread: fs.run.Thread}.Key(name)
	if err != nil {
		return nil, false
	}
	meta := a2a.FileMeta{MimeType: f.MediaType, Name: f.Name}
	file, err := fs.s.Artifacts().Store().Open(context.Background(), key, version)
	if err != nil {
		return nil, false
	}
	defer file.Close()
	if file.Info().Size <= MaxFileBytes {
		b, err := io.ReadAll(file)
		if err != nil {
			return nil, false
		}
		return a2a.FilePart{File: a2a.FileBytes{FileMeta: meta, Bytes: base64.StdEncoding.EncodeToString(b)}}, true
	}
	link, ok := fs.s.FileURL(fs.run.Thread, f.URI)
	if !ok {
		return nil, false
	}
	if fs.base != nil && fs.base.IsAbs() {
		if u, err := fs.base.Parse(link); err == nil {
			link = u.String()
		}
	}
	return a2a.FilePart{File: a2a.FileURI{FileMeta: meta, URI: link}}, true
}
