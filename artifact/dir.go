package artifact

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus-go/internal/filelock"
	"github.com/toolnexus/toolnexus-go/internal/pathseg"
)

// DefaultDirMaxFileSize is the largest file a [Dir] store keeps unless
// SaveOptions.MaxSize says otherwise: 1 GiB.
const DefaultDirMaxFileSize = 1 << 30

// Dir is a [Store] in a directory of the local file system: one file per
// version, beside a small JSON file that describes it. Files survive the
// process; any number of goroutines and processes may share one
// directory.
//
// The layout, under the root: u{user}/t{thread}/n{name}/ holds a file's
// versions, v{number}.data and v{number}.json, each name escaped to a
// single path segment of letters, digits, "-", "_", "." and %XX (a name
// whose escape is longer than 200 bytes is named by its SHA-256 instead),
// so no user, thread or name reaches outside its folder, whatever it
// holds ([CheckKey] refuses the names that would read as a path anyway).
//
// A save writes the bytes to a temporary file in the name's folder and
// syncs it, then links it as v{n}.data, n one more than the highest
// version the folder shows: a hard link fails if the name exists, so two
// savers (goroutines or processes) never take one version, and the one
// that loses takes the next. Only then is v{n}.json written (a temporary
// file, synced, renamed) and the folder synced: a version exists once its
// JSON does, so a reader never sees part of a file, and a save cut by a
// crash leaves no version (its .data, seen by no reader, is removed with
// the file's other versions). A deleted version leaves v{n}.gone, so that
// its number is not given again. A listing that fails fails the save: the
// store never guesses a version number.
//
// With SaveOptions.MaxBytesPerUser, a save takes an exclusive lock on the
// user's folder (flock(2) on u{user}/.lock: across processes where the
// system has flock; within the process elsewhere) while it totals the user's files (a walk
// of their folders: a stat per version) and links its version.
type Dir struct {
	root string
	// readDir lists a folder: os.ReadDir, replaced by tests.
	readDir func(string) ([]os.DirEntry, error)
}

// OpenDir returns the store in the directory root, creating it (and its
// parents) when it does not exist.
func OpenDir(root string) (*Dir, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("artifact: opening %s: %w", root, err)
	}
	if err := os.MkdirAll(abs, 0o750); err != nil {
		return nil, fmt.Errorf("artifact: opening %s: %w", root, err)
	}
	return &Dir{root: abs, readDir: os.ReadDir}, nil
}

// Root returns the store's directory.
func (d *Dir) Root() string { return d.root }

func (d *Dir) userDir(user string) string { return filepath.Join(d.root, pathseg.Escape("u", user)) }

func (d *Dir) threadDir(user, thread string) string {
	return filepath.Join(d.userDir(user), pathseg.Escape("t", thread))
}

func (d *Dir) nameDir(key Key) string {
	return filepath.Join(d.threadDir(key.User, key.Thread), pathseg.Escape("n", key.Name))
}

// versionFile is the name of a version's file with the given extension.
func versionFile(n int, ext string) string { return fmt.Sprintf("v%010d%s", n, ext) }

// parseVersionFile reads a version's file name: its number and extension.
func parseVersionFile(name string) (int, string, bool) {
	if len(name) < 12 || name[0] != 'v' {
		return 0, "", false
	}
	n, err := strconv.Atoi(name[1:11])
	if err != nil || n <= 0 {
		return 0, "", false
	}
	return n, name[11:], true
}

// dirMeta is a version's JSON: what its path does not say.
type dirMeta struct {
	Name        string    `json:"name"`
	ContentType string    `json:"contentType"`
	Size        int64     `json:"size"`
	SHA256      string    `json:"sha256"`
	Created     time.Time `json:"created"`
}

// Save implements [Store].
func (d *Dir) Save(ctx context.Context, key Key, r io.Reader, opts SaveOptions) (Info, error) {
	if err := CheckKey(key); err != nil {
		return Info{}, err
	}
	in, err := Begin(r, opts, DefaultDirMaxFileSize)
	if err != nil {
		return Info{}, err
	}
	info, err := d.save(ctx, key, in, opts)
	if err != nil {
		return Info{}, fmt.Errorf("artifact: saving %q: %w", key.Name, err)
	}
	return info, nil
}

func (d *Dir) save(ctx context.Context, key Key, in *Incoming, opts SaveOptions) (Info, error) {
	dir := d.nameDir(key)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return Info{}, err
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return Info{}, err
	}
	defer os.Remove(tmp.Name())
	_, err = io.Copy(tmp, ctxReader{ctx, in})
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Info{}, err
	}
	if opts.MaxBytesPerUser > 0 {
		if err := os.MkdirAll(d.userDir(key.User), 0o750); err != nil {
			return Info{}, err
		}
		unlock, err := filelock.Lock(filepath.Join(d.userDir(key.User), ".lock"))
		if err != nil {
			return Info{}, err
		}
		defer unlock()
		used, err := d.Usage(ctx, key.User)
		if err != nil {
			return Info{}, err
		}
		if used+in.Size() > opts.MaxBytesPerUser {
			return Info{}, QuotaError(used, in.Size(), opts.MaxBytesPerUser)
		}
	}
	if err := ctx.Err(); err != nil {
		return Info{}, err
	}
	n, err := d.link(dir, tmp.Name())
	if err != nil {
		return Info{}, err
	}
	info := in.Info(key, n, time.Now())
	meta, _ := json.Marshal(dirMeta{Name: key.Name, ContentType: info.ContentType, Size: info.Size, SHA256: info.SHA256, Created: info.Created})
	if err := writeFileAtomic(dir, versionFile(n, ".json"), meta); err != nil {
		os.Remove(filepath.Join(dir, versionFile(n, ".data")))
		return Info{}, err
	}
	return info, nil
}

// link links tmp as the next version's data in dir, and returns its
// number: one more than the highest the folder shows, or the next free
// one after it when another saver took it meanwhile.
func (d *Dir) link(dir, tmp string) (int, error) {
	n, err := d.highest(dir)
	if err != nil {
		return 0, err
	}
	for range 1000 {
		n++
		err := os.Link(tmp, filepath.Join(dir, versionFile(n, ".data")))
		if err == nil {
			return n, syncDir(dir)
		}
		if !errors.Is(err, fs.ErrExist) {
			return 0, err
		}
	}
	return 0, errors.New("no free version number after 1000 tries")
}

// highest returns the highest version number dir shows: data, JSON or
// tombstone. An error listing it is returned, never taken for an empty
// folder.
func (d *Dir) highest(dir string) (int, error) {
	entries, err := d.readDir(dir)
	if err != nil {
		return 0, fmt.Errorf("listing the versions: %w", err)
	}
	n := 0
	for _, e := range entries {
		if v, _, ok := parseVersionFile(e.Name()); ok {
			n = max(n, v)
		}
	}
	return n, nil
}

// writeFileAtomic writes data as dir/name: a temporary file, synced,
// renamed, then the folder synced.
func writeFileAtomic(dir, name string, data []byte) error {
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(dir, name))
	}
	if err == nil {
		err = syncDir(dir)
	}
	return err
}

// ctxReader stops a copy once its context is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// versions returns the live versions of the file in dir (those with their
// JSON), oldest first, decoded.
func (d *Dir) versions(key Key, dir string) ([]Info, error) {
	entries, err := d.readDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Info
	for _, e := range entries {
		n, ext, ok := parseVersionFile(e.Name())
		if !ok || ext != ".json" {
			continue
		}
		info, err := readMeta(key, dir, n)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, err
		}
		out = append(out, info)
	}
	slices.SortFunc(out, func(a, b Info) int { return a.Version - b.Version })
	return out, nil
}

// readMeta reads version n's JSON in dir.
func readMeta(key Key, dir string, n int) (Info, error) {
	b, err := os.ReadFile(filepath.Join(dir, versionFile(n, ".json")))
	if err != nil {
		return Info{}, err
	}
	var m dirMeta
	if err := json.Unmarshal(b, &m); err != nil {
		return Info{}, fmt.Errorf("%s: %w", versionFile(n, ".json"), err)
	}
	key.Name = m.Name
	return Info{Key: key, Version: n, ContentType: m.ContentType, Size: m.Size, SHA256: m.SHA256, Created: m.Created}, nil
}

// Open implements [Store].
func (d *Dir) Open(ctx context.Context, key Key, version int) (File, error) {
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	if err := checkVersion(version); err != nil {
		return nil, err
	}
	dir := d.nameDir(key)
	if version == 0 {
		vs, err := d.versions(key, dir)
		if err != nil {
			return nil, fmt.Errorf("artifact: opening %q: %w", key.Name, err)
		}
		if len(vs) == 0 {
			return nil, notFound(key, 0)
		}
		version = vs[len(vs)-1].Version
	}
	info, err := readMeta(key, dir, version)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, notFound(key, version)
	}
	if err != nil {
		return nil, fmt.Errorf("artifact: opening %q: %w", key.Name, err)
	}
	if info.Name != key.Name {
		return nil, notFound(key, version) // another name with the same SHA-256 folder: not reached
	}
	f, err := os.Open(filepath.Join(dir, versionFile(version, ".data")))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, notFound(key, version) // deleted meanwhile
	}
	if err != nil {
		return nil, fmt.Errorf("artifact: opening %q: %w", key.Name, err)
	}
	if st, err := f.Stat(); err != nil || st.Size() != info.Size {
		f.Close()
		return nil, fmt.Errorf("artifact: opening %q version %d: its data is not the %d bytes its JSON says", key.Name, version, info.Size)
	}
	return &dirOpen{File: f, info: info}, nil
}

type dirOpen struct {
	*os.File
	info Info
}

func (o *dirOpen) Info() Info { return o.info }

// List implements [Store].
func (d *Dir) List(ctx context.Context, user, thread string) ([]Info, error) {
	if err := CheckScope(user, thread); err != nil {
		return nil, err
	}
	dir := d.threadDir(user, thread)
	entries, err := d.readDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("artifact: listing: %w", err)
	}
	var out []Info
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "n") {
			continue
		}
		vs, err := d.versions(Key{User: user, Thread: thread}, filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("artifact: listing: %w", err)
		}
		if len(vs) > 0 {
			out = append(out, vs[len(vs)-1])
		}
	}
	slices.SortFunc(out, func(a, b Info) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Versions implements [Store].
func (d *Dir) Versions(ctx context.Context, key Key) ([]Info, error) {
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	vs, err := d.versions(key, d.nameDir(key))
	if err != nil {
		return nil, fmt.Errorf("artifact: listing the versions of %q: %w", key.Name, err)
	}
	if len(vs) == 0 {
		return nil, notFound(key, 0)
	}
	return vs, nil
}

// Delete implements [Store].
func (d *Dir) Delete(ctx context.Context, key Key, version int) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if err := checkVersion(version); err != nil {
		return err
	}
	dir := d.nameDir(key)
	vs, err := d.versions(key, dir)
	if err != nil {
		return fmt.Errorf("artifact: deleting %q: %w", key.Name, err)
	}
	var doomed []int
	for _, v := range vs {
		if version == 0 || v.Version == version {
			doomed = append(doomed, v.Version)
		}
	}
	if len(doomed) == 0 {
		return notFound(key, version)
	}
	if version == 0 {
		// Every file of the folder goes but the tombstone of the highest
		// number, which keeps the numbers from being given again: versions
		// that no JSON describes (a crashed save's) and temporary files
		// included.
		top, err := d.highest(dir)
		if err != nil {
			return fmt.Errorf("artifact: deleting %q: %w", key.Name, err)
		}
		if err := tombstone(dir, top); err != nil {
			return fmt.Errorf("artifact: deleting %q: %w", key.Name, err)
		}
		entries, err := d.readDir(dir)
		if err != nil {
			return fmt.Errorf("artifact: deleting %q: %w", key.Name, err)
		}
		// The JSON files first, so that each version is gone before its
		// data.
		slices.SortStableFunc(entries, func(a, b os.DirEntry) int {
			return boolInt(!strings.HasSuffix(a.Name(), ".json")) - boolInt(!strings.HasSuffix(b.Name(), ".json"))
		})
		for _, e := range entries {
			if e.Name() == versionFile(top, ".gone") {
				continue
			}
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("artifact: deleting %q: %w", key.Name, err)
			}
		}
		return syncDir(dir)
	}
	if err := tombstone(dir, version); err != nil {
		return fmt.Errorf("artifact: deleting %q: %w", key.Name, err)
	}
	for _, ext := range []string{".json", ".data"} {
		if err := os.Remove(filepath.Join(dir, versionFile(version, ext))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("artifact: deleting %q version %d: %w", key.Name, version, err)
		}
	}
	return syncDir(dir)
}

// tombstone marks version n of dir deleted.
func tombstone(dir string, n int) error {
	f, err := os.OpenFile(filepath.Join(dir, versionFile(n, ".gone")), os.O_CREATE|os.O_WRONLY, 0o640)
	if err != nil {
		return err
	}
	return f.Close()
}

// DeleteThread implements [Store]. The thread's folder is first renamed
// out of the way, then removed.
func (d *Dir) DeleteThread(ctx context.Context, user, thread string) error {
	if err := CheckScope(user, thread); err != nil {
		return err
	}
	dir := d.threadDir(user, thread)
	trash := filepath.Join(d.userDir(user), ".trash-"+rand.Text())
	if err := os.Rename(dir, trash); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("artifact: deleting the thread's files: %w", err)
	}
	if err := os.RemoveAll(trash); err != nil {
		return fmt.Errorf("artifact: deleting the thread's files: %w", err)
	}
	return nil
}

// Usage implements [Store]: a walk of the user's folders, a stat per
// version.
func (d *Dir) Usage(ctx context.Context, user string) (int64, error) {
	if err := CheckScope(user, ""); err != nil {
		return 0, err
	}
	var total int64
	err := filepath.WalkDir(d.userDir(user), func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if e.IsDir() {
			if strings.HasPrefix(e.Name(), ".trash-") {
				return filepath.SkipDir
			}
			return ctx.Err()
		}
		n, ext, ok := parseVersionFile(e.Name())
		if !ok || ext != ".json" {
			return nil
		}
		st, err := os.Stat(filepath.Join(filepath.Dir(path), versionFile(n, ".data")))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		total += st.Size()
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("artifact: totalling the user's files: %w", err)
	}
	return total, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
