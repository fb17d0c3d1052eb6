// Package artifactrows is what the artifact stores of the session stores
// (sqlitestore, pgstore) share: files kept in rows of a fixed size. Split
// cuts a stream into chunks, Reader reads and seeks the chunks back,
// loading each on demand; Save and File wrap a store's own save and
// reads.
package artifactrows

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/toolnexus/toolnexus-go/artifact"
)

// Save checks key and opts, and calls save with the reading of r, whose
// error it wraps with the store's prefix ("sqlitestore").
func Save(key artifact.Key, r io.Reader, opts artifact.SaveOptions, limit int64, prefix string,
	save func(in *artifact.Incoming) (artifact.Info, error)) (artifact.Info, error) {
	if err := artifact.CheckKey(key); err != nil {
		return artifact.Info{}, err
	}
	in, err := artifact.Begin(r, opts, limit)
	if err != nil {
		return artifact.Info{}, err
	}
	info, err := save(in)
	if err != nil {
		return artifact.Info{}, fmt.Errorf("%s: saving %q: %w", prefix, key.Name, err)
	}
	return info, nil
}

// Undo calls undo on a context that ignores ctx's end (the save's may be
// done), unless *done is set: what a save defers to remove the rows of a
// file it did not finish.
func Undo(ctx context.Context, done *bool, undo func(ctx context.Context) error) {
	if !*done {
		undo(context.WithoutCancel(ctx)) // best effort
	}
}

// NotFound is the error of a missing file or version.
func NotFound(key artifact.Key, version int) error {
	if version > 0 {
		return fmt.Errorf("%w: %q version %d", artifact.ErrNotFound, key.Name, version)
	}
	return fmt.Errorf("%w: %q", artifact.ErrNotFound, key.Name)
}

// CheckOpen checks the key and version of an Open.
func CheckOpen(key artifact.Key, version int) error {
	if err := artifact.CheckKey(key); err != nil {
		return err
	}
	if version < 0 {
		return fmt.Errorf("%w: version %d", artifact.ErrNotFound, version)
	}
	return nil
}

// File is an open version of a file kept in chunks.
type File struct {
	*Reader
	info artifact.Info
}

// NewFile returns the open version info, whose chunk seq load returns.
func NewFile(info artifact.Info, chunk int64, load func(seq int64) ([]byte, error)) *File {
	return &File{Reader: NewReader(info.Size, chunk, load), info: info}
}

// Info implements artifact.File.
func (f *File) Info() artifact.Info { return f.info }

// Close implements artifact.File: it holds nothing.
func (f *File) Close() error { return nil }

// Split reads r to its end in chunks of size bytes (the last one
// shorter, none for an empty r), calling each with its sequence number,
// from 0. It stops at the first error, of r or of each.
func Split(r io.Reader, size int, each func(seq int, data []byte) error) error {
	buf := make([]byte, size)
	for seq := 0; ; seq++ {
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			if err := each(seq, buf[:n]); err != nil {
				return err
			}
		}
		switch err {
		case nil:
		case io.EOF, io.ErrUnexpectedEOF:
			return nil
		default:
			return err
		}
	}
}

// Reader reads a file of Size bytes kept in chunks of Chunk bytes: it
// loads each chunk once, when a read reaches it. It implements
// io.ReadSeeker.
type Reader struct {
	size, chunk int64
	load        func(seq int64) ([]byte, error)
	off         int64
	seq         int64 // the chunk in cur, or -1
	cur         []byte
}

// NewReader returns a Reader of a file of size bytes in chunks of chunk
// bytes, whose chunk seq load returns.
func NewReader(size, chunk int64, load func(seq int64) ([]byte, error)) *Reader {
	return &Reader{size: size, chunk: chunk, load: load, seq: -1}
}

// Read implements io.Reader.
func (r *Reader) Read(p []byte) (int, error) {
	if r.off >= r.size {
		return 0, io.EOF
	}
	seq := r.off / r.chunk
	if seq != r.seq {
		data, err := r.load(seq)
		if err != nil {
			return 0, err
		}
		want := min(r.chunk, r.size-seq*r.chunk)
		if int64(len(data)) != want {
			return 0, fmt.Errorf("chunk %d holds %d bytes, want %d", seq, len(data), want)
		}
		r.seq, r.cur = seq, data
	}
	n := copy(p, r.cur[r.off-seq*r.chunk:])
	r.off += int64(n)
	return n, nil
}

// Seek implements io.Seeker.
func (r *Reader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += r.off
	case io.SeekEnd:
		offset += r.size
	default:
		return 0, errors.New("artifactrows: invalid whence")
	}
	if offset < 0 {
		return 0, errors.New("artifactrows: negative position")
	}
	r.off = offset
	return offset, nil
}
