package artifact

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
)

// DefaultMemoryMaxBytes is what a [Memory] store holds at most when
// NewMemory is given no bound: 256 MiB, every version of every file of
// every user.
const DefaultMemoryMaxBytes = 256 << 20

// Memory is a [Store] in the process's memory: for tests, development
// and files that need not outlive the process. Each version is one
// []byte; a file is at most the store's bound. It is safe for concurrent
// use.
type Memory struct {
	max int64

	mu    sync.Mutex
	total int64
	users map[string]*memUser
}

type memUser struct {
	bytes int64
	files map[memName]*memFile
}

type memName struct{ thread, name string }

type memFile struct {
	last     int           // the highest version ever given
	versions []*memVersion // live versions, oldest first
}

type memVersion struct {
	info Info
	data []byte
}

// NewMemory returns an empty Memory store that holds maxBytes at most (0
// means DefaultMemoryMaxBytes): a save past it fails with ErrQuota.
func NewMemory(maxBytes int64) *Memory {
	if maxBytes <= 0 {
		maxBytes = DefaultMemoryMaxBytes
	}
	return &Memory{max: maxBytes, users: map[string]*memUser{}}
}

// Save implements [Store].
func (m *Memory) Save(ctx context.Context, key Key, r io.Reader, opts SaveOptions) (Info, error) {
	if err := CheckKey(key); err != nil {
		return Info{}, err
	}
	in, err := Begin(r, opts, m.max)
	if err != nil {
		return Info{}, err
	}
	data, err := io.ReadAll(in)
	if err != nil {
		return Info{}, fmt.Errorf("artifact: saving %q: %w", key.Name, err)
	}
	if err := ctx.Err(); err != nil {
		return Info{}, err
	}
	size := int64(len(data))
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.users[key.User]
	if u == nil {
		u = &memUser{files: map[memName]*memFile{}}
		m.users[key.User] = u
	}
	if opts.MaxBytesPerUser > 0 && u.bytes+size > opts.MaxBytesPerUser {
		return Info{}, QuotaError(u.bytes, size, opts.MaxBytesPerUser)
	}
	if m.total+size > m.max {
		return Info{}, fmt.Errorf("%w: the memory store holds %d bytes, its bound is %d", ErrQuota, m.total, m.max)
	}
	f := u.files[memName{key.Thread, key.Name}]
	if f == nil {
		f = &memFile{}
		u.files[memName{key.Thread, key.Name}] = f
	}
	f.last++
	info := in.Info(key, f.last, time.Now())
	f.versions = append(f.versions, &memVersion{info: info, data: data})
	u.bytes += size
	m.total += size
	return info, nil
}

// Open implements [Store].
func (m *Memory) Open(ctx context.Context, key Key, version int) (File, error) {
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	if err := checkVersion(version); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	f := m.file(key)
	if f == nil || len(f.versions) == 0 {
		return nil, notFound(key, version)
	}
	v := f.versions[len(f.versions)-1]
	if version > 0 {
		i, ok := slices.BinarySearchFunc(f.versions, version, func(v *memVersion, n int) int { return v.info.Version - n })
		if !ok {
			return nil, notFound(key, version)
		}
		v = f.versions[i]
	}
	return &memOpen{Reader: bytes.NewReader(v.data), info: v.info}, nil
}

type memOpen struct {
	*bytes.Reader
	info Info
}

func (o *memOpen) Info() Info   { return o.info }
func (o *memOpen) Close() error { return nil }

// file returns key's file, or nil; m.mu is held.
func (m *Memory) file(key Key) *memFile {
	u := m.users[key.User]
	if u == nil {
		return nil
	}
	return u.files[memName{key.Thread, key.Name}]
}

// List implements [Store].
func (m *Memory) List(ctx context.Context, user, thread string) ([]Info, error) {
	if err := CheckScope(user, thread); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Info
	if u := m.users[user]; u != nil {
		for k, f := range u.files {
			if k.thread == thread && len(f.versions) > 0 {
				out = append(out, f.versions[len(f.versions)-1].info)
			}
		}
	}
	slices.SortFunc(out, func(a, b Info) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Versions implements [Store].
func (m *Memory) Versions(ctx context.Context, key Key) ([]Info, error) {
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	f := m.file(key)
	if f == nil || len(f.versions) == 0 {
		return nil, notFound(key, 0)
	}
	out := make([]Info, len(f.versions))
	for i, v := range f.versions {
		out[i] = v.info
	}
	return out, nil
}

// Delete implements [Store].
func (m *Memory) Delete(ctx context.Context, key Key, version int) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if err := checkVersion(version); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	f := m.file(key)
	if f == nil || len(f.versions) == 0 {
		return notFound(key, version)
	}
	u := m.users[key.User]
	keep := f.versions[:0]
	found := false
	for _, v := range f.versions {
		if version == 0 || v.info.Version == version {
			found = true
			u.bytes -= v.info.Size
			m.total -= v.info.Size
			continue
		}
		keep = append(keep, v)
	}
	if !found {
		return notFound(key, version)
	}
	clear(f.versions[len(keep):])
	f.versions = keep
	return nil
}

// DeleteThread implements [Store].
func (m *Memory) DeleteThread(ctx context.Context, user, thread string) error {
	if err := CheckScope(user, thread); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.users[user]
	if u == nil {
		return nil
	}
	for k, f := range u.files {
		if k.thread != thread {
			continue
		}
		for _, v := range f.versions {
			u.bytes -= v.info.Size
			m.total -= v.info.Size
		}
		delete(u.files, k)
	}
	return nil
}

// Usage implements [Store].
func (m *Memory) Usage(ctx context.Context, user string) (int64, error) {
	if err := CheckScope(user, ""); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if u := m.users[user]; u != nil {
		return u.bytes, nil
	}
	return 0, nil
}

// notFound is the error of a missing file or version.
func notFound(key Key, version int) error {
	if version > 0 {
		return fmt.Errorf("%w: %q version %d", ErrNotFound, key.Name, version)
	}
	return fmt.Errorf("%w: %q", ErrNotFound, key.Name)
}
