package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/session/internal/record"
	"google.golang.org/genai"
)

// The journal's statements, prepared at Open (see prepared).
//
// A journal's claim is its owner and lease columns: owner ” is no
// claim; a lease of 0 with an owner is a claim that lasts as long as the
// owner's life (lives.go); otherwise the lease is when the claim ends, in
// Unix nanoseconds.
const (
	// insertEntry inserts a journal entry, for insertSeq.
	insertEntry = "INSERT INTO journal_entries (conversation, seq, entry) VALUES (?, ?, ?)"
	// beginJournal inserts a journal (?1 id, ?2 run, ?3 length, ?4 now,
	// ?5 bytes, ?6 owner, ?7 lease), unless the conversation has one.
	// The time of a write to a journal is now, or later than every
	// journal's last write, so that ListRuns' order is the order of the
	// writes, whatever the clocks say: the statement that writes computes
	// it (journals_by_updated finds the last).
	beginJournal = `INSERT INTO journals (id, run, started, updated, length, bytes, owner, lease)
		SELECT ?1, ?2, t, t, ?3, ?5, ?6, ?7 FROM (SELECT max(?4, coalesce(max(updated), 0) + 1) AS t FROM journals) WHERE true
		ON CONFLICT (id) DO NOTHING`
	// appendJournal counts ?2 entries more, of ?5 bytes, in the journal
	// ?3 of run ?4, written at ?1 or later (as beginJournal), if ?6 owns
	// its claim (the fence), renewing the claim until ?7; it returns the
	// first new entry's seq.
	appendJournal = `UPDATE journals SET updated = max(?1, (SELECT coalesce(max(updated), 0) + 1 FROM journals)), length = length + ?2,
		bytes = bytes + ?5, lease = ?7
		WHERE id = ?3 AND run = ?4 AND owner = ?6 RETURNING length - ?2`
	// deleteJournal deletes the journal ?1 of run ?2 if ?3 owns its claim.
	deleteJournal = "DELETE FROM journals WHERE id = ? AND run = ? AND owner = ?"
	deleteEntries = "DELETE FROM journal_entries WHERE conversation = ?"
	claimedBy     = "SELECT owner, lease FROM journals WHERE id = ? AND run = ?"
	// setClaim makes ?3 until ?4 the claim of the journal ?1 of run ?2.
	setClaim    = "UPDATE journals SET owner = ?3, lease = ?4 WHERE id = ?1 AND run = ?2"
	loadJournal = `SELECT j.run, j.started, j.updated, j.owner, j.lease, j.bytes, e.seq, e.entry
		FROM journals j LEFT JOIN journal_entries e ON e.conversation = j.id
		WHERE j.id = ? ORDER BY e.seq`
)

// leaseOf returns the lease column of a claim made at now: 0 for no
// claim or one of zero lease, the time it ends otherwise. A claim of
// zero lease needs lives: it is refused where the store cannot track
// them.
func leaseOf(c session.Claim, now int64) (int64, error) {
	if err := record.CheckOwner(c.Owner); err != nil {
		return 0, err
	}
	if err := record.CheckLease(c.Lease); err != nil {
		return 0, err
	}
	switch {
	case c.Owner == "":
		return 0, nil
	case c.Lease == 0 && !livesSupported:
		return 0, fmt.Errorf("sqlitestore: a claim of zero lease needs lives, which this platform's file locks cannot track: %w", errors.ErrUnsupported)
	case c.Lease == 0:
		return 0, nil
	}
	return now + int64(c.Lease), nil
}

// refusal returns why a write of the journal id of run under owner's
// claim wrote nothing: ErrNoRun, or ErrClaimed naming who claims it.
func refusal(ctx context.Context, tx *sql.Tx, id, run string) error {
	var holder string
	var until int64
	switch err := tx.QueryRowContext(ctx, claimedBy, id, run).Scan(&holder, &until); {
	case errors.Is(err, sql.ErrNoRows):
		return session.ErrNoRun
	case err != nil:
		return err
	case holder == "":
		return fmt.Errorf("nobody claims it: %w", session.ErrClaimed)
	case until == 0:
		return fmt.Errorf("%q holds it for as long as it lives: %w", holder, session.ErrClaimed)
	}
	return fmt.Errorf("%q holds it until %v: %w", holder, time.Unix(0, until), session.ErrClaimed)
}

// BeginRun implements [session.Journaler]. It is one transaction; the
// journals' primary key, the conversation's id, lets one run in.
func (s *Store) BeginRun(ctx context.Context, id, run string, claim session.Claim, entries [][]byte) error {
	entries, size, err := record.Entries(id, run, entries)
	if err != nil {
		return err
	}
	if _, err := leaseOf(claim, 0); err != nil {
		return err
	}
	err = s.tx(ctx, func(tx *sql.Tx) error {
		now := time.Now().UnixNano()
		lease, _ := leaseOf(claim, now)
		res, err := s.stmt(ctx, tx, beginJournal).ExecContext(ctx, id, run, len(entries), now, size, claim.Owner, lease)
		if err != nil {
			return err
		}
		switch n, err := res.RowsAffected(); {
		case err != nil:
			return err
		case n == 0:
			return session.ErrRunInProgress
		}
		return s.insertSeq(ctx, tx, insertEntry, id, 0, entries)
	})
	if err != nil {
		return fmt.Errorf("sqlitestore: beginning run %q on %q: %w", run, id, err)
	}
	return nil
}

// AppendRun implements [session.Journaler]. It is one transaction, whose
// update checks the claim.
func (s *Store) AppendRun(ctx context.Context, id, run string, claim session.Claim, entries [][]byte) error {
	entries, size, err := record.Entries(id, run, entries)
	if err != nil {
		return err
	}
	if _, err := leaseOf(claim, 0); err != nil {
		return err
	}
	err = s.tx(ctx, func(tx *sql.Tx) error {
		var first int
		now := time.Now().UnixNano()
		lease, _ := leaseOf(claim, now)
		err := s.stmt(ctx, tx, appendJournal).QueryRowContext(ctx, now, len(entries), id, run, size, claim.Owner, lease).Scan(&first)
		if errors.Is(err, sql.ErrNoRows) {
			return refusal(ctx, tx, id, run)
		}
		if err != nil {
			return err
		}
		return s.insertSeq(ctx, tx, insertEntry, id, first, entries)
	})
	if err != nil {
		return fmt.Errorf("sqlitestore: appending to run %q on %q: %w", run, id, err)
	}
	return nil
}

// EndRun implements [session.Journaler]: one transaction deletes the
// journal and appends the contents as Append does.
func (s *Store) EndRun(ctx context.Context, id, run string, claim session.Claim, contents []*genai.Content) error {
	encoded, err := record.Encode(id, contents)
	if err == nil {
		err = record.CheckRun(run)
	}
	if err == nil {
		_, err = leaseOf(claim, 0)
	}
	if err != nil {
		return err
	}
	err = s.tx(ctx, func(tx *sql.Tx) error {
		res, err := s.stmt(ctx, tx, deleteJournal).ExecContext(ctx, id, run, claim.Owner)
		if err != nil {
			return err
		}
		switch n, err := res.RowsAffected(); {
		case err != nil:
			return err
		case n == 0:
			return refusal(ctx, tx, id, run)
		}
		if _, err := s.stmt(ctx, tx, deleteEntries).ExecContext(ctx, id); err != nil {
			return err
		}
		if len(encoded) == 0 {
			return nil
		}
		return s.appendTx(ctx, tx, id, encoded)
	})
	if err != nil {
		return fmt.Errorf("sqlitestore: ending run %q on %q: %w", run, id, err)
	}
	return nil
}

// LoadRun implements [session.Journaler]. One statement reads one
// snapshot: a write to the journal in progress is all there or not at
// all.
func (s *Store) LoadRun(ctx context.Context, id string) (session.Journal, error) {
	if err := record.CheckID(id); err != nil {
		return session.Journal{}, err
	}
	rows, err := s.stmts[loadJournal].QueryContext(ctx, id)
	if err != nil {
		return session.Journal{}, fmt.Errorf("sqlitestore: loading the run on %q: %w", id, err)
	}
	defer rows.Close()
	j := session.Journal{ID: id}
	found := false
	for rows.Next() {
		var started, updated, lease int64
		var seq sql.NullInt64
		var entry []byte
		if err := rows.Scan(&j.Run, &started, &updated, &j.Owner, &lease, &j.Bytes, &seq, &entry); err != nil {
			return session.Journal{}, fmt.Errorf("sqlitestore: loading the run on %q: %w", id, err)
		}
		found = true
		j.Started, j.Updated, j.Lease = time.Unix(0, started), time.Unix(0, updated), leaseTime(lease)
		if seq.Valid { // else the journal has no entries
			j.Entries = append(j.Entries, entry)
		}
	}
	if err := rows.Err(); err != nil {
		return session.Journal{}, fmt.Errorf("sqlitestore: loading the run on %q: %w", id, err)
	}
	if !found {
		return session.Journal{}, fmt.Errorf("sqlitestore: loading the run on %q: %w", id, session.ErrNoRun)
	}
	j.Len = len(j.Entries)
	j.Held = s.held(j.Owner, j.Lease, time.Now(), nil)
	return j, nil
}

// listRuns is ListRuns' query: the range of the journals' primary key
// that the prefix spans, sorted, as listPage is for conversations.
const listRuns = `SELECT id, run, length, bytes, started, updated, owner, lease FROM journals
	WHERE id >= ?1 AND id < ?2 AND (?3 = 0 OR updated > ?4 OR (updated = ?4 AND id > ?5))
	ORDER BY updated, id LIMIT ?6`

// ListRuns implements [session.Journaler]: one query, on the range of
// the journals' ids that the prefix spans.
func (s *Store) ListRuns(ctx context.Context, opts session.ListOptions) (session.JournalPage, error) {
	args, n, err := pageArgs(opts)
	if err != nil {
		return session.JournalPage{}, fmt.Errorf("sqlitestore: listing runs: %w", err)
	}
	rows, err := s.db.QueryContext(ctx, listRuns, args...)
	if err != nil {
		return session.JournalPage{}, fmt.Errorf("sqlitestore: listing runs: %w", err)
	}
	defer rows.Close()
	var p session.JournalPage
	for rows.Next() {
		var j session.Journal
		var started, updated, lease int64
		if err := rows.Scan(&j.ID, &j.Run, &j.Len, &j.Bytes, &started, &updated, &j.Owner, &lease); err != nil {
			return session.JournalPage{}, fmt.Errorf("sqlitestore: listing runs: %w", err)
		}
		j.Started, j.Updated, j.Lease = time.Unix(0, started), time.Unix(0, updated), leaseTime(lease)
		p.Journals = append(p.Journals, j)
	}
	if err := rows.Err(); err != nil {
		return session.JournalPage{}, fmt.Errorf("sqlitestore: listing runs: %w", err)
	}
	if len(p.Journals) > n {
		p.Journals = p.Journals[:n]
		p.Next = record.Cursor(p.Journals[n-1].Updated, p.Journals[n-1].ID)
	}
	now, alive := time.Now(), map[string]bool{}
	for i := range p.Journals {
		j := &p.Journals[i]
		j.Held = s.held(j.Owner, j.Lease, now, alive)
	}
	return p, nil
}

// leaseTime returns the time of a journal's lease column: the zero time
// for a journal never claimed.
func leaseTime(lease int64) time.Time {
	if lease == 0 {
		return time.Time{}
	}
	return time.Unix(0, lease)
}

// held reports whether a claim of owner until lease lasts at now: its
// lease has not passed, or, for one of zero lease, its owner's life goes
// on (the owner's lock file is locked). alive, when not nil, keeps what
// the lock files said for the owners met, so that a listing looks at
// each once. An owner whose life cannot be checked is taken as alive.
func (s *Store) held(owner string, lease, now time.Time, alive map[string]bool) bool {
	switch {
	case owner == "":
		return false
	case !lease.IsZero():
		return lease.After(now)
	}
	if a, ok := alive[owner]; ok {
		return a
	}
	a, err := s.lives.alive(owner, false)
	a = a || err != nil
	if alive != nil {
		alive[owner] = a
	}
	return a
}

// ClaimRun implements [session.Journaler], on this machine's clock (the
// processes that share a SQLite file share a machine). It is one
// transaction, which holds the file's write lock from its start: it
// reads the journal's claim, looks, for a claim of zero lease, at
// whether its owner lives (its lock file), and takes the journal if the
// claim does not last; another process's claim waits for it.
func (s *Store) ClaimRun(ctx context.Context, id, run string, claim session.Claim) error {
	if err := record.CheckClaim(id, run, claim.Owner); err != nil {
		return err
	}
	if _, err := leaseOf(claim, 0); err != nil {
		return err
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var holder string
		var until int64
		switch err := tx.QueryRowContext(ctx, claimedBy, id, run).Scan(&holder, &until); {
		case errors.Is(err, sql.ErrNoRows):
			return session.ErrNoRun
		case err != nil:
			return err
		}
		now := time.Now().UnixNano()
		if holder != "" && holder != claim.Owner {
			switch {
			case until > now:
				return fmt.Errorf("%q holds it until %v: %w", holder, time.Unix(0, until), session.ErrClaimed)
			case until == 0:
				alive, err := s.lives.alive(holder, true)
				if err != nil {
					return fmt.Errorf("looking at whether %q lives: %w", holder, err)
				}
				if alive {
					return fmt.Errorf("%q holds it for as long as it lives: %w", holder, session.ErrClaimed)
				}
			}
		}
		lease, _ := leaseOf(claim, now)
		_, err := tx.ExecContext(ctx, setClaim, id, run, claim.Owner, lease)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlitestore: claiming run %q on %q: %w", run, id, err)
	}
	return nil
}

// ReleaseRun implements [session.Journaler]. It is one transaction.
func (s *Store) ReleaseRun(ctx context.Context, id, run, owner string) error {
	if err := record.CheckClaim(id, run, owner); err != nil {
		return err
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE journals SET owner = '', lease = 0 WHERE id = ?1 AND run = ?2 AND owner IN (?3, '')", id, run, owner)
		if err != nil {
			return err
		}
		switch n, err := res.RowsAffected(); {
		case err != nil:
			return err
		case n == 0:
			return refusal(ctx, tx, id, run)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlitestore: releasing run %q on %q: %w", run, id, err)
	}
	return nil
}
