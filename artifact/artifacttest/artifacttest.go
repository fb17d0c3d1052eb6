// Package artifacttest holds the contract every artifact.Store passes:
// versions, a requested version honoured, every change kept, text kept
// byte for byte, concurrency, atomicity, deletion, quotas, hostile names,
// and for a durable store, files that survive a restart. A store's tests
// call [Run].
//
//	func TestContract(t *testing.T) {
//		artifacttest.Run(t, func(t *testing.T) artifact.Store { return artifact.NewMemory(0) }, artifacttest.Options{})
//	}
package artifacttest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/toolnexus/toolnexus-go/artifact"
)

// Options say what the store under test does beyond the contract.
type Options struct {
	// Reopen, when set, returns the store as a new process would open it
	// on the same data (the old one may be closed): the suite checks
	// that what was saved survives.
	Reopen func(t *testing.T, s artifact.Store) artifact.Store

	// QuotaNotAtomic says that concurrent saves may take a user past
	// SaveOptions.MaxBytesPerUser (a store that cannot lock, such as an
	// object store): the suite then checks the quota of sequential saves
	// only.
	QuotaNotAtomic bool

	// Writers is how many goroutines save one name at once in the
	// concurrency tests; 0 means 8.
	Writers int
}

// Run runs the contract's tests against stores that open returns: a new,
// empty store for each test (or one whose users the test does not share:
// each test uses users of its own).
func Run(t *testing.T, open func(t *testing.T) artifact.Store, opts Options) {
	if opts.Writers == 0 {
		opts.Writers = 8
	}
	c := &suite{open: open, opts: opts}
	for _, tc := range []struct {
		name string
		f    func(t *testing.T)
	}{
		{"Versions", c.versions},
		{"RequestedVersion", c.requestedVersion},
		{"EveryChangeKept", c.everyChangeKept},
		{"TextKept", c.textKept},
		{"ContentType", c.contentType},
		{"Scopes", c.scopes},
		{"List", c.list},
		{"Seek", c.seek},
		{"ConcurrentSaves", c.concurrentSaves},
		{"FailedSaveKeepsNothing", c.failedSave},
		{"ReadersSeeWholeFiles", c.readersSeeWholeFiles},
		{"Delete", c.deleteVersions},
		{"DeleteThread", c.deleteThread},
		{"Quota", c.quota},
		{"ConcurrentQuota", c.concurrentQuota},
		{"MaxSize", c.maxSize},
		{"HostileNames", c.hostileNames},
		{"Reopen", c.reopen},
	} {
		t.Run(tc.name, tc.f)
	}
}

type suite struct {
	open func(t *testing.T) artifact.Store
	opts Options
}

var ctx = context.Background()

func save(t *testing.T, s artifact.Store, key artifact.Key, data string, ct string) artifact.Info {
	t.Helper()
	info, err := s.Save(ctx, key, strings.NewReader(data), artifact.SaveOptions{ContentType: ct})
	if err != nil {
		t.Fatalf("Save(%+v): %v", key, err)
	}
	return info
}

// load reads version of key whole, and checks it against its Info.
func load(t *testing.T, s artifact.Store, key artifact.Key, version int) (string, artifact.Info) {
	t.Helper()
	f, err := s.Open(ctx, key, version)
	if err != nil {
		t.Fatalf("Open(%+v, %d): %v", key, version, err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatalf("reading %+v version %d: %v", key, version, err)
	}
	info := f.Info()
	if int64(len(b)) != info.Size || sum(b) != info.SHA256 {
		t.Fatalf("%+v version %d: read %d bytes of SHA-256 %s; its Info says %d bytes, %s", key, version, len(b), sum(b), info.Size, info.SHA256)
	}
	if info.Key != key {
		t.Errorf("Open(%+v).Info().Key = %+v", key, info.Key)
	}
	return string(b), info
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func key(t *testing.T, thread, name string) artifact.Key {
	return artifact.Key{User: "user-" + t.Name(), Thread: thread, Name: name}
}

func (c *suite) versions(t *testing.T) {
	s := c.open(t)
	k := key(t, "thread-1", "report.csv")
	for i := 1; i <= 3; i++ {
		info := save(t, s, k, fmt.Sprintf("a,b\n%d,%d\n", i, i*i), "text/csv")
		want := fmt.Sprintf("a,b\n%d,%d\n", i, i*i)
		if info.Version != i || info.Size != int64(len(want)) || info.SHA256 != sum([]byte(want)) || info.Key != k || info.Created.IsZero() {
			t.Fatalf("save %d: Info = %+v", i, info)
		}
		if info.ContentType != "text/csv" {
			t.Errorf("save %d: ContentType = %q, want text/csv", i, info.ContentType)
		}
	}
	got, info := load(t, s, k, 0)
	if got != "a,b\n3,9\n" || info.Version != 3 {
		t.Errorf("the latest version: %q (version %d), want version 3", got, info.Version)
	}
	vs, err := s.Versions(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 3 || vs[0].Version != 1 || vs[1].Version != 2 || vs[2].Version != 3 {
		t.Fatalf("Versions = %+v, want 1, 2, 3", vs)
	}
	if _, err := s.Open(ctx, k, 4); !errors.Is(err, artifact.ErrNotFound) {
		t.Errorf("Open of version 4 of 3: %v, want ErrNotFound", err)
	}
	if _, err := s.Open(ctx, key(t, "thread-1", "nothing.csv"), 0); !errors.Is(err, artifact.ErrNotFound) {
		t.Errorf("Open of a file never saved: %v, want ErrNotFound", err)
	}
	if _, err := s.Versions(ctx, key(t, "thread-1", "nothing.csv")); !errors.Is(err, artifact.ErrNotFound) {
		t.Errorf("Versions of a file never saved: %v, want ErrNotFound", err)
	}
}

// requestedVersion: the version asked for is the one read, not the
// latest (adk-go#1554: LoadArtifact ignored the requested version).
func (c *suite) requestedVersion(t *testing.T) {
	s := c.open(t)
	k := key(t, "t", "chart.png")
	for i := 1; i <= 3; i++ {
		save(t, s, k, fmt.Sprintf("chart version %d", i), "image/png")
	}
	for v := 1; v <= 3; v++ {
		got, info := load(t, s, k, v)
		if want := fmt.Sprintf("chart version %d", v); got != want || info.Version != v {
			t.Errorf("Open(version %d) = %q (version %d), want %q", v, got, info.Version, want)
		}
	}
}

// everyChangeKept: each save of a file is a version of its own, however
// quickly they follow each other (adk-python#474: only the first change
// of an artifact in one step was kept).
func (c *suite) everyChangeKept(t *testing.T) {
	s := c.open(t)
	k := key(t, "t", "notes.txt")
	for i := range 5 {
		save(t, s, k, fmt.Sprintf("change %d", i), "text/plain")
	}
	vs, err := s.Versions(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 5 {
		t.Fatalf("%d versions after 5 saves", len(vs))
	}
	for i, v := range vs {
		if got, _ := load(t, s, k, v.Version); got != fmt.Sprintf("change %d", i) {
			t.Errorf("version %d = %q, want change %d", v.Version, got, i)
		}
	}
}

// textKept: text comes back byte for byte, with its type (adk-python#3157:
// an artifact's text was lost on GCS).
func (c *suite) textKept(t *testing.T) {
	s := c.open(t)
	for name, text := range map[string]string{
		"unicode.txt": "héllo wörld ✓ — 日本語\r\n\ttabs\x00and a NUL",
		"empty.txt":   "",
		"spaces.txt":  "   \n\n  ",
	} {
		k := key(t, "t", name)
		info := save(t, s, k, text, "text/plain; charset=utf-8")
		got, loaded := load(t, s, k, info.Version)
		if got != text {
			t.Errorf("%s: read %q, saved %q", name, got, text)
		}
		if loaded.ContentType != "text/plain; charset=utf-8" {
			t.Errorf("%s: ContentType = %q", name, loaded.ContentType)
		}
	}
}

func (c *suite) contentType(t *testing.T) {
	s := c.open(t)
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
	if info := save(t, s, key(t, "t", "sniffed"), png, ""); info.ContentType != "image/png" {
		t.Errorf("a PNG saved without a type: ContentType = %q, want image/png (sniffed)", info.ContentType)
	}
	if info := save(t, s, key(t, "t", "declared"), "x", "Text/CSV; Charset=UTF-8"); info.ContentType != "text/csv; charset=UTF-8" {
		t.Errorf("ContentType = %q, want text/csv; charset=UTF-8 (normalized)", info.ContentType)
	}
	k := key(t, "t", "bad-type")
	if _, err := s.Save(ctx, k, strings.NewReader("x"), artifact.SaveOptions{ContentType: "not a type"}); err == nil {
		t.Error("a content type that does not parse was taken")
	}
	if _, err := s.Versions(ctx, k); !errors.Is(err, artifact.ErrNotFound) {
		t.Errorf("a refused save kept a version: %v", err)
	}
}

// scopes: users and threads never see each other's files; a thread's
// files and the user's own are apart.
func (c *suite) scopes(t *testing.T) {
	s := c.open(t)
	alice := artifact.Key{User: "alice-" + t.Name(), Thread: "t1", Name: "secret.txt"}
	save(t, s, alice, "alice's", "text/plain")
	for _, other := range []artifact.Key{
		{User: "bob-" + t.Name(), Thread: "t1", Name: "secret.txt"},
		{User: alice.User, Thread: "t2", Name: "secret.txt"},
		{User: alice.User, Thread: "", Name: "secret.txt"},
	} {
		if _, err := s.Open(ctx, other, 0); !errors.Is(err, artifact.ErrNotFound) {
			t.Errorf("Open(%+v) of alice's thread t1 file: %v, want ErrNotFound", other, err)
		}
		if list, err := s.List(ctx, other.User, other.Thread); err != nil || len(list) != 0 {
			t.Errorf("List(%q, %q) = %v, %v; want nothing", other.User, other.Thread, list, err)
		}
		if err := s.Delete(ctx, other, 0); !errors.Is(err, artifact.ErrNotFound) {
			t.Errorf("Delete(%+v): %v, want ErrNotFound", other, err)
		}
		if info := save(t, s, other, "other", "text/plain"); info.Version != 1 {
			t.Errorf("the first save of %+v is version %d, want 1", other, info.Version)
		}
	}
	if got, _ := load(t, s, alice, 0); got != "alice's" {
		t.Errorf("alice's file = %q after the others saved theirs", got)
	}
	if n, err := s.Usage(ctx, alice.User); err != nil || n != int64(len("alice's")+2*len("other")) {
		t.Errorf("Usage(alice) = %d, %v; want %d", n, err, len("alice's")+2*len("other"))
	}
}

func (c *suite) list(t *testing.T) {
	s := c.open(t)
	save(t, s, key(t, "t", "b.txt"), "b1", "text/plain")
	save(t, s, key(t, "t", "a.txt"), "a1", "text/plain")
	save(t, s, key(t, "t", "dir/c.txt"), "c1", "text/plain")
	save(t, s, key(t, "t", "b.txt"), "b2", "text/plain")
	save(t, s, key(t, "t", "gone.txt"), "x", "text/plain")
	save(t, s, key(t, "other", "z.txt"), "z", "text/plain")
	if err := s.Delete(ctx, key(t, "t", "gone.txt"), 0); err != nil {
		t.Fatal(err)
	}
	list, err := s.List(ctx, "user-"+t.Name(), "t")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, info := range list {
		got = append(got, fmt.Sprintf("%s@%d", info.Name, info.Version))
	}
	if want := "a.txt@1 b.txt@2 dir/c.txt@1"; strings.Join(got, " ") != want {
		t.Errorf("List = %v, want %s", got, want)
	}
}

func (c *suite) seek(t *testing.T) {
	s := c.open(t)
	data := strings.Repeat("0123456789", 30000) // 300 kB: several chunks in a store that has them
	k := key(t, "t", "big.bin")
	save(t, s, k, data, "application/octet-stream")
	f, err := s.Open(ctx, k, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, off := range []int64{0, 5, 131071, 131072, 262149, int64(len(data)) - 3} {
		if n, err := f.Seek(off, io.SeekStart); err != nil || n != off {
			t.Fatalf("Seek(%d) = %d, %v", off, n, err)
		}
		buf := make([]byte, 3)
		if _, err := io.ReadFull(f, buf); err != nil || string(buf) != data[off:off+3] {
			t.Fatalf("after Seek(%d): read %q, %v; want %q", off, buf, err, data[off:off+3])
		}
	}
	if n, err := f.Seek(-10, io.SeekEnd); err != nil || n != int64(len(data))-10 {
		t.Fatalf("Seek(-10, End) = %d, %v", n, err)
	}
	rest, err := io.ReadAll(f)
	if err != nil || string(rest) != data[len(data)-10:] {
		t.Fatalf("the last 10 bytes: %q, %v", rest, err)
	}
}

// concurrentSaves: saves of one name at once get distinct versions, and
// none is lost.
func (c *suite) concurrentSaves(t *testing.T) {
	s := c.open(t)
	k := key(t, "t", "shared.txt")
	const each = 4
	var wg sync.WaitGroup
	errs := make(chan error, c.opts.Writers*each)
	for w := range c.opts.Writers {
		wg.Go(func() {
			for i := range each {
				if _, err := s.Save(ctx, k, strings.NewReader(fmt.Sprintf("writer %d save %d", w, i)), artifact.SaveOptions{ContentType: "text/plain"}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a concurrent save failed: %v", err)
	}
	vs, err := s.Versions(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	n := c.opts.Writers * each
	if len(vs) != n {
		t.Fatalf("%d versions after %d saves", len(vs), n)
	}
	seen := map[string]bool{}
	for i, v := range vs {
		if v.Version != i+1 {
			t.Errorf("version %d is numbered %d", i+1, v.Version)
		}
		got, _ := load(t, s, k, v.Version)
		if seen[got] {
			t.Errorf("%q saved twice", got)
		}
		seen[got] = true
	}
}

// failedSave: a save cut by its reader's error, a cancelled context or a
// bound keeps nothing, and leaves the versions before it as they were
// (adk-java#1418: a failure overwrote version 0).
func (c *suite) failedSave(t *testing.T) {
	s := c.open(t)
	k := key(t, "t", "data.bin")
	save(t, s, k, "version one", "text/plain")
	used, err := s.Usage(ctx, k.User)
	if err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("x"), 300<<10)
	cut := io.MultiReader(bytes.NewReader(big), iotest.ErrReader(errors.New("connection reset")))
	if _, err := s.Save(ctx, k, cut, artifact.SaveOptions{ContentType: "text/plain"}); err == nil {
		t.Fatal("a save whose reader failed succeeded")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancelling := io.MultiReader(bytes.NewReader(big), readerFunc(func([]byte) (int, error) { cancel(); return 0, io.EOF }))
	if _, err := s.Save(cctx, k, cancelling, artifact.SaveOptions{ContentType: "text/plain"}); err == nil {
		t.Error("a save whose context was cancelled during its read succeeded")
	}
	vs, err := s.Versions(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 || vs[0].Version != 1 {
		t.Fatalf("after failed saves: versions %+v, want version 1 alone", vs)
	}
	if got, _ := load(t, s, k, 1); got != "version one" {
		t.Errorf("version 1 = %q after failed saves", got)
	}
	if n, err := s.Usage(ctx, k.User); err != nil || n != used {
		t.Errorf("Usage = %d, %v after failed saves; was %d", n, err, used)
	}
	if info := save(t, s, k, "version two", "text/plain"); info.Version < 2 {
		t.Errorf("the next save is version %d", info.Version)
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// readersSeeWholeFiles: a reader opening the latest version while saves go
// on reads a whole file, the one its Info describes.
func (c *suite) readersSeeWholeFiles(t *testing.T) {
	s := c.open(t)
	k := key(t, "t", "growing.bin")
	save(t, s, k, "seed", "application/octet-stream")
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() {
		defer close(done)
		for i := range 6 {
			data := bytes.Repeat([]byte{byte('a' + i)}, (i+1)*100<<10)
			if _, err := s.Save(ctx, k, bytes.NewReader(data), artifact.SaveOptions{ContentType: "application/octet-stream"}); err != nil {
				t.Errorf("save %d: %v", i, err)
				return
			}
		}
	})
	for reads := 0; ; reads++ {
		select {
		case <-done:
			wg.Wait()
			return
		default:
		}
		load(t, s, k, 0) // checks the bytes against the Info
	}
}

func (c *suite) deleteVersions(t *testing.T) {
	s := c.open(t)
	k := key(t, "t", "d.txt")
	for i := 1; i <= 3; i++ {
		save(t, s, k, fmt.Sprintf("v%d", i), "text/plain")
	}
	if err := s.Delete(ctx, k, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(ctx, k, 2); !errors.Is(err, artifact.ErrNotFound) {
		t.Errorf("Open of a deleted version: %v", err)
	}
	if err := s.Delete(ctx, k, 2); !errors.Is(err, artifact.ErrNotFound) {
		t.Errorf("Delete of a deleted version: %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, k, 3); err != nil {
		t.Fatal(err)
	}
	if got, info := load(t, s, k, 0); got != "v1" || info.Version != 1 {
		t.Errorf("latest after deleting 2 and 3: %q version %d", got, info.Version)
	}
	if info := save(t, s, k, "v4", "text/plain"); info.Version != 4 {
		t.Errorf("the save after deleting version 3 is version %d, want 4: a number is never given twice", info.Version)
	}
	if n, err := s.Usage(ctx, k.User); err != nil || n != 4 {
		t.Errorf("Usage = %d, %v; want 4 (v1 and v4)", n, err)
	}
	if err := s.Delete(ctx, k, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(ctx, k, 0); !errors.Is(err, artifact.ErrNotFound) {
		t.Errorf("Open after deleting every version: %v", err)
	}
	if _, err := s.Versions(ctx, k); !errors.Is(err, artifact.ErrNotFound) {
		t.Errorf("Versions after deleting every version: %v", err)
	}
	if err := s.Delete(ctx, k, 0); !errors.Is(err, artifact.ErrNotFound) {
		t.Errorf("Delete of a file without versions: %v, want ErrNotFound", err)
	}
	if n, err := s.Usage(ctx, k.User); err != nil || n != 0 {
		t.Errorf("Usage = %d, %v after deleting every version", n, err)
	}
	if info := save(t, s, k, "v5", "text/plain"); info.Version != 5 {
		t.Errorf("the save after deleting every version is version %d, want 5", info.Version)
	}
}

func (c *suite) deleteThread(t *testing.T) {
	s := c.open(t)
	user := "user-" + t.Name()
	save(t, s, key(t, "doomed", "a.txt"), "aaaa", "text/plain")
	save(t, s, key(t, "doomed", "a.txt"), "aaaa", "text/plain")
	save(t, s, key(t, "doomed", "dir/b.txt"), "bb", "text/plain")
	save(t, s, key(t, "kept", "a.txt"), "kept", "text/plain")
	save(t, s, key(t, "", "mine.txt"), "mine", "text/plain")
	if err := s.DeleteThread(ctx, user, "doomed"); err != nil {
		t.Fatal(err)
	}
	if list, err := s.List(ctx, user, "doomed"); err != nil || len(list) != 0 {
		t.Errorf("List of a deleted thread = %v, %v", list, err)
	}
	if _, err := s.Open(ctx, key(t, "doomed", "a.txt"), 1); !errors.Is(err, artifact.ErrNotFound) {
		t.Errorf("Open of a deleted thread's file: %v", err)
	}
	load(t, s, key(t, "kept", "a.txt"), 0)
	load(t, s, key(t, "", "mine.txt"), 0)
	if n, err := s.Usage(ctx, user); err != nil || n != 8 {
		t.Errorf("Usage = %d, %v after deleting a thread; want 8", n, err)
	}
	if err := s.DeleteThread(ctx, user, "never"); err != nil {
		t.Errorf("DeleteThread of a thread without files: %v", err)
	}
}

func (c *suite) quota(t *testing.T) {
	s := c.open(t)
	user := "user-" + t.Name()
	opts := artifact.SaveOptions{ContentType: "application/octet-stream", MaxBytesPerUser: 1000}
	if _, err := s.Save(ctx, key(t, "t", "a"), bytes.NewReader(make([]byte, 600)), opts); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Save(ctx, key(t, "u", "b"), bytes.NewReader(make([]byte, 500)), opts); !errors.Is(err, artifact.ErrQuota) {
		t.Fatalf("a save past the user's bound: %v, want ErrQuota", err)
	}
	if _, err := s.Versions(ctx, key(t, "u", "b")); !errors.Is(err, artifact.ErrNotFound) {
		t.Errorf("the refused save kept a version: %v", err)
	}
	if n, err := s.Usage(ctx, user); err != nil || n != 600 {
		t.Errorf("Usage = %d, %v; want 600", n, err)
	}
	other := artifact.Key{User: "other-" + t.Name(), Name: "b"}
	if _, err := s.Save(ctx, other, bytes.NewReader(make([]byte, 900)), opts); err != nil {
		t.Errorf("another user's save: %v", err)
	}
	if _, err := s.Save(ctx, key(t, "t", "c"), bytes.NewReader(make([]byte, 400)), opts); err != nil {
		t.Errorf("a save that fits exactly: %v", err)
	}
	if err := s.Delete(ctx, key(t, "t", "a"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Save(ctx, key(t, "u", "b"), bytes.NewReader(make([]byte, 500)), opts); err != nil {
		t.Errorf("a save that fits once a file was deleted: %v", err)
	}
}

// concurrentQuota: of concurrent saves, those that fit are kept, and
// never more.
func (c *suite) concurrentQuota(t *testing.T) {
	if c.opts.QuotaNotAtomic {
		t.Skip("the store's quota is not atomic (Options.QuotaNotAtomic)")
	}
	s := c.open(t)
	user := "user-" + t.Name()
	opts := artifact.SaveOptions{ContentType: "application/octet-stream", MaxBytesPerUser: 1000}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		kept     int
		failures []error
	)
	for w := range c.opts.Writers {
		wg.Go(func() {
			_, err := s.Save(ctx, key(t, "t", fmt.Sprintf("f%d", w)), bytes.NewReader(make([]byte, 300)), opts)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				kept++
			case !errors.Is(err, artifact.ErrQuota):
				failures = append(failures, err)
			}
		})
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("saves failed other than by the quota: %v", failures)
	}
	if want := min(c.opts.Writers, 3); kept != want {
		t.Errorf("%d saves of 300 bytes kept under a bound of 1000, want %d", kept, want)
	}
	if n, err := s.Usage(ctx, user); err != nil || n != int64(kept*300) {
		t.Errorf("Usage = %d, %v; want %d", n, err, kept*300)
	}
}

func (c *suite) maxSize(t *testing.T) {
	s := c.open(t)
	k := key(t, "t", "big")
	if _, err := s.Save(ctx, k, bytes.NewReader(make([]byte, 2049)), artifact.SaveOptions{MaxSize: 2048}); !errors.Is(err, artifact.ErrTooLarge) {
		t.Fatalf("a file past MaxSize: %v, want ErrTooLarge", err)
	}
	if _, err := s.Versions(ctx, k); !errors.Is(err, artifact.ErrNotFound) {
		t.Errorf("the refused save kept a version: %v", err)
	}
	if _, err := s.Save(ctx, k, bytes.NewReader(make([]byte, 2048)), artifact.SaveOptions{MaxSize: 2048}); err != nil {
		t.Errorf("a file of exactly MaxSize: %v", err)
	}
}

// HostileNames are file names every store refuses (artifact.CheckName),
// for tests of other layers.
var HostileNames = []string{
	"", ".", "..", "../escape.txt", "a/../../b", "dir/../../../etc/passwd", "/etc/passwd", "/abs",
	"a\\b", "..\\..\\windows\\win.ini", "nul\x00byte", "bell\x07", "new\nline", "tab\tname", "a//b", "dir/",
	"./x", "x/./y", "\xff\xfe", strings.Repeat("n", artifact.MaxNameLen+1),
}

func (c *suite) hostileNames(t *testing.T) {
	s := c.open(t)
	user := "user-" + t.Name()
	for _, name := range HostileNames {
		k := artifact.Key{User: user, Thread: "t", Name: name}
		if _, err := s.Save(ctx, k, strings.NewReader("pwned"), artifact.SaveOptions{}); !errors.Is(err, artifact.ErrBadKey) {
			t.Errorf("Save(%q): %v, want ErrBadKey", name, err)
		}
		if _, err := s.Open(ctx, k, 0); !errors.Is(err, artifact.ErrBadKey) {
			t.Errorf("Open(%q): %v, want ErrBadKey", name, err)
		}
		if _, err := s.Versions(ctx, k); !errors.Is(err, artifact.ErrBadKey) {
			t.Errorf("Versions(%q): %v, want ErrBadKey", name, err)
		}
		if err := s.Delete(ctx, k, 0); !errors.Is(err, artifact.ErrBadKey) {
			t.Errorf("Delete(%q): %v, want ErrBadKey", name, err)
		}
	}
	for _, k := range []artifact.Key{{User: "", Name: "a"}, {User: "nul\x00", Name: "a"}, {User: user, Thread: "t\x00", Name: "a"},
		{User: strings.Repeat("u", artifact.MaxUserLen+1), Name: "a"}} {
		if _, err := s.Save(ctx, k, strings.NewReader("x"), artifact.SaveOptions{}); !errors.Is(err, artifact.ErrBadKey) {
			t.Errorf("Save(%+v): %v, want ErrBadKey", k, err)
		}
	}
	// Names that look odd but are fine are kept apart from each other.
	odd := []string{"..hidden", "a..b", "name with spaces.txt", "ünïcödé/文件.txt", "%2e%2e", "C:", "a:b", "~", "-"}
	for i, name := range odd {
		save(t, s, artifact.Key{User: user, Thread: "t", Name: name}, fmt.Sprint(i), "text/plain")
	}
	for i, name := range odd {
		if got, _ := load(t, s, artifact.Key{User: user, Thread: "t", Name: name}, 0); got != fmt.Sprint(i) {
			t.Errorf("%q = %q, want %d", name, got, i)
		}
	}
}

func (c *suite) reopen(t *testing.T) {
	if c.opts.Reopen == nil {
		t.Skip("the store is not durable (no Options.Reopen)")
	}
	s := c.open(t)
	k := key(t, "t", "kept.txt")
	save(t, s, k, "one", "text/plain")
	save(t, s, k, "two", "text/plain")
	if err := s.Delete(ctx, k, 2); err != nil {
		t.Fatal(err)
	}
	s = c.opts.Reopen(t, s)
	if got, info := load(t, s, k, 0); got != "one" || info.Version != 1 || info.ContentType != "text/plain" {
		t.Errorf("after reopening: %q version %d (%s)", got, info.Version, info.ContentType)
	}
	if info := save(t, s, k, "three", "text/plain"); info.Version != 3 {
		t.Errorf("the first save after reopening is version %d, want 3", info.Version)
	}
}
