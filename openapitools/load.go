package openapitools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
)

// Default limits; see [Options].
const (
	// DefaultMaxDescriptionBytes bounds a description read from a file or
	// a URL, and each document an allowed external $ref reads: 32 MiB.
	DefaultMaxDescriptionBytes = 32 << 20
	// DefaultMaxResponseBytes bounds the body the model reads of an
	// answer: 32 KiB, about 8,000 tokens.
	DefaultMaxResponseBytes = 32 << 10
	// DefaultTimeout bounds one call, from sending the request to the
	// last byte read of its answer.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxDescriptionLen bounds the description a tool gets from its
	// operation's summary and description, in bytes.
	DefaultMaxDescriptionLen = 1024
	// maxExternalDocuments bounds the documents allowed external $refs
	// may read for one description.
	maxExternalDocuments = 64
)

// Errors the package wraps. Match them with [errors.Is].
var (
	// ErrInvalidDescription is wrapped by the error of a description that
	// cannot be read: not JSON or YAML, not Swagger 2.0 or OpenAPI 3.x,
	// or broken beyond use.
	ErrInvalidDescription = errors.New("invalid OpenAPI description")
	// ErrTooLarge is wrapped by the error of a description, or of a
	// document an external $ref reads, larger than
	// Options.MaxDescriptionBytes.
	ErrTooLarge = errors.New("OpenAPI description too large")
	// ErrExternalRef is wrapped by the error of a description with a $ref
	// to another file or URL, which is refused unless
	// Options.AllowExternalRefs is set.
	ErrExternalRef = errors.New("external $ref refused")
	// ErrUnsupported is wrapped by the Err of an operation that cannot be
	// made a tool: a $ref that leads nowhere or only to itself, a schema
	// nested too deep... (an operation over the schema budget wraps
	// toolset.ErrSchemaTooLarge instead).
	ErrUnsupported = errors.New("operation cannot be made a tool")
	// ErrExcluded is wrapped by the Err of an operation the Options'
	// filters (Tags, Methods, Paths, Include) leave out.
	ErrExcluded = errors.New("operation excluded")
	// ErrNoCredentials is wrapped by the error of a call refused because
	// the program supplied no credentials for any of the security
	// requirements of its operation (see Options.Credentials).
	ErrNoCredentials = errors.New("no credentials for the operation's security requirements")
	// ErrNoServer is wrapped by the error of a call whose operation has no
	// absolute server URL: set Options.BaseURL.
	ErrNoServer = errors.New("no server URL")
	// ErrCredentialMismatch is wrapped by the error of Parse when a
	// credential is given for a security scheme it does not fit, or for
	// a scheme the description does not declare.
	ErrCredentialMismatch = errors.New("credential does not fit the security scheme")
)

// Options configures how a description becomes tools and how calls are
// made. The zero value (or nil) is usable: every operation becomes a tool,
// calls go to the description's first server through
// [http.DefaultClient], and operations that change something (any method
// but GET and HEAD) need approval.
type Options struct {
	// HTTPClient makes the calls, fetches a description for [ParseURL],
	// the documents allowed external $refs point to, and OAuth2 tokens.
	// Nil means http.DefaultClient. Its CheckRedirect is kept, but a
	// redirect to another host, or from https to http, never carries the
	// credentials this package adds.
	HTTPClient *http.Client

	// BaseURL replaces the description's servers: a request goes to
	// BaseURL followed by the operation's path. Set it when the
	// description names no server, a relative one, or not the one to
	// call.
	BaseURL string

	// ServerVariables sets the variables of the servers' URL templates
	// ({region} in https://{region}.example.com); a variable not set
	// takes its default. A value outside a variable's enum is an error.
	ServerVariables map[string]string

	// Credentials supplies the credentials of the description's security
	// schemes, by scheme name (the keys of components.securitySchemes,
	// or of securityDefinitions in Swagger 2.0): [APIKey], [Basic],
	// [Bearer], [TokenSource], [ClientCredentials] or [CustomAuth]. They
	// are the program's: never part of a tool's arguments, never logged.
	// A credential that does not fit its scheme, or names no scheme, is
	// an error of Parse wrapping [ErrCredentialMismatch].
	Credentials map[string]Credential

	// Secrets supplies credentials as strings, by scheme name, each read
	// by its scheme's kind: an apiKey scheme's key, an http basic
	// scheme's "user:password", the token of an http bearer, oauth2 or
	// openIdConnect scheme ([Bearer]). It suits a command line or an
	// environment; a scheme in both takes Credentials'. A secret for a
	// scheme the description does not declare, or of another kind, is an
	// error of Parse wrapping [ErrCredentialMismatch].
	Secrets map[string]string

	// Prefix is put in front of every tool name, such as "github_".
	Prefix string

	// Tags, Methods and Paths keep only the operations that have one of
	// the tags, one of the methods (case-insensitive), or a path that
	// matches one of the patterns ([path.Match], against the path as
	// written: "/pets/*", "/pets/{petId}"). Include keeps only the
	// operations for which it returns true. Each that is set must keep
	// an operation; the others are reported, their Err wrapping
	// [ErrExcluded].
	Tags    []string
	Methods []string
	Paths   []string
	Include func(op *Operation) bool

	// NeedsApproval says which operations a person must approve before a
	// call runs ([API.NeedsApproval] hands it to agent.Config). Nil
	// means every operation but GET and HEAD ones.
	NeedsApproval func(op *Operation) bool

	// Timeout bounds one call, from sending the request to reading its
	// answer; the context of the call bounds it too. Zero means
	// [DefaultTimeout]; a negative value, no bound but the context's.
	Timeout time.Duration

	// MaxResponseBytes bounds the body the model reads of an answer;
	// longer bodies are cut, and the answer says so. Zero means
	// [DefaultMaxResponseBytes].
	MaxResponseBytes int

	// MaxDescriptionBytes bounds a description read by [ParseFile] or
	// [ParseURL], and each document an external $ref reads. Zero means
	// [DefaultMaxDescriptionBytes].
	MaxDescriptionBytes int64

	// MaxDescriptionLen bounds each tool's description, made of its
	// operation's summary and description, in bytes; a longer one is cut
	// at a word. Zero means [DefaultMaxDescriptionLen]; negative, no
	// bound.
	MaxDescriptionLen int

	// AllowExternalRefs lets $refs point outside the description: to
	// http and https URLs, fetched with HTTPClient, and, for a
	// description read from a file, to files in that file's directory
	// and below. Without it such a $ref fails Parse with an error
	// wrapping [ErrExternalRef].
	AllowExternalRefs bool

	// Binary, when set, receives the body of an answer that is neither
	// JSON nor text (an image, a PDF, an archive...), up to
	// MaxBinaryBytes, and returns what the model reads in its place,
	// such as a reference to where it was stored. Without it the model
	// reads a summary: the media type and the size.
	Binary func(ctx context.Context, b *BinaryBody) (any, error)

	// MaxBinaryBytes bounds what Binary receives, and the bytes counted
	// for the summary: 64 MiB when zero.
	MaxBinaryBytes int64

	// Prepare, when set, sees every request just before it is sent,
	// credentials added, and may change it: sign it, add a header.
	Prepare func(ctx context.Context, op *Operation, req *http.Request) error

	// Logger receives a line per call (at Debug: method, URL path,
	// status, duration; never credentials, arguments or bodies) and per
	// operation left out (at Debug). Nil means no logging.
	Logger *slog.Logger
}

// BinaryBody is an answer's body that is neither JSON nor text, for
// Options.Binary.
type BinaryBody struct {
	Operation   *Operation
	Status      int
	ContentType string
	// Body reads the body, at most MaxBinaryBytes of it.
	Body io.Reader
}

func (o *Options) client() *http.Client {
	if o.HTTPClient != nil {
		return o.HTTPClient
	}
	return http.DefaultClient
}

func (o *Options) maxDescriptionBytes() int64 {
	if o.MaxDescriptionBytes > 0 {
		return o.MaxDescriptionBytes
	}
	return DefaultMaxDescriptionBytes
}

// Parse reads a description (Swagger 2.0, OpenAPI 3.0 or 3.1, as JSON or
// YAML) and makes a tool of each of its operations. An operation that
// cannot be a tool is reported, not an error (see [API.Skipped]); a
// description that cannot be read at all is an error wrapping
// [ErrInvalidDescription], [ErrExternalRef] or [ErrCredentialMismatch].
// opts may be nil.
func Parse(ctx context.Context, data []byte, opts *Options) (*API, error) {
	return parse(ctx, data, nil, opts)
}

// ParseFile reads the description in the named file; see [Parse]. Allowed
// external $refs may read files in its directory.
func ParseFile(ctx context.Context, name string, opts *Options) (*API, error) {
	if opts == nil {
		opts = &Options{}
	}
	data, err := readFileLimited(name, opts.maxDescriptionBytes())
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(name)
	if err != nil {
		return nil, err
	}
	return parse(ctx, data, &url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}, opts)
}

// ParseURL fetches the description at an http or https URL with
// Options.HTTPClient, at most Options.MaxDescriptionBytes of it; see
// [Parse]. Relative server URLs in it are taken relative to rawURL.
func ParseURL(ctx context.Context, rawURL string, opts *Options) (*API, error) {
	if opts == nil {
		opts = &Options{}
	}
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openapitools: %q is not an http or https URL", rawURL)
	}
	data, err := fetch(ctx, opts.client(), u, opts.maxDescriptionBytes())
	if err != nil {
		return nil, err
	}
	return parse(ctx, data, u, opts)
}

func readFileLimited(name string, limit int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("openapitools: %w", err)
	}
	defer f.Close()
	return readLimited(f, limit, name)
}

func readLimited(r io.Reader, limit int64, what string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("openapitools: reading %s: %w", what, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("openapitools: %s: %w: more than %d bytes", what, ErrTooLarge, limit)
	}
	return data, nil
}

func fetch(ctx context.Context, c *http.Client, u *url.URL, limit int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("openapitools: %w", err)
	}
	req.Header.Set("Accept", "application/json, application/yaml, text/yaml, */*")
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("openapitools: fetching %s: %w", redactURL(u), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("openapitools: fetching %s: %s", redactURL(u), resp.Status)
	}
	return readLimited(resp.Body, limit, redactURL(u))
}

// redactURL prints u without its query and user information, which may
// carry secrets.
func redactURL(u *url.URL) string {
	c := *u
	c.User, c.RawQuery, c.ForceQuery, c.Fragment = nil, "", false, ""
	return c.String()
}

// load decodes data into an OpenAPI 3 document, converting Swagger 2.0.
// kin-openapi panics on some malformed input: a panic is an error.
func load(ctx context.Context, data []byte, location *url.URL, opts *Options) (doc *openapi3.T, v2 *openapi2.T, err error) {
	defer func() {
		if v := recover(); v != nil {
			doc, v2, err = nil, nil, fmt.Errorf("openapitools: %w: %v", ErrInvalidDescription, v)
		}
	}()
	loader := openapi3.NewLoader()
	loader.Context = ctx
	refs := &refReader{ctx: ctx, opts: opts, root: location}
	loader.ReadFromURIFunc = refs.read
	// The reader alone decides what may be read: kin-openapi hands it
	// every external reference.
	loader.IsExternalRefsAllowed = true
	wrap := func(err error) error {
		if refs.err != nil {
			return refs.err
		}
		if de := (*openapi3.DisallowedExternalRefError)(nil); errors.As(err, &de) {
			return fmt.Errorf("openapitools: %w: %w", ErrExternalRef, err)
		}
		return fmt.Errorf("openapitools: %w: %w", ErrInvalidDescription, err)
	}
	switch version(data) {
	case "2":
		var d2 openapi2.T
		if err := openapi2.UnmarshalFromData(data, &d2); err != nil {
			return nil, nil, wrap(err)
		}
		if !strings.HasPrefix(d2.Swagger, "2") {
			return nil, nil, fmt.Errorf("openapitools: %w: swagger %q is not 2.0", ErrInvalidDescription, d2.Swagger)
		}
		doc, err := openapi2conv.ToV3WithLoader(&d2, loader, location)
		if err != nil {
			return nil, nil, wrap(err)
		}
		return doc, &d2, nil
	case "3":
		var doc *openapi3.T
		var err error
		if location != nil {
			doc, err = loader.LoadFromDataWithPath(data, location)
		} else {
			doc, err = loader.LoadFromData(data)
		}
		if err != nil {
			return nil, nil, wrap(err)
		}
		if !strings.HasPrefix(doc.OpenAPI, "3.") {
			return nil, nil, fmt.Errorf("openapitools: %w: openapi %q is not 3.x", ErrInvalidDescription, doc.OpenAPI)
		}
		return doc, nil, nil
	}
	return nil, nil, fmt.Errorf("openapitools: %w: neither a \"swagger\" nor an \"openapi\" field at the top", ErrInvalidDescription)
}

// version tells Swagger 2.0 ("2") from OpenAPI 3 ("3") by the top-level
// field, without decoding the whole document: a key at the start of a line
// in YAML, a key of the top object in JSON.
func version(data []byte) string {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		// JSON: find the key at depth 1.
		depth, inString, escaped := 0, false, false
		for i := 0; i < len(trimmed); i++ {
			c := trimmed[i]
			switch {
			case inString:
				if escaped {
					escaped = false
				} else if c == '\\' {
					escaped = true
				} else if c == '"' {
					inString = false
				}
			case c == '"':
				if depth == 1 {
					rest := trimmed[i:]
					if bytes.HasPrefix(rest, []byte(`"swagger"`)) {
						return "2"
					}
					if bytes.HasPrefix(rest, []byte(`"openapi"`)) {
						return "3"
					}
				}
				inString = true
			case c == '{' || c == '[':
				depth++
			case c == '}' || c == ']':
				depth--
			}
		}
		return ""
	}
	for line := range bytes.Lines(data) {
		if bytes.HasPrefix(line, []byte("swagger:")) || bytes.HasPrefix(line, []byte(`"swagger":`)) || bytes.HasPrefix(line, []byte("'swagger':")) {
			return "2"
		}
		if bytes.HasPrefix(line, []byte("openapi:")) || bytes.HasPrefix(line, []byte(`"openapi":`)) || bytes.HasPrefix(line, []byte("'openapi':")) {
			return "3"
		}
	}
	return ""
}

// refReader reads what external $refs point to, when allowed: http and
// https URLs with the program's client, files below the description's
// directory. It is the loader's only way out: kin-openapi's own readers are
// never used.
type refReader struct {
	ctx   context.Context
	opts  *Options
	root  *url.URL
	count int
	err   error // the first refusal, returned by Parse as it is
}

func (r *refReader) read(_ *openapi3.Loader, u *url.URL) ([]byte, error) {
	fail := func(err error) ([]byte, error) {
		if r.err == nil {
			r.err = err
		}
		return nil, err
	}
	if !r.opts.AllowExternalRefs {
		return fail(fmt.Errorf("openapitools: %w: $ref to %s (set Options.AllowExternalRefs to follow it)", ErrExternalRef, redactURL(u)))
	}
	if r.count++; r.count > maxExternalDocuments {
		return fail(fmt.Errorf("openapitools: %w: more than %d external documents", ErrExternalRef, maxExternalDocuments))
	}
	switch u.Scheme {
	case "http", "https":
		data, err := fetch(r.ctx, r.opts.client(), u, r.opts.maxDescriptionBytes())
		if err != nil {
			return fail(err)
		}
		return data, nil
	case "", "file":
		if r.root == nil || r.root.Scheme != "file" {
			return fail(fmt.Errorf("openapitools: %w: $ref to the file %s from a description not read from a file", ErrExternalRef, u.Path))
		}
		dir := filepath.Dir(filepath.FromSlash(r.root.Path))
		name := filepath.Clean(filepath.FromSlash(u.Path))
		if rel, err := filepath.Rel(dir, name); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return fail(fmt.Errorf("openapitools: %w: $ref to %s, outside the description's directory", ErrExternalRef, u.Path))
		}
		data, err := readFileLimited(name, r.opts.maxDescriptionBytes())
		if err != nil {
			return fail(err)
		}
		return data, nil
	}
	return fail(fmt.Errorf("openapitools: %w: $ref to %s: only http, https and file references are followed", ErrExternalRef, redactURL(u)))
}
