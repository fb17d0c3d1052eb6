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

// ErrTooLarge is returned, wrapped, by a write to a [Memory] (Append,
// BeginRun, AppendRun, EndRun) that does not fit in the store's MaxBytes
// even once it has forgotten every conversation it may forget: nothing is
// written.
var ErrTooLarge = errors.New("session: more than the store holds")

// Memory is a [Store] that keeps conversations in memory: for tests, and
// for programs that keep conversations only while they run. The zero value
// is an empty store, ready to use. It is safe for concurrent use. It is a
// [Lister] and a [LiveJournaler]: the lives of its owners are the
// process's own (a Life ends with Close, or with the process).
//
// It stores contents in the same encoded form as the durable stores do, so
// that what a program sees does not depend on the store: Load returns new
// contents, and Append keeps none of the caller's values.
//
// It is bounded: a write that takes what it holds (the conversations'
// contents and the journals' entries) over MaxBytes forgets the
// conversations appended to least recently, whole, until it fits again
// (so a Memory is a cache, never a durable store). It never forgets a
// journal, nor a conversation that has one: a run in progress keeps its
// conversation. A write that does not fit even once every other
// conversation it may forget is gone (one conversation larger than
// MaxBytes by itself, or runs in progress that hold nearly all of it) is
// refused with [ErrTooLarge], and writes nothing.
type Memory struct {
	// MaxBytes bounds the size of the stored contents (the sum of
	// Info.Bytes) and journal entries together. Zero means
	// [DefaultMemoryMaxBytes]; less than zero, no bound. Set it before
	// the store's first use.
	MaxBytes int64

	mu     sync.Mutex
	convs  map[string]*memConv
	ids    []string               // the ids of convs, sorted: ListPage's index
	lru    list.List              // of *memConv, the most recently appended to first
	runs   map[string]*memJournal // by conversation id
	lives  map[string]*memLife    // the lives going on (Live), by owner
	bytes  int64                  // the sum of the conversations' and the journals' bytes
	pinned int64                  // what may not be forgotten: the journals' bytes and their conversations'
	last   time.Time              // the latest Updated, so that writes are strictly ordered
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

// memJournal is the journal of the run in progress on a conversation.
type memJournal struct {
	run              string
	started, updated time.Time
	entries          [][]byte
	bytes            int64
	owner            string    // ClaimRun's
	lease            time.Time // when owner's claim ends
}

var (
	_ Lister        = (*Memory)(nil)
	_ Journaler     = (*Memory)(nil)
	_ LiveJournaler = (*Memory)(nil)
)

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
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.add(id, encoded, nil); err != nil {
		return fmt.Errorf("session: appending to %q: %w", id, err)
	}
	return nil
}

// add appends encoded to the conversation id, creating it when it does
// not exist, and drops the journal ending, when EndRun passes it, in the
// same step; then it forgets what MaxBytes requires. It fails with an
// error wrapping ErrTooLarge, and changes nothing, when that cannot be
// enough. m.mu is held.
func (m *Memory) add(id string, encoded [][]byte, ending *memJournal) error {
	var size, freed int64
	for _, b := range encoded {
		size += int64(len(b))
	}
	if ending != nil {
		freed = ending.bytes
	}
	if err := m.fits(id, size-freed); err != nil {
		return err
	}
	if ending != nil {
		m.dropRun(id, ending)
	}
	if len(encoded) == 0 {
		return nil
	}
	now := m.now()
	if m.convs == nil {
		m.convs = map[string]*memConv{}
	}
	c := m.convs[id]
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
	if m.runs[id] != nil {
		m.pinned += size
	}
	m.evict(id)
	return nil
}

// fits returns an error wrapping ErrTooLarge unless a write that adds
// delta bytes to the store, for the conversation id, fits in MaxBytes
// once every conversation the store may forget, but id, is forgotten.
// m.mu is held.
func (m *Memory) fits(id string, delta int64) error {
	max := m.maxBytes()
	if max < 0 || m.bytes+delta <= max {
		return nil
	}
	held := m.pinned // what cannot be forgotten
	if c := m.convs[id]; c != nil && m.runs[id] == nil {
		held += c.bytes
	}
	if held+delta > max {
		return fmt.Errorf("%d bytes more, beside the %d of this conversation and of runs in progress, would be over the store's MaxBytes %d: %w",
			delta, held, max, ErrTooLarge)
	}
	return nil
}

// evict forgets the conversations appended to least recently, but keep
// and those with a journal, until the store is within MaxBytes; fits
// checked that it can be. m.mu is held.
func (m *Memory) evict(keep string) {
	max := m.maxBytes()
	for e := m.lru.Back(); max >= 0 && m.bytes > max && e != nil; {
		c := e.Value.(*memConv)
		e = e.Prev()
		if c.id != keep && m.runs[c.id] == nil {
			m.remove(c)
		}
	}
}

// now returns the time of a write: later than every write before. m.mu
// is held.
func (m *Memory) now() time.Time {
	now := time.Now()
	if !now.After(m.last) {
		now = m.last.Add(time.Nanosecond)
	}
	m.last = now
	return now
}

func (m *Memory) maxBytes() int64 {
	if m.MaxBytes == 0 {
		return DefaultMemoryMaxBytes
	}
	return m.MaxBytes
}

// remove forgets c. m.mu is held.
func (m *Memory) remove(c *memConv) {
	delete(m.convs, c.id)
	if i, found := slices.BinarySearch(m.ids, c.id); found {
		m.ids = slices.Delete(m.ids, i, i+1)
	}
	m.lru.Remove(c.elem)
	m.bytes -= c.bytes
	if m.runs[c.id] != nil {
		m.pinned -= c.bytes
	}
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
	c, j := m.convs[id], m.runs[id]
	if c == nil && j == nil {
		return fmt.Errorf("session: deleting %q: %w", id, ErrNotFound)
	}
	if c != nil {
		m.remove(c)
	}
	if j != nil {
		m.dropRun(id, j)
	}
	return nil
}

// start checks what every call that names a conversation checks first.
func start(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("session: %q: %w", id, err)
	}
	return record.CheckID(id)
}
