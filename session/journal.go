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
func (m *Memory) BeginRun(ctx context.Context, id, run string, claim Claim, entries [][]byte) error {
	entries, size, err := record.Entries(id, run, entries)
	if err == nil {
		err = checkClaim(claim)
	}
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
	j := &memJournal{run: run, started: now, updated: now, entries: cloneEntries(entries), bytes: size}
	j.claim(claim, now)
	m.runs[id] = j
	m.bytes += size
	m.pinned += size
	if c := m.convs[id]; c != nil {
		m.pinned += c.bytes
	}
	m.evict(id)
	return nil
}

// AppendRun implements [Journaler].
func (m *Memory) AppendRun(ctx context.Context, id, run string, claim Claim, entries [][]byte) error {
	entries, size, err := record.Entries(id, run, entries)
	if err == nil {
		err = checkClaim(claim)
	}
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("session: appending to run %q on %q: %w", run, id, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	j, err := m.fenced(id, run, claim.Owner)
	if err == nil {
		err = m.fits(id, size)
	}
	if err != nil {
		return fmt.Errorf("session: appending to run %q on %q: %w", run, id, err)
	}
	j.entries = append(j.entries, cloneEntries(entries)...)
	j.updated = m.now()
	j.claim(claim, j.updated)
	j.bytes += size
	m.bytes += size
	m.pinned += size
	m.evict(id)
	return nil
}

// EndRun implements [Journaler]: the contents are appended as Append
// appends them, and the journal is dropped, under one lock.
func (m *Memory) EndRun(ctx context.Context, id, run string, claim Claim, contents []*genai.Content) error {
	encoded, err := record.Encode(id, contents)
	if err == nil {
		err = record.CheckRun(run)
	}
	if err == nil {
		err = checkClaim(claim)
	}
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("session: ending run %q on %q: %w", run, id, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	j, err := m.fenced(id, run, claim.Owner)
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

// fenced returns the journal of run on the conversation id when owner's
// is its claim ("": nobody claims it), or an error wrapping ErrNoRun or
// ErrClaimed. m.mu is held.
func (m *Memory) fenced(id, run, owner string) (*memJournal, error) {
	j, err := m.journal(id, run)
	if err == nil && j.owner != owner {
		err = fmt.Errorf("%s: %w", claimedBy(j.owner), ErrClaimed)
	}
	return j, err
}

// claimedBy says who claims a journal, for errors.
func claimedBy(owner string) string {
	if owner == "" {
		return "nobody claims it"
	}
	return fmt.Sprintf("%q claims it", owner)
}

// checkClaim checks a claim a write names.
func checkClaim(c Claim) error {
	if err := record.CheckOwner(c.Owner); err != nil {
		return err
	}
	return record.CheckLease(c.Lease)
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
		out.Held = m.held(j, time.Now())
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
	now := time.Now()
	for id, j := range m.runs {
		if strings.HasPrefix(id, opts.Prefix) {
			info := j.info(id)
			info.Held = m.held(j, now)
			journals = append(journals, info)
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
func (m *Memory) ClaimRun(ctx context.Context, id, run string, claim Claim) error {
	err := record.CheckClaim(id, run, claim.Owner)
	if err == nil {
		err = record.CheckLease(claim.Lease)
	}
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("session: claiming run %q on %q: %w", run, id, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	j, err := m.journal(id, run)
	now := time.Now()
	if err == nil && j.owner != "" && j.owner != claim.Owner && m.held(j, now) {
		err = fmt.Errorf("%s: %w", j.holds(), ErrClaimed)
	}
	if err != nil {
		return fmt.Errorf("session: claiming run %q on %q: %w", run, id, err)
	}
	j.claim(claim, now)
	return nil
}

// ReleaseRun implements [Journaler].
func (m *Memory) ReleaseRun(ctx context.Context, id, run, owner string) error {
	if err := record.CheckClaim(id, run, owner); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("session: releasing run %q on %q: %w", run, id, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	j, err := m.journal(id, run)
	if err == nil && j.owner != "" && j.owner != owner {
		err = fmt.Errorf("%s: %w", claimedBy(j.owner), ErrClaimed)
	}
	if err != nil {
		return fmt.Errorf("session: releasing run %q on %q: %w", run, id, err)
	}
	j.claim(Claim{}, time.Time{})
	return nil
}

// held reports whether j's claim lasts at now: its lease has not passed,
// or, for a claim of zero lease, its owner's life goes on. m.mu is held.
func (m *Memory) held(j *memJournal, now time.Time) bool {
	switch {
	case j.owner == "":
		return false
	case j.lease.IsZero():
		return m.lives[j.owner] != nil
	}
	return j.lease.After(now)
}

// claim makes c j's claim, at now.
func (j *memJournal) claim(c Claim, now time.Time) {
	j.owner, j.lease = c.Owner, time.Time{}
	if c.Owner != "" && c.Lease > 0 {
		j.lease = now.Add(c.Lease)
	}
}

// holds says who holds j's claim, and until when, for errors.
func (j *memJournal) holds() string {
	if j.lease.IsZero() {
		return fmt.Sprintf("%q holds it for as long as it lives", j.owner)
	}
	return fmt.Sprintf("%q holds it until %v", j.owner, j.lease)
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
