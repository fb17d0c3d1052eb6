package agentserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus-go/artifact"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// DefaultArtifactsPath is where [Server.ArtifactsHandler] is mounted
// unless Config.ArtifactsPath says otherwise: the links the protocols
// send are made from it.
const DefaultArtifactsPath = "/artifacts/"

// DefaultMaxUploadBytes bounds the body of an upload to the artifacts
// routes (PUT), unless Config.MaxUploadBytes says otherwise: 32 MiB.
const DefaultMaxUploadBytes = 32 << 20

// A File is a file a call's result refers to: one of the thread's
// artifacts, which a frontend downloads from [Server.FileURL] of its URI.
type File struct {
	// Name is the file's name ("chart.png"; "user:logo.png" for one of
	// the user's own files).
	Name string `json:"name"`
	// MediaType is the file's type as it was saved.
	MediaType string `json:"mediaType"`
	// URI is the artifact's reference, "artifact:chart.png?version=2":
	// the version the call made or loaded.
	URI string `json:"uri"`
}

// callFiles returns the files of a call's media that refer to artifacts.
func callFiles(media []toolset.Media) []File {
	var out []File
	for _, m := range media {
		if name, _, ok, err := artifact.ParseURI(m.URI); ok && err == nil {
			out = append(out, File{Name: name, MediaType: m.MIMEType, URI: m.URI})
		}
	}
	return out
}

// Artifacts returns Config.Artifacts: nil when the server keeps no
// files.
func (s *Server) Artifacts() *artifact.Keeper { return s.cfg.Artifacts }

// FileURL returns the link from which a frontend downloads the file uri
// refers to in thread ([Server.ArtifactsHandler]'s route, under
// Config.ArtifactsPath: "/artifacts/t1/chart.png?version=2"), and false
// for a URI that is not an artifact's reference, or on a server that
// keeps no files.
func (s *Server) FileURL(thread, uri string) (string, bool) {
	name, version, ok, err := artifact.ParseURI(uri)
	if !ok || err != nil || s.cfg.Artifacts == nil {
		return "", false
	}
	return s.cfg.ArtifactsPath + url.PathEscape(thread) + "/" + escapeName(name) + "?version=" + strconv.Itoa(version), true
}

// escapeName escapes a file name for a path, each of its folders apart.
func escapeName(name string) string {
	segs := strings.Split(name, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// keepUploads returns the new message of user's thread as the thread
// keeps it: on a server with Config.Artifacts, each file it carries
// inline saved as a file of the thread and referred to; otherwise as it
// came, but for the display names of its inline files (the protocols set
// them from the files' names, which only artifacts use).
func (s *Server) keepUploads(ctx context.Context, user, thread string, msg *genai.Content) (*genai.Content, error) {
	if s.cfg.Artifacts == nil {
		var out *genai.Content
		for i, p := range msg.Parts {
			if p == nil || p.InlineData == nil || p.InlineData.DisplayName == "" {
				continue
			}
			if out == nil {
				out = &genai.Content{Role: msg.Role, Parts: append([]*genai.Part(nil), msg.Parts...)}
			}
			np, blob := *p, *p.InlineData
			blob.DisplayName = ""
			np.InlineData = &blob
			out.Parts[i] = &np
		}
		if out == nil {
			return msg, nil
		}
		return out, nil
	}
	kept, err := s.cfg.Artifacts.KeepMessage(artifact.WithScope(ctx, user, thread), msg)
	if err != nil {
		return nil, artifactError(err, "the new message's file")
	}
	return kept, nil
}

// artifactError is the *Error of a failure of the artifact store: 429
// artifact_quota for a quota, 413 too_large, 400 bad_name, 404 for a
// file that is not there, else an internal error.
func artifactError(err error, what string) error {
	switch {
	case errors.Is(err, artifact.ErrQuota):
		return newError(http.StatusTooManyRequests, "artifact_quota", fmt.Errorf("%w: %w", ErrQuota, err),
			"%s: your files hold as many bytes as the server keeps for you: delete some", what)
	case errors.Is(err, artifact.ErrTooLarge):
		return newError(http.StatusRequestEntityTooLarge, "too_large", fmt.Errorf("%w: %w", ErrBadRequest, err), "%s is larger than the server keeps", what)
	case errors.Is(err, artifact.ErrBadKey):
		return newError(http.StatusBadRequest, "bad_name", fmt.Errorf("%w: %w", ErrBadRequest, err), "%s: %v", what, err)
	case errors.Is(err, artifact.ErrNotFound):
		return notFound("no such file")
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return err
}

// artifactRef reports whether uri is a reference to a file of user's
// thread (or one of theirs) that exists: a client may name one in a new
// message, as the model would.
func (s *Server) artifactRef(ctx context.Context, user, thread, uri string) bool {
	name, version, ok, err := artifact.ParseURI(uri)
	if !ok || err != nil || s.cfg.Artifacts == nil {
		return false
	}
	key, err := artifact.Scope{User: user, Thread: thread}.Key(name)
	if err != nil {
		return false
	}
	f, err := s.cfg.Artifacts.Store().Open(ctx, key, version)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

// DeleteThread deletes user's thread: its run, if one is in progress, is
// cancelled and waited for (see CancelThread), then its conversation is
// deleted from the store and, on a server with Config.Artifacts, its
// files (the user's own files stay). A thread that does not exist, or is
// another user's, is ErrNotFound.
func (s *Server) DeleteThread(ctx context.Context, user, thread string) error {
	key, err := threadKey(user, thread)
	if err != nil {
		return err
	}
	if _, err := s.CancelThread(ctx, user, thread); err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	found := false
	switch err := s.cfg.Store.Delete(ctx, key); {
	case err == nil:
		found = true
	case !errors.Is(err, session.ErrNotFound):
		return fmt.Errorf("agentserver: deleting thread %q: %w", thread, err)
	}
	if a := s.cfg.Artifacts; a != nil {
		list, err := a.Store().List(ctx, user, thread)
		if err != nil {
			return fmt.Errorf("agentserver: deleting the files of thread %q: %w", thread, err)
		}
		found = found || len(list) > 0
		if err := a.Store().DeleteThread(ctx, user, thread); err != nil {
			return fmt.Errorf("agentserver: deleting the files of thread %q: %w", thread, err)
		}
	}
	if !found {
		return notFound("no thread %q", thread)
	}
	return nil
}

// ArtifactsHandler serves the files of the user's threads, mounted at
// Config.ArtifactsPath ("/artifacts/" by default, the prefix of the links
// the protocols send), wrapped in [Server.CORS]:
//
//	GET    {path}{thread}                   the thread's files (and the user's own, "user:…"), latest versions: {"files": [...]}
//	GET    {path}{thread}/{name}            a file's latest version; ?version=N one version; ranges (Range) served
//	GET    {path}{thread}/{name}?versions   a file's versions: {"versions": [...]}
//	PUT    {path}{thread}/{name}            save the body as the file's next version (201, its description)
//	DELETE {path}{thread}/{name}            delete a file (?version=N: one version)
//
// A user reaches their own files only: another user's file, thread or
// version is answered exactly as one that does not exist (404). A
// download says what the bytes are only when they are what the file
// claims (its type sniffed, http.DetectContentType): a raster image,
// audio or video whose bytes are of its kind is served inline, a text
// file inline as text/plain; everything else (HTML, SVG, XML, scripts,
// PDFs, a file whose bytes are not its type) as an attachment. Every
// download carries X-Content-Type-Options: nosniff and
// Content-Security-Policy: sandbox, so that no file runs script in the
// server's origin (no stored XSS through an upload); on a server without
// Config.AllowedOrigins, Cross-Origin-Resource-Policy: same-origin keeps
// pages of other origins from embedding them.
//
// A PUT's body is at most Config.MaxUploadBytes (413 beyond), its
// Content-Type the file's type (sniffed when absent); a save past the
// user's quota (artifact.KeeperOptions.MaxBytesPerUser) is 429,
// artifact_quota. A PUT and a DELETE take methods no form can send, so a
// page of another site cannot make one without the CORS preflight
// (Config.AllowedOrigins).
func (s *Server) ArtifactsHandler() http.Handler {
	return s.CORS(http.HandlerFunc(s.serveArtifacts))
}

func (s *Server) serveArtifacts(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Artifacts == nil {
		s.WriteError(w, r, notFound("this server keeps no files"))
		return
	}
	user, err := s.User(r)
	if err != nil {
		s.WriteError(w, r, err)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), strings.TrimSuffix(s.cfg.ArtifactsPath, "/")+"/")
	if !ok {
		s.WriteError(w, r, notFound("no such route"))
		return
	}
	escThread, escName, _ := strings.Cut(rest, "/")
	thread, err1 := url.PathUnescape(escThread)
	name, err2 := url.PathUnescape(escName)
	if err1 != nil || err2 != nil {
		s.WriteError(w, r, BadRequest(0, "bad_path", "the path does not unescape"))
		return
	}
	if err := CheckThreadID(thread); err != nil {
		s.WriteError(w, r, err)
		return
	}
	ctx := r.Context()
	scope := artifact.Scope{User: user, Thread: thread}
	if name == "" {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			s.WriteError(w, r, MethodNotAllowed(w, "GET"))
			return
		}
		s.listFiles(w, r, scope)
		return
	}
	key, err := scope.Key(name)
	if err != nil {
		s.WriteError(w, r, artifactError(err, "the file name"))
		return
	}
	version := 0
	if v := r.URL.Query().Get("version"); v != "" {
		if version, err = strconv.Atoi(v); err != nil || version <= 0 {
			s.WriteError(w, r, BadRequest(0, "bad_version", "version must be a positive number"))
			return
		}
	}
	store := s.cfg.Artifacts.Store()
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		if r.URL.Query().Has("versions") {
			vs, err := store.Versions(ctx, key)
			if err != nil {
				s.WriteError(w, r, artifactError(err, "the file"))
				return
			}
			out := make([]fileInfo, len(vs))
			for i, info := range vs {
				out[i] = s.fileInfo(thread, info)
			}
			s.WriteJSON(w, r, http.StatusOK, map[string]any{"versions": out})
			return
		}
		s.download(w, r, key, version)
	case http.MethodPut:
		s.upload(w, r, thread, key)
	case http.MethodDelete:
		if err := store.Delete(ctx, key, version); err != nil {
			s.WriteError(w, r, artifactError(err, "the file"))
			return
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		s.WriteError(w, r, MethodNotAllowed(w, "GET, PUT, DELETE"))
	}
}

// fileInfo describes a file to a frontend.
type fileInfo struct {
	Name      string    `json:"name"`
	Version   int       `json:"version"`
	MediaType string    `json:"mediaType"`
	Size      int64     `json:"size"`
	SHA256    string    `json:"sha256"`
	Created   time.Time `json:"created"`
	URL       string    `json:"url"`
}

func (s *Server) fileInfo(thread string, info artifact.Info) fileInfo {
	name := artifact.DisplayName(info)
	link, _ := s.FileURL(thread, artifact.URI(name, info.Version))
	return fileInfo{Name: name, Version: info.Version, MediaType: info.ContentType, Size: info.Size, SHA256: info.SHA256, Created: info.Created, URL: link}
}

// listFiles answers the list of a thread's files: the thread's, then the
// user's own.
func (s *Server) listFiles(w http.ResponseWriter, r *http.Request, scope artifact.Scope) {
	out := []fileInfo{}
	for _, thread := range []string{scope.Thread, ""} {
		list, err := s.cfg.Artifacts.Store().List(r.Context(), scope.User, thread)
		if err != nil {
			s.WriteError(w, r, err)
			return
		}
		for _, info := range list {
			out = append(out, s.fileInfo(scope.Thread, info))
		}
	}
	s.WriteJSON(w, r, http.StatusOK, map[string]any{"files": out})
}

// download serves a version of a file.
func (s *Server) download(w http.ResponseWriter, r *http.Request, key artifact.Key, version int) {
	f, err := s.cfg.Artifacts.Store().Open(r.Context(), key, version)
	if err != nil {
		s.WriteError(w, r, artifactError(err, "the file"))
		return
	}
	defer f.Close()
	info := f.Info()
	head := make([]byte, 512)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		s.WriteError(w, r, err)
		return
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		s.WriteError(w, r, err)
		return
	}
	contentType, inline := ServedType(info.ContentType, head[:n])
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "sandbox")
	if !s.origins.any && len(s.origins.exact) == 0 {
		// No page of another origin may embed the file (an <img> of
		// another site). With Config.AllowedOrigins, the frontend is one:
		// its pages embed the files they show.
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
	}
	h.Set("ETag", `"`+info.SHA256+`"`)
	if version > 0 {
		h.Set("Cache-Control", "private, max-age=31536000, immutable") // a version never changes
	} else {
		h.Set("Cache-Control", "private, no-cache")
	}
	disposition := "attachment"
	if inline {
		disposition = "inline"
	}
	h.Set("Content-Disposition", mime.FormatMediaType(disposition, map[string]string{"filename": path.Base(info.Name)}))
	http.ServeContent(w, r, "", info.Created, f)
}

// ServedType returns the Content-Type a download of a file declared as
// declared, whose first bytes are head, is served with, and whether a
// browser may show it (inline) rather than save it (attachment): a raster
// image, audio or video whose bytes are of the declared kind, as it is
// declared; text whose bytes are text (not HTML, nor anything a browser
// would sniff as another type) as text/plain in UTF-8; everything else
// (HTML, SVG, XML, JavaScript, PDF, archives, a file whose bytes are not
// its declared type) as an attachment, its declared type kept, or
// application/octet-stream when its bytes contradict it.
func ServedType(declared string, head []byte) (contentType string, inline bool) {
	sniffed, _, _ := mime.ParseMediaType(http.DetectContentType(head))
	mt, _, err := mime.ParseMediaType(declared)
	if err != nil {
		return "application/octet-stream", false
	}
	switch {
	case mt == "image/png" || mt == "image/jpeg" || mt == "image/gif" || mt == "image/webp" || mt == "image/bmp":
		if sniffed == mt {
			return mt, true
		}
	case strings.HasPrefix(mt, "audio/") || strings.HasPrefix(mt, "video/"):
		if strings.HasPrefix(sniffed, "audio/") || strings.HasPrefix(sniffed, "video/") || sniffed == "application/ogg" {
			return mt, true
		}
	case mt == "text/plain" || mt == "text/csv" || mt == "text/markdown" || mt == "application/json":
		if sniffed == "text/plain" {
			return "text/plain; charset=utf-8", true
		}
	default:
		return declared, false
	}
	return "application/octet-stream", false // the bytes are not what the file claims
}

// upload saves a PUT's body as the file's next version.
func (s *Server) upload(w http.ResponseWriter, r *http.Request, thread string, key artifact.Key) {
	contentType := r.Header.Get("Content-Type")
	if r.ContentLength > s.cfg.MaxUploadBytes {
		s.WriteError(w, r, BadRequest(http.StatusRequestEntityTooLarge, "too_large", "the file is larger than %d bytes", s.cfg.MaxUploadBytes))
		return
	}
	body := http.MaxBytesReader(w, r.Body, s.cfg.MaxUploadBytes)
	keeper := s.cfg.Artifacts
	info, err := keeper.Save(artifact.WithScope(r.Context(), key.User, thread), artifact.DisplayName(artifact.Info{Key: key}), contentType, body)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		s.WriteError(w, r, BadRequest(http.StatusRequestEntityTooLarge, "too_large", "the file is larger than %d bytes", s.cfg.MaxUploadBytes))
		return
	case errors.Is(err, artifact.ErrContentType):
		s.WriteError(w, r, BadRequest(0, "bad_content_type", "the Content-Type does not parse"))
		return
	case err != nil:
		s.cfg.Logger.LogAttrs(r.Context(), slog.LevelDebug, "agentserver: saving an upload", slog.Any("error", err))
		s.WriteError(w, r, artifactError(err, "the file"))
		return
	}
	s.WriteJSON(w, r, http.StatusCreated, s.fileInfo(thread, info))
}
