package session

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/toolnexus/toolnexus-go/session/internal/record"
	"google.golang.org/genai"
)

// DefaultMemoryMaxBytes is the most a [Memory] holds when its MaxBytes is
// zero: 512 MiB of stored contents.
const DefaultMemoryMaxBytes = 512 << 20

// ErrTooLarge is returned, wrapped, by [Memory.Append] when the
// conversation would be larger than the store's MaxBytes: nothing is
// appended.
var ErrTooLarge = errors.New("session: the conversation is larger than the store holds")

// Memory is a [Store] that keeps conversations in memory: for tests, and
// for programs that keep conversations only while they run. The zero value
// is an empty store, ready to use. It is safe for concurrent use. It is a
// [Lister].
//
// It stores contents in the same encoded form as the durable stores do, so
// that what a program sees does not depend on the store: Load returns new
// contents, and Append keeps none of the caller's values.
//
// It is bounded: an append that takes the contents it holds over MaxBytes
// forgets the conversations appended to least recently, whole, until they
// fit again (so a Memory is a cache, never a durable store). An append
// that would make one conversation larger than MaxBytes by itself is
// refused with [ErrTooLarge].
type Memory struct {
	// MaxBytes bounds the size of the stored contents (the sum of
	// Info.Bytes). Zero means [DefaultMemoryMaxBytes]; less than zero, no
	// bound. Set it before the store's first use.
	MaxBytes int64

	mu    sync.Mutex
	convs map[string]*memConv
	ids   []string  // the ids of convs, sorted: ListPage's index
	lru   list.List // of *memConv, the most recently appended to first
	bytes int64     // the sum of the conversations' bytes
	last  time.Time // the latest Updated, so that appends are strictly ordered
}

type memConv struct {
	id               string
	created, updated time.Time
	contents         [][]byte
	bytes            int64
	elem             *list.Element // in Memory.lru
}

func (c *memConv) info() Info {
	return Info{ID: c.id, Len: len(c.contents), Bytes: c.bytes, Created: c.created, Updated: c.updated}
}

var _ Lister = (*Memory)(nil)

// NewMemory returns an empty Memory store, bounded by
// DefaultMemoryMaxBytes.
func NewMemory() *Memory { return &Memory{} }

// Load implements [Store].
func (m *Memory) Load(ctx context.Context, id string) ([]*genai.Content, error) {
	if err := start(ctx, id); err != nil {
		return nil, err
	}
	m.mu.Lock()
	var stored [][]byte
	if c := m.convs[id]; c != nil {
		stored = c.contents[:len(c.contents):len(c.contents)] // appends never change what is there
	}
	m.mu.Unlock()
	if stored == nil {
		return nil, fmt.Errorf("session: loading %q: %w", id, ErrNotFound)
	}
	out := make([]*genai.Content, len(stored))
	for i, b := range stored {
		c, err := record.Decode(b)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

// Append implements [Store]. It forgets the conversations appended to
// least recently when the store would hold more than MaxBytes.
func (m *Memory) Append(ctx context.Context, id string, contents []*genai.Content) error {
	encoded, err := record.Encode(id, contents)
	if err != nil || len(encoded) == 0 {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("session: appending to %q: %w", id, err)
	}
	var size int64
	for _, b := range encoded {
		size += int64(len(b))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	max := m.maxBytes()
	c := m.convs[id]
	if have := m.sizeOf(c); max >= 0 && have+size > max {
		return fmt.Errorf("session: appending to %q: %d bytes to a conversation of %d, over the store's MaxBytes %d: %w", id, size, have, max, ErrTooLarge)
	}
	now := time.Now()
	if !now.After(m.last) {
		now = m.last.Add(time.Nanosecond)
	}
	m.last = now
	if m.convs == nil {
		m.convs = map[string]*memConv{}
	}
	if c == nil {
		c = &memConv{id: id, created: now}
		m.convs[id] = c
		i, _ := slices.BinarySearch(m.ids, id)
		m.ids = slices.Insert(m.ids, i, id)
		c.elem = m.lru.PushFront(c)
	} else {
		m.lru.MoveToFront(c.elem)
	}
	c.updated = now
	c.contents = append(c.contents, encoded...)
	c.bytes += size
	m.bytes += size
	for max >= 0 && m.bytes > max {
		m.remove(m.lru.Back().Value.(*memConv)) // never c: it alone fits
	}
	return nil
}

func (m *Memory) maxBytes() int64 {
	if m.MaxBytes == 0 {
		return DefaultMemoryMaxBytes
	}
	return m.MaxBytes
}

func (m *Memory) sizeOf(c *memConv) int64 {
	if c == nil {
		return 0
	}
	return c.bytes
}

// remove forgets c. m.mu is held.
func (m *Memory) remove(c *memConv) {
	delete(m.convs, c.id)
	if i, found := slices.BinarySearch(m.ids, c.id); found {
		m.ids = slices.Delete(m.ids, i, i+1)
	}
	m.lru.Remove(c.elem)
	m.bytes -= c.bytes
}

// List implements [Store].
func (m *Memory) List(ctx context.Context) ([]Info, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("session: listing conversations: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Info, 0, len(m.convs))
	for e := m.lru.Front(); e != nil; e = e.Next() {
		out = append(out, e.Value.(*memConv).info())
	}
	return out, nil
}

// ListPage implements [Lister]: it reads the conversations of the prefix
// from an index of the ids, and sorts them.
func (m *Memory) ListPage(ctx context.Context, opts ListOptions) (Page, error) {
	infos, err := m.prefixed(ctx, opts.Prefix)
	if err != nil {
		return Page{}, err
	}
	sortInfos(infos)
	return pageOf(infos, opts)
}

// Usage implements [Lister].
func (m *Memory) Usage(ctx context.Context, prefix string) (Usage, error) {
	infos, err := m.prefixed(ctx, prefix)
	if err != nil {
		return Usage{}, err
	}
	return usageOf(infos), nil
}

// prefixed returns the conversations whose ids start with prefix, in no
// particular order.
func (m *Memory) prefixed(ctx context.Context, prefix string) ([]Info, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("session: listing conversations: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Info
	for _, id := range m.ids[sort.SearchStrings(m.ids, prefix):] {
		if !strings.HasPrefix(id, prefix) {
			break
		}
		out = append(out, m.convs[id].info())
	}
	return out, nil
}

// Delete implements [Store].
func (m *Memory) Delete(ctx context.Context, id string) error {
	if err := start(ctx, id); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.convs[id]
	if c == nil {
		return fmt.Errorf("session: deleting %q: %w", id, ErrNotFound)
	}
	m.remove(c)
	return nil
}

// start checks what every call that names a conversation checks first.
func start(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("session: %q: %w", id, err)
	}
	return record.CheckID(id)
}
