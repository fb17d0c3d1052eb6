package artifact

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The errors of stores, matched with errors.Is.
var (
	// ErrNotFound: no such file or version (or another user's).
	ErrNotFound = errors.New("artifact: not found")
	// ErrBadKey: a user, thread or file name a store refuses (see
	// [CheckKey]).
	ErrBadKey = errors.New("artifact: bad key")
	// ErrQuota: the save would take the user past
	// SaveOptions.MaxBytesPerUser (or a store past what it holds).
	ErrQuota = errors.New("artifact: quota exceeded")
	// ErrTooLarge: the file is larger than SaveOptions.MaxSize or the
	// store's own limit.
	ErrTooLarge = errors.New("artifact: file too large")
	// ErrContentType: SaveOptions.ContentType does not parse as a media
	// type.
	ErrContentType = errors.New("artifact: bad content type")
)

// The bounds of a [Key].
const (
	MaxUserLen   = 256 // bytes of Key.User
	MaxThreadLen = 256 // bytes of Key.Thread
	MaxNameLen   = 512 // bytes of Key.Name
)

// A Key names a file: whose it is, where it is kept, and its name. A file
// has versions, numbered from 1.
type Key struct {
	// User owns the file: no other user reaches it. Required.
	User string `json:"user"`
	// Thread is the conversation the file belongs to; "" for the user's
	// own files, which every thread of theirs reaches.
	Thread string `json:"thread,omitempty"`
	// Name is the file's name, which may hold folders ("reports/q1.csv").
	// See [CheckName].
	Name string `json:"name"`
}

// Info describes one version of a file.
type Info struct {
	Key
	// Version is the version's number: 1 for a file's first save, one
	// more for each save after it. A number is never given twice to one
	// name, deleted versions' included.
	Version int `json:"version"`
	// ContentType is the file's media type, as the save declared it
	// (normalized), or sniffed from its first bytes when it declared none.
	// It is what the saver said, not a verified fact: see [Sniff] before
	// serving it to a browser.
	ContentType string `json:"contentType"`
	// Size is the file's length in bytes.
	Size int64 `json:"size"`
	// SHA256 is the hex SHA-256 of the file's bytes.
	SHA256 string `json:"sha256"`
	// Created is when the version was saved.
	Created time.Time `json:"created"`
}

// SaveOptions are the options of one save.
type SaveOptions struct {
	// ContentType is the file's media type ("image/png", "text/csv;
	// charset=utf-8"). Empty means sniffed from the first 512 bytes
	// (http.DetectContentType); one that does not parse is refused.
	ContentType string
	// MaxSize bounds the file's size: a longer file is refused with
	// ErrTooLarge and nothing is kept. 0 means the store's own limit
	// (every store documents one); less than 0 is an error.
	MaxSize int64
	// MaxBytesPerUser bounds the bytes of all the user's files, every
	// version of each counted, with this one: a save that would take the
	// user past it is refused with ErrQuota, and nothing is kept. 0 means
	// no bound. Stores decide it atomically: of concurrent saves, those
	// that fit are kept (the directory store across processes on Unix;
	// see each store).
	MaxBytesPerUser int64
}

// A Store keeps files, each save a new immutable version. Every method is
// safe for concurrent use, and a save is atomic: a reader sees a version
// whole or not at all, a save that fails (a reader's error, a quota, a
// cancelled context) keeps nothing, and concurrent saves of one name get
// distinct versions, none lost. Package artifacttest holds the contract
// every Store passes.
type Store interface {
	// Save reads r to its end and keeps it as the next version of the
	// file. It returns the version's Info.
	Save(ctx context.Context, key Key, r io.Reader, opts SaveOptions) (Info, error)
	// Open opens one version of the file, the latest when version is 0.
	// The caller must Close it. A version that does not exist (deleted,
	// never saved, another user's) is ErrNotFound.
	Open(ctx context.Context, key Key, version int) (File, error)
	// List describes the latest version of each file of user's thread
	// (thread "": the user's own files), sorted by name.
	List(ctx context.Context, user, thread string) ([]Info, error)
	// Versions describes every version of the file, oldest first;
	// ErrNotFound when it has none.
	Versions(ctx context.Context, key Key) ([]Info, error)
	// Delete deletes one version of the file, or every version when
	// version is 0; ErrNotFound when there is none. The numbers of
	// deleted versions are not given again.
	Delete(ctx context.Context, key Key, version int) error
	// DeleteThread deletes every file of user's thread (thread "": the
	// user's own files). A thread without files is not an error.
	DeleteThread(ctx context.Context, user, thread string) error
	// Usage returns the bytes of all user's files, every version of
	// each counted: what SaveOptions.MaxBytesPerUser bounds.
	Usage(ctx context.Context, user string) (int64, error)
}

// A File is an open version of a file: its bytes, which it reads and
// seeks (http.ServeContent serves ranges of it), and its Info.
type File interface {
	io.ReadSeekCloser
	Info() Info
}

// CheckKey returns an error wrapping ErrBadKey when a store must refuse
// key: a user that is empty, or a user or thread longer than its bound or
// holding a NUL or another control character, or a name [CheckName]
// refuses.
func CheckKey(key Key) error {
	if err := CheckScope(key.User, key.Thread); err != nil {
		return err
	}
	return CheckName(key.Name)
}

// CheckScope returns an error wrapping ErrBadKey when a store must refuse
// user's thread as [CheckKey] says.
func CheckScope(user, thread string) error {
	switch {
	case user == "":
		return fmt.Errorf("%w: the user is empty", ErrBadKey)
	case len(user) > MaxUserLen:
		return fmt.Errorf("%w: the user is longer than %d bytes", ErrBadKey, MaxUserLen)
	case len(thread) > MaxThreadLen:
		return fmt.Errorf("%w: the thread is longer than %d bytes", ErrBadKey, MaxThreadLen)
	case hasControl(user) || hasControl(thread):
		return fmt.Errorf("%w: the user or thread holds a control character", ErrBadKey)
	}
	return nil
}

// CheckName returns an error wrapping ErrBadKey for a file name that
// could escape its folder, or that a person could not read, in any store:
// an empty name, one longer than MaxNameLen bytes or not valid UTF-8; one
// that holds a NUL, another control character or a backslash; one that
// starts or ends with a slash (an absolute path, a folder); and one with
// an empty, "." or ".." segment. A name may hold folders, separated by
// slashes ("reports/2026/q1.csv").
func CheckName(name string) error {
	var problem string
	switch {
	case name == "":
		problem = "is empty"
	case len(name) > MaxNameLen:
		problem = fmt.Sprintf("is longer than %d bytes", MaxNameLen)
	case !utf8.ValidString(name):
		problem = "is not valid UTF-8"
	case hasControl(name):
		problem = "holds a control character"
	case strings.ContainsRune(name, '\\'):
		problem = "holds a backslash"
	case strings.HasPrefix(name, "/"):
		problem = "is an absolute path"
	case strings.HasSuffix(name, "/"):
		problem = "ends with a slash"
	default:
		for seg := range strings.SplitSeq(name, "/") {
			if seg == "" || seg == "." || seg == ".." {
				problem = fmt.Sprintf("has a segment %q", seg)
				break
			}
		}
	}
	if problem != "" {
		return fmt.Errorf("%w: the file name %q %s", ErrBadKey, truncate(name, 80), problem)
	}
	return nil
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, unicode.IsControl)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// checkVersion refuses a negative version.
func checkVersion(version int) error {
	if version < 0 {
		return fmt.Errorf("%w: version %d", ErrNotFound, version)
	}
	return nil
}

// Incoming reads a file being saved: the first bytes, to sniff, then the
// rest, counting its size against a limit and hashing it. Stores call
// [Begin] to make one, read it to its end, then call Info.
type Incoming struct {
	r           *bufio.Reader
	hash        hash.Hash
	size, limit int64
	contentType string
	err         error
}

// Begin starts reading a save of r: it reads the first bytes to find the
// content type (declared, or sniffed when opts declares none), and checks
// opts. limit is the store's own bound on a file's size, which
// opts.MaxSize may lower. An error wraps ErrTooLarge for a bound that is
// not valid, or says that the declared type does not parse.
func Begin(r io.Reader, opts SaveOptions, limit int64) (*Incoming, error) {
	if opts.MaxSize < 0 || opts.MaxBytesPerUser < 0 {
		return nil, fmt.Errorf("artifact: a negative bound in SaveOptions (MaxSize %d, MaxBytesPerUser %d)", opts.MaxSize, opts.MaxBytesPerUser)
	}
	if opts.MaxSize > 0 && (limit <= 0 || opts.MaxSize < limit) {
		limit = opts.MaxSize
	}
	in := &Incoming{r: bufio.NewReaderSize(r, 512), hash: sha256.New(), limit: limit}
	head, err := in.r.Peek(512)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("artifact: reading the file: %w", err)
	}
	ct, err := normalizeType(opts.ContentType, head)
	if err != nil {
		return nil, err
	}
	in.contentType = ct
	return in, nil
}

// normalizeType returns declared, normalized, or the type sniffed from
// head when declared is empty.
func normalizeType(declared string, head []byte) (string, error) {
	if strings.TrimSpace(declared) == "" {
		return http.DetectContentType(head), nil
	}
	mt, params, err := mime.ParseMediaType(declared)
	if err != nil || !strings.Contains(mt, "/") {
		return "", fmt.Errorf("%w: %q does not parse", ErrContentType, truncate(declared, 80))
	}
	return mime.FormatMediaType(mt, params), nil
}

// Read implements io.Reader: the file's bytes, hashed and counted; past
// the limit it fails with an error wrapping ErrTooLarge.
func (in *Incoming) Read(p []byte) (int, error) {
	if in.err != nil {
		return 0, in.err
	}
	n, err := in.r.Read(p)
	in.size += int64(n)
	in.hash.Write(p[:n])
	if in.limit > 0 && in.size > in.limit {
		in.err = fmt.Errorf("%w: more than %d bytes", ErrTooLarge, in.limit)
		return n, in.err
	}
	if err != nil && err != io.EOF {
		in.err = fmt.Errorf("artifact: reading the file: %w", err)
		return n, in.err
	}
	return n, err
}

// Info returns the Info of key's version, once the file was read to its
// end.
func (in *Incoming) Info(key Key, version int, created time.Time) Info {
	return Info{Key: key, Version: version, ContentType: in.contentType, Size: in.size,
		SHA256: hex.EncodeToString(in.hash.Sum(nil)), Created: created.UTC()}
}

// Size returns the bytes read so far.
func (in *Incoming) Size() int64 { return in.size }

// ContentType returns the file's content type.
func (in *Incoming) ContentType() string { return in.contentType }

// QuotaError returns the error of a save of size bytes that would take a
// user who holds used bytes past max.
func QuotaError(used, size, max int64) error {
	return fmt.Errorf("%w: the user's files hold %d bytes; %d more would pass the bound of %d", ErrQuota, used, size, max)
}
