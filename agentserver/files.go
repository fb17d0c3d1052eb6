package agentserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"google.golang.org/genai"
)

// checkFiles refuses msg when one of its parts names a file by URI (a
// fileData part, which Gemini fetches with the server's credentials) that
// Config.AllowFileURI does not allow user: every such URI when it is nil.
// A reference to one of the thread's artifacts (or the user's own) that
// exists is taken: it is resolved in the user's scope only.
func (s *Server) checkFiles(ctx context.Context, user, thread string, msg *genai.Content) error {
	if msg == nil {
		return nil
	}
	for i, p := range msg.Parts {
		if p == nil || p.FileData == nil {
			continue
		}
		uri := p.FileData.FileURI
		if s.artifactRef(ctx, user, thread, uri) {
			continue // a file of the thread's, resolved in the user's scope
		}
		if s.cfg.AllowFileURI == nil {
			return newError(http.StatusBadRequest, "bad_part", ErrBadRequest,
				"the new message's file %q: this server takes no file URIs from clients (the model would read the file with the server's credentials); send the file's data inline", truncate(uri, 200))
		}
		err := s.cfg.AllowFileURI(ctx, user, uri)
		if err == nil {
			continue
		}
		var e *Error
		if errors.As(err, &e) {
			return e
		}
		s.cfg.Logger.LogAttrs(ctx, slog.LevelDebug, "agentserver: Config.AllowFileURI refused a file URI",
			slog.Int("part", i), slog.Any("error", err))
		return newError(http.StatusBadRequest, "bad_part", fmt.Errorf("%w: %w", ErrBadRequest, err),
			"the new message's file %q: not a file this server lets you give the model", truncate(uri, 200))
	}
	return nil
}
