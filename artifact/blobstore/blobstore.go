// Package blobstore is an artifact.Store in any object store that
// gocloud.dev/blob opens: Google Cloud Storage, Amazon S3, Azure Blob
// Storage, a local directory, memory. It is a module of its own
// (github.com/toolnexus/toolnexus-go/artifact/blobstore), so that a
// program that keeps its files elsewhere never has a cloud SDK in its
// module graph.
//
//	import (
//		"gocloud.dev/blob"
//		_ "gocloud.dev/blob/gcsblob" // the gs:// scheme; s3blob, azureblob…
//	)
//	bucket, err := blob.OpenBucket(ctx, "gs://my-bucket?prefix=artifacts/")
//	store := blobstore.New(bucket, blobstore.Options{})
//	keeper := artifact.NewKeeper(store, artifact.KeeperOptions{Uploader: client.Files})
//
// # Layout
//
// Under the bucket, a file's objects are under
// u{user}/t{thread}/n{name}/, each escaped to one segment as package
// artifact's directory store escapes them: d/{random} holds the bytes of
// one version, with its content type; v/{number} (ten digits) is the
// version, a small JSON object that names its bytes and says their type,
// size, SHA-256 and time. A version exists once its v/ object does.
//
// # Guarantees
//
// A save writes the bytes first, then the version's object with the
// store's "if it does not exist" precondition (blob.WriterOptions.IfNotExist:
// S3's If-None-Match, GCS's ifGenerationMatch=0, Azure's If-None-Match):
// two savers, in any processes, never take one number, and the one that
// loses takes the next, its bytes already written. The number tried first
// is one more than the highest the listing shows; a listing that fails
// fails the save (the store never guesses a number), and one that misses
// versions (a stale view) costs a retry, never a version. A reader sees a
// version whole, its bytes written before it. A deleted version's object
// is replaced by a tombstone, so that its number is not given again.
//
// Quotas are not atomic: the user's total is read from a listing of their
// bytes before the version is written, so that concurrent saves of one
// user may each pass a bound that together they exceed (an object store
// has no lock to take). A save cut by a crash leaves its bytes, which no
// version names; they count in the user's total until the file's versions
// are all deleted (Delete with version 0) or its thread is.
package blobstore

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus-go/artifact"
	"github.com/toolnexus/toolnexus-go/internal/pathseg"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// DefaultMaxFileSize is the largest file a Store keeps unless
// SaveOptions.MaxSize says otherwise: 1 GiB.
const DefaultMaxFileSize = 1 << 30

// Options configure a [Store].
type Options struct {
	// MaxFileSize bounds each file; 0 means DefaultMaxFileSize.
	MaxFileSize int64
}

// Store is an artifact.Store in a bucket. It is safe for concurrent use,
// by goroutines and processes, as the bucket is.
type Store struct {
	bucket *blob.Bucket
	max    int64
	// list lists a prefix: the bucket's listing, replaced by tests.
	list func(ctx context.Context, prefix, delimiter string) ([]*blob.ListObject, error)
}

var _ artifact.Store = (*Store)(nil)

// New returns the Store in bucket. The bucket stays the caller's to
// close.
func New(bucket *blob.Bucket, opts Options) *Store {
	if opts.MaxFileSize <= 0 {
		opts.MaxFileSize = DefaultMaxFileSize
	}
	s := &Store{bucket: bucket, max: opts.MaxFileSize}
	s.list = s.listBucket
	return s
}

// listBucket lists every object (or folder, with a delimiter) under
// prefix.
func (s *Store) listBucket(ctx context.Context, prefix, delimiter string) ([]*blob.ListObject, error) {
	var out []*blob.ListObject
	it := s.bucket.List(&blob.ListOptions{Prefix: prefix, Delimiter: delimiter})
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
}

func userPrefix(user string) string { return pathseg.Escape("u", user) + "/" }

func threadPrefix(user, thread string) string {
	return userPrefix(user) + pathseg.Escape("t", thread) + "/"
}

func namePrefix(key artifact.Key) string {
	return threadPrefix(key.User, key.Thread) + pathseg.Escape("n", key.Name) + "/"
}

func versionKey(key artifact.Key, n int) string { return namePrefix(key) + fmt.Sprintf("v/%010d", n) }

// meta is a version's object.
type meta struct {
	Name        string    `json:"name"`
	Data        string    `json:"data,omitempty"` // the key of its bytes
	ContentType string    `json:"contentType,omitempty"`
	Size        int64     `json:"size"`
	SHA256      string    `json:"sha256,omitempty"`
	Created     time.Time `json:"created"`
	Deleted     bool      `json:"deleted,omitempty"`
}

// Save implements [artifact.Store].
func (s *Store) Save(ctx context.Context, key artifact.Key, r io.Reader, opts artifact.SaveOptions) (artifact.Info, error) {
	if err := artifact.CheckKey(key); err != nil {
		return artifact.Info{}, err
	}
	in, err := artifact.Begin(r, opts, s.max)
	if err != nil {
		return artifact.Info{}, err
	}
	info, err := s.save(ctx, key, in, opts)
	if err != nil {
		return artifact.Info{}, fmt.Errorf("blobstore: saving %q: %w", key.Name, err)
	}
	return info, nil
}

func (s *Store) save(ctx context.Context, key artifact.Key, in *artifact.Incoming, opts artifact.SaveOptions) (artifact.Info, error) {
	data := namePrefix(key) + "d/" + rand.Text()
	// A writer whose context is cancelled before Close keeps nothing.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := s.bucket.NewWriter(wctx, data, &blob.WriterOptions{ContentType: in.ContentType()})
	if err != nil {
		return artifact.Info{}, err
	}
	if _, err = io.Copy(w, in); err != nil {
		cancel()
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = ctx.Err()
	}
	written := false
	defer func() {
		if !written {
			s.bucket.Delete(context.WithoutCancel(ctx), data) // best effort
		}
	}()
	if err != nil {
		return artifact.Info{}, err
	}
	if opts.MaxBytesPerUser > 0 {
		used, err := s.usage(ctx, key.User, data)
		if err != nil {
			return artifact.Info{}, err
		}
		if used+in.Size() > opts.MaxBytesPerUser {
			return artifact.Info{}, artifact.QuotaError(used, in.Size(), opts.MaxBytesPerUser)
		}
	}
	n, err := s.highest(ctx, key)
	if err != nil {
		return artifact.Info{}, err
	}
	info := in.Info(key, 0, time.Now())
	m, _ := json.Marshal(meta{Name: key.Name, Data: data, ContentType: info.ContentType, Size: info.Size, SHA256: info.SHA256, Created: info.Created})
	for range 1000 {
		n++
		err := s.bucket.WriteAll(ctx, versionKey(key, n), m, &blob.WriterOptions{ContentType: "application/json", IfNotExist: true})
		if gcerrors.Code(err) == gcerrors.FailedPrecondition {
			continue // another saver took n
		}
		if err != nil {
			return artifact.Info{}, err
		}
		written = true
		info.Version = n
		return info, nil
	}
	return artifact.Info{}, errors.New("no free version number after 1000 tries")
}

// versionNumbers returns the numbers of key's version objects, tombstones
// included, in order. An error listing them is returned, never taken for
// none.
func (s *Store) versionNumbers(ctx context.Context, key artifact.Key) ([]int, error) {
	objs, err := s.list(ctx, namePrefix(key)+"v/", "")
	if err != nil {
		return nil, fmt.Errorf("listing the versions: %w", err)
	}
	var out []int
	for _, o := range objs {
		if n, err := strconv.Atoi(o.Key[strings.LastIndexByte(o.Key, '/')+1:]); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// highest returns key's highest version number, tombstones included.
func (s *Store) highest(ctx context.Context, key artifact.Key) (int, error) {
	ns, err := s.versionNumbers(ctx, key)
	if err != nil || len(ns) == 0 {
		return 0, err
	}
	return ns[len(ns)-1], nil
}

// readMeta reads version n of key: ok is false for a tombstone or a
// version that is not there.
func (s *Store) readMeta(ctx context.Context, key artifact.Key, n int) (meta, bool, error) {
	b, err := s.bucket.ReadAll(ctx, versionKey(key, n))
	if gcerrors.Code(err) == gcerrors.NotFound {
		return meta{}, false, nil
	}
	if err != nil {
		return meta{}, false, err
	}
	var m meta
	if err := json.Unmarshal(b, &m); err != nil {
		return meta{}, false, fmt.Errorf("version %d: %w", n, err)
	}
	return m, !m.Deleted && m.Name == key.Name, nil
}

func infoOf(key artifact.Key, n int, m meta) artifact.Info {
	return artifact.Info{Key: key, Version: n, ContentType: m.ContentType, Size: m.Size, SHA256: m.SHA256, Created: m.Created.UTC()}
}

// versions returns key's live versions, oldest first, with their bytes'
// keys.
func (s *Store) versions(ctx context.Context, key artifact.Key) ([]artifact.Info, []string, error) {
	ns, err := s.versionNumbers(ctx, key)
	if err != nil {
		return nil, nil, err
	}
	var (
		infos []artifact.Info
		data  []string
	)
	for _, n := range ns {
		m, ok, err := s.readMeta(ctx, key, n)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			infos, data = append(infos, infoOf(key, n, m)), append(data, m.Data)
		}
	}
	return infos, data, nil
}

// latest returns key's latest live version and its bytes' key, reading
// the version objects from the highest down.
func (s *Store) latest(ctx context.Context, key artifact.Key) (artifact.Info, string, error) {
	ns, err := s.versionNumbers(ctx, key)
	if err != nil {
		return artifact.Info{}, "", err
	}
	for i := len(ns) - 1; i >= 0; i-- {
		m, ok, err := s.readMeta(ctx, key, ns[i])
		if err != nil {
			return artifact.Info{}, "", err
		}
		if ok {
			return infoOf(key, ns[i], m), m.Data, nil
		}
	}
	return artifact.Info{}, "", notFound(key, 0)
}

func notFound(key artifact.Key, version int) error {
	if version > 0 {
		return fmt.Errorf("%w: %q version %d", artifact.ErrNotFound, key.Name, version)
	}
	return fmt.Errorf("%w: %q", artifact.ErrNotFound, key.Name)
}

// Open implements [artifact.Store].
func (s *Store) Open(ctx context.Context, key artifact.Key, version int) (artifact.File, error) {
	if err := artifact.CheckKey(key); err != nil {
		return nil, err
	}
	if version < 0 {
		return nil, notFound(key, version)
	}
	var (
		info artifact.Info
		data string
		err  error
	)
	if version == 0 {
		info, data, err = s.latest(ctx, key)
	} else {
		var (
			m  meta
			ok bool
		)
		m, ok, err = s.readMeta(ctx, key, version)
		if err == nil && !ok {
			err = notFound(key, version)
		}
		info, data = infoOf(key, version, m), m.Data
	}
	if err != nil {
		if errors.Is(err, artifact.ErrNotFound) {
			return nil, err
		}
		return nil, fmt.Errorf("blobstore: opening %q: %w", key.Name, err)
	}
	r, err := s.bucket.NewReader(ctx, data, nil)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, notFound(key, info.Version) // deleted meanwhile
	}
	if err != nil {
		return nil, fmt.Errorf("blobstore: opening %q: %w", key.Name, err)
	}
	if r.Size() != info.Size {
		r.Close()
		return nil, fmt.Errorf("blobstore: opening %q version %d: its bytes are not the %d its version says", key.Name, info.Version, info.Size)
	}
	return &file{Reader: r, info: info}, nil
}

// file is an open version.
type file struct {
	*blob.Reader
	info artifact.Info
}

func (f *file) Info() artifact.Info { return f.info }

// List implements [artifact.Store]: a listing of the thread's folders,
// then of each file's versions.
func (s *Store) List(ctx context.Context, user, thread string) ([]artifact.Info, error) {
	if err := artifact.CheckScope(user, thread); err != nil {
		return nil, err
	}
	dirs, err := s.list(ctx, threadPrefix(user, thread), "/")
	if err != nil {
		return nil, fmt.Errorf("blobstore: listing: %w", err)
	}
	var out []artifact.Info
	for _, d := range dirs {
		if !d.IsDir {
			continue
		}
		// The folder's name is escaped: a version's object holds the name.
		key := artifact.Key{User: user, Thread: thread}
		ns, err := s.list(ctx, d.Key+"v/", "")
		if err != nil {
			return nil, fmt.Errorf("blobstore: listing: %w", err)
		}
		for i := len(ns) - 1; i >= 0; i-- {
			b, err := s.bucket.ReadAll(ctx, ns[i].Key)
			if gcerrors.Code(err) == gcerrors.NotFound {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("blobstore: listing: %w", err)
			}
			var m meta
			if json.Unmarshal(b, &m) != nil || m.Deleted {
				continue
			}
			n, _ := strconv.Atoi(ns[i].Key[strings.LastIndexByte(ns[i].Key, '/')+1:])
			key.Name = m.Name
			out = append(out, infoOf(key, n, m))
			break
		}
	}
	slices.SortFunc(out, func(a, b artifact.Info) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Versions implements [artifact.Store].
func (s *Store) Versions(ctx context.Context, key artifact.Key) ([]artifact.Info, error) {
	if err := artifact.CheckKey(key); err != nil {
		return nil, err
	}
	infos, _, err := s.versions(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("blobstore: listing the versions of %q: %w", key.Name, err)
	}
	if len(infos) == 0 {
		return nil, notFound(key, 0)
	}
	return infos, nil
}

// Delete implements [artifact.Store]: a tombstone in place of the
// version's object, then its bytes deleted; for every version, the
// tombstone of the highest number stays, the rest of the file's objects
// go (bytes that no version names included).
func (s *Store) Delete(ctx context.Context, key artifact.Key, version int) error {
	if err := artifact.CheckKey(key); err != nil {
		return err
	}
	if version < 0 {
		return notFound(key, version)
	}
	infos, data, err := s.versions(ctx, key)
	if err != nil {
		return fmt.Errorf("blobstore: deleting %q: %w", key.Name, err)
	}
	tomb, _ := json.Marshal(meta{Name: key.Name, Deleted: true, Created: time.Now().UTC()})
	if version > 0 {
		i := slices.IndexFunc(infos, func(info artifact.Info) bool { return info.Version == version })
		if i < 0 {
			return notFound(key, version)
		}
		if err := s.bucket.WriteAll(ctx, versionKey(key, version), tomb, &blob.WriterOptions{ContentType: "application/json"}); err != nil {
			return fmt.Errorf("blobstore: deleting %q version %d: %w", key.Name, version, err)
		}
		if err := s.bucket.Delete(ctx, data[i]); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
			return fmt.Errorf("blobstore: deleting %q version %d: %w", key.Name, version, err)
		}
		return nil
	}
	if len(infos) == 0 {
		return notFound(key, 0)
	}
	top, err := s.highest(ctx, key)
	if err != nil {
		return fmt.Errorf("blobstore: deleting %q: %w", key.Name, err)
	}
	if err := s.bucket.WriteAll(ctx, versionKey(key, top), tomb, &blob.WriterOptions{ContentType: "application/json"}); err != nil {
		return fmt.Errorf("blobstore: deleting %q: %w", key.Name, err)
	}
	objs, err := s.list(ctx, namePrefix(key), "")
	if err != nil {
		return fmt.Errorf("blobstore: deleting %q: %w", key.Name, err)
	}
	// The version objects first, so that each version is gone before
	// its bytes.
	slices.SortStableFunc(objs, func(a, b *blob.ListObject) int {
		return boolInt(strings.Contains(a.Key, "/d/")) - boolInt(strings.Contains(b.Key, "/d/"))
	})
	for _, o := range objs {
		if o.Key == versionKey(key, top) {
			continue
		}
		if err := s.bucket.Delete(ctx, o.Key); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
			return fmt.Errorf("blobstore: deleting %q: %w", key.Name, err)
		}
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// DeleteThread implements [artifact.Store]: every object under the
// thread's folder.
func (s *Store) DeleteThread(ctx context.Context, user, thread string) error {
	if err := artifact.CheckScope(user, thread); err != nil {
		return err
	}
	objs, err := s.list(ctx, threadPrefix(user, thread), "")
	if err != nil {
		return fmt.Errorf("blobstore: deleting the thread's files: %w", err)
	}
	for _, o := range objs {
		if err := s.bucket.Delete(ctx, o.Key); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
			return fmt.Errorf("blobstore: deleting the thread's files: %w", err)
		}
	}
	return nil
}

// Usage implements [artifact.Store]: the sizes of the user's bytes, from
// a listing (bytes that a save cut by a crash left count too; see the
// package documentation).
func (s *Store) Usage(ctx context.Context, user string) (int64, error) {
	if err := artifact.CheckScope(user, ""); err != nil {
		return 0, err
	}
	return s.usage(ctx, user, "")
}

// usage totals user's bytes but those of the object except.
func (s *Store) usage(ctx context.Context, user, except string) (int64, error) {
	objs, err := s.list(ctx, userPrefix(user), "")
	if err != nil {
		return 0, fmt.Errorf("blobstore: totalling the user's files: %w", err)
	}
	var n int64
	for _, o := range objs {
		if strings.Contains(o.Key, "/d/") && o.Key != except {
			n += o.Size
		}
	}
	return n, nil
}
