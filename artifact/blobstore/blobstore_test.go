package blobstore

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus-go/artifact"
	"github.com/toolnexus/toolnexus-go/artifact/artifacttest"
	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"
)

func TestContractMemblob(t *testing.T) {
	artifacttest.Run(t, func(t *testing.T) artifact.Store {
		b := memblob.OpenBucket(nil)
		t.Cleanup(func() { b.Close() })
		return New(b, Options{})
	}, artifacttest.Options{QuotaNotAtomic: true})
}

// fileBucket opens a bucket in dir, closed when t ends.
func fileBucket(t *testing.T, dir string) *blob.Bucket {
	t.Helper()
	b, err := fileblob.OpenBucket(dir, &fileblob.Options{CreateDir: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func TestContractFileblob(t *testing.T) {
	dirs := map[artifact.Store]string{}
	artifacttest.Run(t, func(t *testing.T) artifact.Store {
		dir := t.TempDir()
		s := New(fileBucket(t, dir), Options{})
		dirs[s] = dir
		return s
	}, artifacttest.Options{QuotaNotAtomic: true, Reopen: func(t *testing.T, s artifact.Store) artifact.Store {
		return New(fileBucket(t, dirs[s]), Options{})
	}})
}

// A listing that fails fails the save, and one that misses versions (a
// stale view, as an object store's listing may be) never costs one: the
// version's object is written only if it does not exist (adk-java#1418:
// after a failed listing, a save took version 0 and overwrote it).
func TestNeverOverwrites(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	defer b.Close()
	s := New(b, Options{})
	k := artifact.Key{User: "u", Thread: "t", Name: "f.txt"}
	if _, err := s.Save(ctx, k, strings.NewReader("first"), artifact.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	real := s.list
	versions := namePrefix(k) + "v/"
	s.list = func(ctx context.Context, prefix, delimiter string) ([]*blob.ListObject, error) {
		if prefix == versions {
			return nil, errors.New("503 Service Unavailable")
		}
		return real(ctx, prefix, delimiter)
	}
	if _, err := s.Save(ctx, k, strings.NewReader("second"), artifact.SaveOptions{}); err == nil {
		t.Fatal("a save whose listing failed succeeded")
	}
	s.list = func(ctx context.Context, prefix, delimiter string) ([]*blob.ListObject, error) {
		if prefix == versions {
			return nil, nil // a stale listing that shows nothing
		}
		return real(ctx, prefix, delimiter)
	}
	info, err := s.Save(ctx, k, strings.NewReader("third"), artifact.SaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if info.Version != 2 {
		t.Errorf("the save after a stale listing is version %d, want 2", info.Version)
	}
	s.list = real
	for v, want := range map[int]string{1: "first", 2: "third"} {
		f, err := s.Open(ctx, k, v)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(f)
		f.Close()
		if string(got) != want {
			t.Errorf("version %d = %q, want %q", v, got, want)
		}
	}
	// The failed save left no bytes behind.
	if n, err := s.Usage(ctx, "u"); err != nil || n != int64(len("first")+len("third")) {
		t.Errorf("Usage = %d, %v; want %d", n, err, len("first")+len("third"))
	}
}

// go test -run '^$' -bench . -benchtime 5x (in artifact/blobstore)
func BenchmarkMemblob(b *testing.B) {
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	artifacttest.Bench(b, New(bucket, Options{}))
}

func BenchmarkFileblob(b *testing.B) {
	bucket, err := fileblob.OpenBucket(b.TempDir(), &fileblob.Options{CreateDir: true})
	if err != nil {
		b.Fatal(err)
	}
	defer bucket.Close()
	artifacttest.Bench(b, New(bucket, Options{}))
}
