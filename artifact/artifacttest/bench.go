package artifacttest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/toolnexus/toolnexus-go/artifact"
)

// BenchSizes are the file sizes [Bench] saves and loads: 1 KB, 1 MB,
// 50 MB.
var BenchSizes = []int{1 << 10, 1 << 20, 50 << 20}

// Bench measures s's save and load throughput for each of BenchSizes
// (b.SetBytes: go test reports MB/s): Save/{size} saves a new version of
// one file per iteration, Load/{size} opens its latest version and reads
// it whole. Run it with a few iterations for the large sizes
// (-benchtime=5x).
func Bench(b *testing.B, s artifact.Store) {
	for _, size := range BenchSizes {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(i*7 + i>>11)
		}
		key := artifact.Key{User: "bench", Thread: "t", Name: fmt.Sprintf("file-%d.bin", size)}
		b.Run("Save/"+sizeName(size), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				if _, err := s.Save(b.Context(), key, bytes.NewReader(data), artifact.SaveOptions{ContentType: "application/octet-stream"}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("Load/"+sizeName(size), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				f, err := s.Open(b.Context(), key, 0)
				if err != nil {
					b.Fatal(err)
				}
				n, err := io.Copy(io.Discard, f)
				f.Close()
				if err != nil || n != int64(size) {
					b.Fatalf("read %d bytes, %v", n, err)
				}
			}
		})
		// The versions saved are deleted, so that the next size starts
		// from a file of one version (and a memory store stays small).
		if err := s.Delete(b.Context(), key, 0); err != nil && !errors.Is(err, artifact.ErrNotFound) {
			b.Fatal(err) // (a file a -bench filter skipped is not there)
		}
	}
}

func sizeName(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%dMB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%dKB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}
