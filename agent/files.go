package agent

import (
	"context"
	"fmt"
	"iter"

	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// FileKeeper keeps the files of runs beside their history, so that the
// history holds a reference to each file rather than its bytes (see
// Config.Files; package artifact implements it). The loop calls it at two
// points:
//
//   - Keep, with the media of each tool result that carry their data
//     (toolset.Media.Data), before the result enters the history, its
//     events and the Result: it keeps them and returns the media to put
//     in their place, references (toolset.Media.URI) to what it kept. An
//     error answers the call with an error instead (the model reads it:
//     "the file could not be kept: …"), and nothing of the media enters
//     the history.
//   - Resolve, before each model call (each retry and each continuation
//     included), with the contents about to be sent: it returns them with
//     each reference it knows replaced by what the model's API takes (the
//     data inline, or a file the API holds), without modifying them: they
//     are the run's history. An error fails the model call (see
//     [FileError]).
//
// Both are called concurrently, by concurrent runs and by the calls of
// one turn; ctx is the call's, or the run's, context, which names whose
// files they are (package artifact reads its scope there).
type FileKeeper interface {
	Keep(ctx context.Context, call *genai.FunctionCall, media []toolset.Media) ([]toolset.Media, error)
	Resolve(ctx context.Context, contents []*genai.Content) ([]*genai.Content, error)
}

// keepFiles hands res's media that carry data to the agent's FileKeeper,
// and returns res with the references it returned in their place, or an
// error result when it fails. A result without such media is returned as
// it is.
func (a *Agent) keepFiles(ctx context.Context, call *genai.FunctionCall, res toolset.Result) toolset.Result {
	if a.files == nil || res.IsError || !carriesData(res.Media) {
		return res
	}
	kept, err := a.files.Keep(ctx, call, res.Media)
	if err == nil && len(kept) != len(res.Media) {
		err = fmt.Errorf("agent: the FileKeeper returned %d media for %d", len(kept), len(res.Media))
	}
	if err != nil {
		return toolset.Result{IsError: true, Err: fmt.Errorf("agent: keeping the files of %s: %w", call.Name, err),
			Output: fmt.Sprintf("tool %s ran, but the files it made could not be kept: %v", call.Name, err)}
	}
	res.Media = kept
	return res
}

// carriesData reports whether one of media carries its data.
func carriesData(media []toolset.Media) bool {
	for _, m := range media {
		if len(m.Data) > 0 {
			return true
		}
	}
	return false
}

// resolving is the Models the loop calls when the agent has a FileKeeper:
// m, with each request's contents resolved first.
type resolving struct {
	Models
	files FileKeeper
}

func (r resolving) GenerateContent(ctx context.Context, model string, contents []*genai.Content,
	config *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	resolved, err := r.resolve(ctx, contents)
	if err != nil {
		return nil, err
	}
	return r.Models.GenerateContent(ctx, model, resolved, config)
}

func (r resolving) GenerateContentStream(ctx context.Context, model string, contents []*genai.Content,
	config *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error] {
	resolved, err := r.resolve(ctx, contents)
	if err != nil {
		return func(yield func(*genai.GenerateContentResponse, error) bool) { yield(nil, err) }
	}
	return r.Models.GenerateContentStream(ctx, model, resolved, config)
}

func (r resolving) resolve(ctx context.Context, contents []*genai.Content) ([]*genai.Content, error) {
	resolved, err := r.files.Resolve(ctx, contents)
	if err != nil {
		return nil, &FileError{Err: err}
	}
	return resolved, nil
}

// FileError is the error of a model call that was not made because the
// files its history refers to could not be resolved (see
// [FileKeeper]): a reference to a file that is gone, a store that cannot
// be read, an upload that failed. The loop retries it as it retries the
// model call's own errors: an upload answered 503 is tried again, a file
// that is gone is not.
type FileError struct{ Err error }

func (e *FileError) Error() string {
	return "agent: resolving the files of the request: " + e.Err.Error()
}
func (e *FileError) Unwrap() error { return e.Err }

// generator returns the Models the loop's model calls go through.
func (a *Agent) generator() Models {
	if a.files == nil {
		return a.models
	}
	return resolving{Models: a.models, files: a.files}
}
