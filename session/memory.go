package session

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/toolnexus/toolnexus-go/session/internal/record"
	"google.golang.org/genai"
)

// Memory is a [Store] that keeps conversations in memory: for tests, and
// for programs that keep conversations only while they run. The zero value
// is an empty store, ready to use. It is safe for concurrent use.
//
// It stores contents in the same encoded form as the durable stores do, so
// that what a program sees does not depend on the store: Load returns new
// contents, and Append keeps none of the caller's values.
type Memory struct {
	mu    sync.Mutex
	convs map[string]*memConv
	last  time.Time // the latest Updated, so that appends are strictly ordered
}

type memConv struct {
	created, updated time.Time
	contents         [][]byte
}

// NewMemory returns an empty Memory store.
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

// Append implements [Store].
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
	now := time.Now()
	if !now.After(m.last) {
		now = m.last.Add(time.Nanosecond)
	}
	m.last = now
	if m.convs == nil {
		m.convs = map[string]*memConv{}
	}
	c := m.convs[id]
	if c == nil {
		c = &memConv{created: now}
		m.convs[id] = c
	}
	c.updated = now
	c.contents = append(c.contents, encoded...)
	return nil
}

// List implements [Store].
func (m *Memory) List(ctx context.Context) ([]Info, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("session: listing conversations: %w", err)
	}
	m.mu.Lock()
	out := make([]Info, 0, len(m.convs))
	for id, c := range m.convs {
		out = append(out, Info{ID: id, Len: len(c.contents), Created: c.created, Updated: c.updated})
	}
	m.mu.Unlock()
	slices.SortFunc(out, func(a, b Info) int {
		return cmp.Or(b.Updated.Compare(a.Updated), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// Delete implements [Store].
func (m *Memory) Delete(ctx context.Context, id string) error {
	if err := start(ctx, id); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.convs[id] == nil {
		return fmt.Errorf("session: deleting %q: %w", id, ErrNotFound)
	}
	delete(m.convs, id)
	return nil
}

// start checks what every call that names a conversation checks first.
func start(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("session: %q: %w", id, err)
	}
	return record.CheckID(id)
}
