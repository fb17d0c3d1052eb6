package artifact

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/toolset"
	"google.golang.org/genai"
)

// DefaultInlineLimit is the largest file a [Keeper] sends a model inline
// (in the request, base64) when it has an Uploader: a larger one is
// uploaded with the Files API once per version and referred to by its
// URI in every request. 256 KiB: an inline file is sent again, a third
// larger, with every later model call of the conversation, while an
// upload costs two requests once (see BENCHMARKS.md, "Artifacts").
const DefaultInlineLimit = 256 << 10

// MaxInline is the largest file a Keeper sends inline when it has no
// Uploader (Vertex AI has no Files API): 20 MiB, the Gemini API's
// request limit before 2026 and Vertex AI's inline limit. A larger file
// reaches the model as a sentence that says it is too large.
const MaxInline = 20 << 20

// UploadMargin is how long before its expiration time an uploaded file
// is uploaded again rather than named in a request: the Gemini API keeps
// a file 48 hours, and a request sent in its last minutes could reach the
// model after it is gone.
const UploadMargin = time.Hour

// An Uploader uploads a file to the model's API: *genai.Files (a
// client's Files, on the Gemini API) is one.
type Uploader interface {
	Upload(ctx context.Context, r io.Reader, config *genai.UploadFileConfig) (*genai.File, error)
}

// KeeperOptions configure a [Keeper].
type KeeperOptions struct {
	// Uploader uploads the files larger than InlineLimit (client.Files on
	// the Gemini API). Nil sends every file inline, up to MaxInline.
	Uploader Uploader

	// InlineLimit is the largest file sent inline when there is an
	// Uploader. Zero means DefaultInlineLimit; less than zero uploads
	// every file.
	InlineLimit int64

	// MaxFileSize bounds each file the Keeper saves (SaveOptions.MaxSize):
	// 0 means the store's own bound.
	MaxFileSize int64

	// MaxBytesPerUser bounds the bytes of each user's files
	// (SaveOptions.MaxBytesPerUser): a save past it fails with ErrQuota.
	// 0 means no bound.
	MaxBytesPerUser int64

	// Now tells the time, to judge an upload's expiry; nil means
	// time.Now.
	Now func() time.Time
}

// A Keeper keeps the files of an agent's runs in a [Store], and shows
// them to the model as its API takes them best. It is an
// agent.FileKeeper: given as agent.Config.Files, it keeps the media tools
// return as artifacts of the run's thread, so that the history holds a
// reference ("artifact:chart.png?version=2", a fileData part) rather than
// the bytes, and before each model call it resolves each reference in
// the request: a file up to the inline limit is sent inline; a larger
// one is uploaded with the Files API once per version (again once its
// upload nears its expiry) and named by its URI.
//
// Whose files they are comes from the context: [WithScope] (package
// agentserver sets it for every served run). A run without a scope keeps
// its media inline, as without a Keeper.
//
// A Keeper is safe for concurrent use.
type Keeper struct {
	store Store
	opts  KeeperOptions

	mu      sync.Mutex
	uploads map[uploadKey]*upload
}

// uploadKey names an upload: the bytes (their hash) and their type.
type uploadKey struct{ sha256, contentType string }

// upload is a file uploaded, or being uploaded.
type upload struct {
	done    chan struct{} // closed once file or err is set
	file    *genai.File
	err     error
	expires time.Time
}

// maxUploads bounds the uploads a Keeper remembers.
const maxUploads = 10000

// NewKeeper returns a Keeper of files in store.
func NewKeeper(store Store, opts KeeperOptions) *Keeper {
	if opts.InlineLimit == 0 {
		opts.InlineLimit = DefaultInlineLimit
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Keeper{store: store, opts: opts, uploads: map[uploadKey]*upload{}}
}

var _ agent.FileKeeper = (*Keeper)(nil)

// Store returns the Keeper's store.
func (k *Keeper) Store() Store { return k.store }

// Save saves r as the next version of the file named name (a name with
// [UserPrefix] is the user's own) in ctx's scope, with the Keeper's
// bounds, and returns its Info. Without a scope in ctx it fails.
func (k *Keeper) Save(ctx context.Context, name, contentType string, r io.Reader) (Info, error) {
	scope, ok := ScopeOf(ctx)
	if !ok {
		return Info{}, errors.New("artifact: the context names no scope (artifact.WithScope)")
	}
	key, err := scope.Key(name)
	if err != nil {
		return Info{}, err
	}
	return k.store.Save(ctx, key, r, SaveOptions{ContentType: contentType, MaxSize: k.opts.MaxFileSize, MaxBytesPerUser: k.opts.MaxBytesPerUser})
}

// Media returns the medium that refers to info's file: what a tool
// returns (in a toolset.MediaOutput) for the model to see a file it
// saved.
func Media(info Info) toolset.Media {
	name := DisplayName(info)
	return toolset.Media{MIMEType: info.ContentType, URI: URI(name, info.Version), Name: name}
}

// Part returns the fileData part that refers to info's file, for a
// history.
func Part(info Info) *genai.Part {
	name := DisplayName(info)
	return &genai.Part{FileData: &genai.FileData{FileURI: URI(name, info.Version), MIMEType: info.ContentType, DisplayName: name}}
}

// Keep implements agent.FileKeeper: it saves each medium that carries its
// data as a file of ctx's thread, and returns references to the
// versions saved. A medium's Name names its file; one without a name is
// named after the tool, with the extension of its type
// ("draw_chart.png", then "draw_chart-2.png" for a second medium of the
// same result), so that each call of a tool adds a version of the same
// file. Media that carry no data are returned as they are. Without a
// scope in ctx, media are returned as they are: inline.
func (k *Keeper) Keep(ctx context.Context, call *genai.FunctionCall, media []toolset.Media) ([]toolset.Media, error) {
	if _, ok := ScopeOf(ctx); !ok {
		return media, nil
	}
	tool := "file"
	if call != nil && call.Name != "" {
		tool = call.Name
	}
	out := make([]toolset.Media, len(media))
	for i, m := range media {
		if len(m.Data) == 0 {
			out[i] = m
			continue
		}
		name := m.Name
		if name == "" {
			name = defaultName(tool, i, m.MIMEType)
		}
		info, err := k.Save(ctx, name, m.MIMEType, bytes.NewReader(m.Data))
		if err != nil {
			return nil, err
		}
		out[i] = Media(info)
	}
	return out, nil
}

// defaultName is the name of the i-th medium of a result of tool, of
// type contentType, that has none.
func defaultName(tool string, i int, contentType string) string {
	name := strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r < ' ' {
			return '_'
		}
		return r
	}, tool)
	if i > 0 {
		name += "-" + strconv.Itoa(i+1)
	}
	return name + extension(contentType)
}

// extension returns the usual file name extension of contentType, or
// ".bin".
func extension(contentType string) string {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch mt {
	case "image/png":
		return ".png"
	case "image/jpeg":
		return ".jpg"
	case "text/plain":
		return ".txt"
	case "text/csv":
		return ".csv"
	case "application/pdf":
		return ".pdf"
	case "audio/wav", "audio/x-wav":
		return ".wav"
	}
	if exts, _ := mime.ExtensionsByType(mt); len(exts) > 0 {
		return exts[0]
	}
	return ".bin"
}

// KeepMessage saves the files a user's message carries inline (inlineData
// parts) as files of ctx's thread, and returns the message with a
// reference in place of each: what a served thread stores, so that the
// history holds a user's upload once, not in every later request. A
// part's DisplayName names its file ("upload.pdf" when it has none);
// msg is not modified. A message without inline files is returned as it
// is.
func (k *Keeper) KeepMessage(ctx context.Context, msg *genai.Content) (*genai.Content, error) {
	if msg == nil {
		return nil, nil
	}
	var out *genai.Content
	for i, p := range msg.Parts {
		if p == nil || p.InlineData == nil || len(p.InlineData.Data) == 0 {
			continue
		}
		name := p.InlineData.DisplayName
		if name == "" || CheckName(name) != nil {
			name = "upload" + extension(p.InlineData.MIMEType)
		}
		info, err := k.Save(ctx, name, p.InlineData.MIMEType, bytes.NewReader(p.InlineData.Data))
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = &genai.Content{Role: msg.Role, Parts: append([]*genai.Part(nil), msg.Parts...)}
		}
		ref := Part(info)
		ref.VideoMetadata, ref.MediaResolution = p.VideoMetadata, p.MediaResolution
		out.Parts[i] = ref
	}
	if out == nil {
		return msg, nil
	}
	return out, nil
}

// Resolve implements agent.FileKeeper: it returns contents with each
// reference to a file of ctx's scope (a fileData part whose URI is
// [URIScheme]'s, at the top of a content or in a function response)
// replaced by what the model reads: the file inline, or its upload's
// URI. A file the model cannot read (a type it takes neither inline nor
// uploaded, a file too large to send inline without an Uploader) becomes a
// sentence that says what it is (in a function response, where parts
// hold media only, it is left out); so does a reference to a file that
// was deleted, so that a thread whose file is gone goes on. contents is
// not modified: only the contents that change are copied.
func (k *Keeper) Resolve(ctx context.Context, contents []*genai.Content) ([]*genai.Content, error) {
	var (
		out   []*genai.Content
		scope Scope
		found bool
	)
	for ci, c := range contents {
		if c == nil {
			continue
		}
		var parts []*genai.Part
		for pi, p := range c.Parts {
			np, err := k.resolvePart(ctx, p, &scope, &found)
			if err != nil {
				return nil, err
			}
			if np == p {
				continue
			}
			if parts == nil {
				parts = append([]*genai.Part(nil), c.Parts...)
			}
			parts[pi] = np
		}
		if parts == nil {
			continue
		}
		if out == nil {
			out = append([]*genai.Content(nil), contents...)
		}
		out[ci] = &genai.Content{Role: c.Role, Parts: parts}
	}
	if out == nil {
		return contents, nil
	}
	return out, nil
}

// resolvePart returns p resolved, or p itself when it holds no
// reference. scope is read from ctx once, on the first reference.
func (k *Keeper) resolvePart(ctx context.Context, p *genai.Part, scope *Scope, found *bool) (*genai.Part, error) {
	if p == nil {
		return p, nil
	}
	if fd := p.FileData; fd != nil {
		ref, err := k.resolve(ctx, fd.FileURI, scope, found)
		if err != nil || ref == nil {
			return p, err
		}
		if ref.data == nil && ref.uri == "" {
			return &genai.Part{Text: ref.text}, nil
		}
		np := *p
		np.FileData, np.InlineData = nil, nil
		if ref.data != nil {
			np.InlineData = &genai.Blob{MIMEType: ref.mimeType, Data: ref.data}
		} else {
			np.FileData = &genai.FileData{FileURI: ref.uri, MIMEType: ref.mimeType}
		}
		return &np, nil
	}
	fr := p.FunctionResponse
	if fr == nil {
		return p, nil
	}
	var parts []*genai.FunctionResponsePart
	for i, rp := range fr.Parts {
		if rp == nil || rp.FileData == nil {
			continue
		}
		ref, err := k.resolve(ctx, rp.FileData.FileURI, scope, found)
		if err != nil {
			return nil, err
		}
		if ref == nil {
			continue
		}
		if parts == nil {
			parts = append([]*genai.FunctionResponsePart(nil), fr.Parts...)
		}
		switch {
		case ref.data != nil:
			parts[i] = &genai.FunctionResponsePart{InlineData: &genai.FunctionResponseBlob{MIMEType: ref.mimeType, Data: ref.data}}
		case ref.uri != "":
			parts[i] = &genai.FunctionResponsePart{FileData: &genai.FunctionResponseFileData{FileURI: ref.uri, MIMEType: ref.mimeType}}
		default:
			parts[i] = nil // a part holds media only: the file is left out
		}
	}
	if parts == nil {
		return p, nil
	}
	kept := parts[:0]
	for _, rp := range parts {
		if rp != nil {
			kept = append(kept, rp)
		}
	}
	nfr := *fr
	nfr.Parts = kept
	if len(kept) == 0 {
		nfr.Parts = nil
	}
	np := *p
	np.FunctionResponse = &nfr
	return &np, nil
}

// resolved is what a reference becomes: data to send inline, an
// upload's URI, or a sentence.
type resolved struct {
	mimeType string
	data     []byte
	uri      string
	text     string
}

// resolve returns what uri becomes, or nil when it is not a reference.
func (k *Keeper) resolve(ctx context.Context, uri string, scope *Scope, found *bool) (*resolved, error) {
	name, version, isRef, err := ParseURI(uri)
	if !isRef {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !*found {
		if *scope, *found = ScopeOf(ctx); !*found {
			return nil, fmt.Errorf("artifact: the history refers to %q, but the context names no scope (artifact.WithScope)", name)
		}
	}
	key, err := scope.Key(name)
	if err != nil {
		return nil, err
	}
	f, err := k.store.Open(ctx, key, version)
	if errors.Is(err, ErrNotFound) {
		return &resolved{text: fmt.Sprintf("[the file %s, version %d, was deleted]", name, version)}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info := f.Info()
	mt, ok := ModelType(info.ContentType)
	switch {
	case !ok:
		return &resolved{text: fmt.Sprintf("[the file %s, version %d: %s, %d bytes, which the model cannot read]", name, version, info.ContentType, info.Size)}, nil
	case k.opts.Uploader != nil && (k.opts.InlineLimit < 0 || info.Size > k.opts.InlineLimit):
		up, err := k.upload(ctx, f, info, mt)
		if err != nil {
			return nil, err
		}
		return &resolved{mimeType: mt, uri: up.URI}, nil
	case k.opts.Uploader == nil && info.Size > MaxInline:
		return &resolved{text: fmt.Sprintf("[the file %s, version %d: %s, %d bytes, too large to send the model]", name, version, info.ContentType, info.Size)}, nil
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("artifact: reading %q version %d: %w", name, version, err)
	}
	return &resolved{mimeType: mt, data: data}, nil
}

// ModelType returns the media type under which a Gemini model reads a
// file of contentType, and false for a type it does not read: images
// (PNG, JPEG, WebP, HEIC, HEIF), audio, video and PDF as they are; text
// of any kind, JSON, XML and JavaScript as text/plain (the model reads
// them as text; the API refuses most text/* subtypes under their own
// name); anything else, such as a zip or an octet stream, not at all
// (https://ai.google.dev/gemini-api/docs/file-input-methods).
func ModelType(contentType string) (string, bool) {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return "", false
	}
	switch {
	case mt == "image/png", mt == "image/jpeg", mt == "image/webp", mt == "image/heic", mt == "image/heif",
		strings.HasPrefix(mt, "audio/"), strings.HasPrefix(mt, "video/"), mt == "application/pdf":
		return mt, true
	case strings.HasPrefix(mt, "text/"), mt == "application/json", mt == "application/xml", mt == "image/svg+xml",
		mt == "application/javascript", strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
		return "text/plain", true
	}
	return "", false
}

// upload returns the upload of f's bytes, uploading them when no upload
// of the same bytes and type is live; concurrent resolutions of one file
// wait for one upload.
func (k *Keeper) upload(ctx context.Context, f File, info Info, mimeType string) (*genai.File, error) {
	key := uploadKey{info.SHA256, mimeType}
	now := k.opts.Now()
	k.mu.Lock()
	u := k.uploads[key]
	if u != nil {
		select {
		case <-u.done:
			if u.err != nil || !now.Before(u.expires.Add(-UploadMargin)) {
				u = nil // failed, or about to expire: upload again
			}
		default:
		}
	}
	mine := u == nil
	if mine {
		u = &upload{done: make(chan struct{})}
		k.forgetLocked(now)
		k.uploads[key] = u
	}
	k.mu.Unlock()
	if !mine {
		select {
		case <-u.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if u.err != nil {
			return nil, u.err
		}
		return u.file, nil
	}
	file, err := k.opts.Uploader.Upload(ctx, f, &genai.UploadFileConfig{MIMEType: mimeType, DisplayName: DisplayName(info)})
	if err == nil && (file == nil || file.URI == "") {
		err = errors.New("the upload returned no file URI")
	}
	if err != nil {
		err = fmt.Errorf("artifact: uploading %q version %d: %w", DisplayName(info), info.Version, err)
	} else {
		u.file = file
		u.expires = file.ExpirationTime
		if u.expires.IsZero() {
			u.expires = now.Add(48 * time.Hour)
		}
	}
	u.err = err
	close(u.done)
	if err != nil {
		k.mu.Lock()
		if k.uploads[key] == u {
			delete(k.uploads, key)
		}
		k.mu.Unlock()
		return nil, err
	}
	return file, nil
}

// forgetLocked drops the uploads that expired, and the oldest ones past
// maxUploads; k.mu is held.
func (k *Keeper) forgetLocked(now time.Time) {
	if len(k.uploads) < maxUploads {
		return
	}
	var oldest uploadKey
	var oldestTime time.Time
	for key, u := range k.uploads {
		select {
		case <-u.done:
		default:
			continue // in flight
		}
		if !now.Before(u.expires) {
			delete(k.uploads, key)
			continue
		}
		if oldestTime.IsZero() || u.expires.Before(oldestTime) {
			oldest, oldestTime = key, u.expires
		}
	}
	if len(k.uploads) >= maxUploads && !oldestTime.IsZero() {
		delete(k.uploads, oldest)
	}
}
