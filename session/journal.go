package session

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus-go/session/internal/record"
	"google.golang.org/genai"
)

// BeginRun implements [Journaler]. The journal's entries count toward
// MaxBytes, and while it lasts the store never forgets the conversation.
func (m *Memory) BeginRun(ctx context.Context, id, run string, entries [][]byte) error {
	entries, size, err := record.Entries(id, run, entries)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("session: beginning run %q on %q: %w", run, id, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if j := m.runs[id]; j != nil {
		return fmt.Errorf("session: beginning run %q on %q: run %q holds it: %w", run, id, j.run, ErrRunInProgress)
	}
	if err := m.fits(id, size); err != nil {
		return fmt.Errorf("session: beginning run %q on %q: %w", run, id, err)
	}
	now := m.now()
	if m.runs == nil {
		m.runs = map[string]*memJournal{}
	}
	m.runs[id] = &memJournal{run: run, started: now, updated: now, entries: cloneEntries(entries), bytes: size}
	m.bytes += size
	m.pinned += size
	if c := m.convs[id]; c != nil {
		m.pinned += c.bytes
	}
	m.evict(id)
	return nil
}

// AppendRun implements [Journaler].
func (m *Memory) AppendRun(ctx context.Context, id, run string, entries [][]byte) error {
	entries, size, err := record.Entries(id, run, entries)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("session: appending to run %q on %q: %w", run, id, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	j, err := m.journal(id, run)
	if err == nil {
		err = m.fits(id, size)
	}
	if err != nil {
		return fmt.Errorf("session: appending to run %q on %q: %w", run, id, err)
	}
	j.entries = append(j.entries, cloneEntries(entries)...)
	j.updated = m.now()
	j.bytes += size
	m.bytes += size
	m.pinned += size
	m.evict(id)
	return nil
}

// EndRun implements [Journaler]: the contents are appended as Append
// appends them, and the journal is dropped, under one lock.
func (m *Memory) EndRun(ctx context.Context, id, run string, contents []*genai.Content) error {
	encoded, err := record.Encode(id, contents)
	if err == nil {
		err = record.CheckRun(run)
	}
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("session: ending run %q on %q: %w", run, id, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	j, err := m.journal(id, run)
	if err == nil {
		err = m.add(id, encoded, j)
	}
	if err != nil {
		return fmt.Errorf("session: ending run %q on %q: %w", run, id, err)
	}
	return nil
}

// journal returns the journal of run on the conversation id, or an error
// wrapping ErrNoRun. m.mu is held.
func (m *Memory) journal(id, run string) (*memJournal, error) {
	j := m.runs[id]
	switch {
	case j == nil:
		return nil, ErrNoRun
	case j.run != run:
		return nil, fmt.Errorf("run %q holds it: %w", j.run, ErrNoRun)
	}
	return j, nil
}

// dropRun forgets j, the journal of the conversation id. m.mu is held.
func (m *Memory) dropRun(id string, j *memJournal) {
	delete(m.runs, id)
	m.bytes -= j.bytes
	m.pinned -= j.bytes
	if c := m.convs[id]; c != nil {
		m.pinned -= c.bytes
	}
}

// LoadRun implements [Journaler].
func (m *Memory) LoadRun(ctx context.Context, id string) (Journal, error) {
	if err := start(ctx, id); err != nil {
		return Journal{}, err
	}
	m.mu.Lock()
	j := m.runs[id]
	var out Journal
	var stored [][]byte
	if j != nil {
		out = j.info(id)
		stored = j.entries[:len(j.entries):len(j.entries)] // appends never change what is there
	}
	m.mu.Unlock()
	if j == nil {
		return Journal{}, fmt.Errorf("session: loading the run on %q: %w", id, ErrNoRun)
	}
	out.Entries = cloneEntries(stored)
	return out, nil
}

// ListRuns implements [Journaler]. It reads every journal: there is one
// per run in progress.
func (m *Memory) ListRuns(ctx context.Context, opts ListOptions) (JournalPage, error) {
	if err := ctx.Err(); err != nil {
		return JournalPage{}, fmt.Errorf("session: listing runs: %w", err)
	}
	m.mu.Lock()
	var journals []Journal
	for id, j := range m.runs {
		if strings.HasPrefix(id, opts.Prefix) {
			journals = append(journals, j.info(id))
		}
	}
	m.mu.Unlock()
	slices.SortFunc(journals, func(a, b Journal) int {
		return cmp.Or(a.Updated.Compare(b.Updated), cmp.Compare(a.ID, b.ID))
	})
	journals, next, err := paged(journals, opts, func(j Journal) (time.Time, string) { return j.Updated, j.ID }, record.AfterOldestFirst)
	if err != nil {
		return JournalPage{}, fmt.Errorf("session: listing runs: %w", err)
	}
	return JournalPage{Journals: journals, Next: next}, nil
}

// ClaimRun implements [Journaler], on the Memory's clock.
func (m *Memory) ClaimRun(ctx context.Context, id, run, owner string, lease time.Duration) error {
	if err := record.CheckClaim(id, run, owner); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("session: claiming run %q on %q: %w", run, id, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	j, err := m.journal(id, run)
	now := time.Now()
	if err == nil && j.owner != owner && j.lease.After(now) {
		err = fmt.Errorf("%q holds it until %v: %w", j.owner, j.lease, ErrClaimed)
	}
	if err != nil {
		return fmt.Errorf("session: claiming run %q on %q: %w", run, id, err)
	}
	j.owner, j.lease = owner, now.Add(max(lease, 0))
	return nil
}

// info describes j, the journal of the conversation id, without its
// entries.
func (j *memJournal) info(id string) Journal {
	return Journal{ID: id, Run: j.run, Len: len(j.entries), Bytes: j.bytes, Started: j.started, Updated: j.updated, Owner: j.owner, Lease: j.lease}
}

// cloneEntries returns a deep copy of entries, none of them nil.
func cloneEntries(entries [][]byte) [][]byte {
	if len(entries) == 0 {
		return nil
	}
	out := make([][]byte, len(entries))
	for i, e := range entries {
		out[i] = append(make([]byte, 0, len(e)), e...)
	}
	return out
}
