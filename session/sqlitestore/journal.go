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
const (
	// insertEntry inserts a journal entry, for insertSeq.
	insertEntry = "INSERT INTO journal_entries (conversation, seq, entry) VALUES (?, ?, ?)"
	// beginJournal inserts a journal (?1 id, ?2 run, ?3 length, ?4 now,
	// ?5 bytes),
	// unless the conversation has one. The time of a write to a journal
	// is now, or later than every journal's last write, so that ListRuns'
	// order is the order of the writes, whatever the clocks say: the
	// statement that writes computes it (journals_by_updated finds the
	// last).
	beginJournal = `INSERT INTO journals (id, run, started, updated, length, bytes)
		SELECT ?1, ?2, t, t, ?3, ?5 FROM (SELECT max(?4, coalesce(max(updated), 0) + 1) AS t FROM journals) WHERE true
		ON CONFLICT (id) DO NOTHING`
	// appendJournal counts ?2 entries more, of ?5 bytes, in the journal
	// ?3 of run ?4, written at ?1 or later (as beginJournal), and returns
	// the first new entry's seq.
	appendJournal = `UPDATE journals SET updated = max(?1, (SELECT coalesce(max(updated), 0) + 1 FROM journals)), length = length + ?2,
		bytes = bytes + ?5
		WHERE id = ?3 AND run = ?4 RETURNING length - ?2`
	deleteJournal = "DELETE FROM journals WHERE id = ? AND run = ?"
	deleteEntries = "DELETE FROM journal_entries WHERE conversation = ?"
	// claimJournal claims the journal ?1 of run ?2 for ?3 until ?5, if
	// nobody else's claim lasts past ?4 (now).
	claimJournal = `UPDATE journals SET owner = ?3, lease = ?5
		WHERE id = ?1 AND run = ?2 AND (owner = ?3 OR lease <= ?4)`
	claimedBy   = "SELECT owner, lease FROM journals WHERE id = ? AND run = ?"
	loadJournal = `SELECT j.run, j.started, j.updated, j.owner, j.lease, j.bytes, e.seq, e.entry
		FROM journals j LEFT JOIN journal_entries e ON e.conversation = j.id
		WHERE j.id = ? ORDER BY e.seq`
)

// BeginRun implements [session.Journaler]. It is one transaction; the
// journals' primary key, the conversation's id, lets one run in.
func (s *Store) BeginRun(ctx context.Context, id, run string, entries [][]byte) error {
	entries, size, err := record.Entries(id, run, entries)
	if err != nil {
		return err
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		res, err := s.w.stmt(tx, beginJournal).ExecContext(background, id, run, len(entries), time.Now().UnixNano(), size)
		if err != nil {
			return err
		}
		switch n, err := res.RowsAffected(); {
		case err != nil:
			return err
		case n == 0:
			return session.ErrRunInProgress
		}
		return s.insertSeq(tx, insertEntry, id, 0, entries)
	})
	if err != nil {
		return fmt.Errorf("sqlitestore: beginning run %q on %q: %w", run, id, err)
	}
	return nil
}

// AppendRun implements [session.Journaler]. It is one transaction.
func (s *Store) AppendRun(ctx context.Context, id, run string, entries [][]byte) error {
	entries, size, err := record.Entries(id, run, entries)
	if err != nil {
		return err
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		var first int
		err := s.w.stmt(tx, appendJournal).QueryRowContext(background, time.Now().UnixNano(), len(entries), id, run, size).Scan(&first)
		if errors.Is(err, sql.ErrNoRows) {
			return session.ErrNoRun
		}
		if err != nil {
			return err
		}
		return s.insertSeq(tx, insertEntry, id, first, entries)
	})
	if err != nil {
		return fmt.Errorf("sqlitestore: appending to run %q on %q: %w", run, id, err)
	}
	return nil
}

// EndRun implements [session.Journaler]: one transaction deletes the
// journal and appends the contents as Append does.
func (s *Store) EndRun(ctx context.Context, id, run string, contents []*genai.Content) error {
	encoded, err := record.Encode(id, contents)
	if err == nil {
		err = record.CheckRun(run)
	}
	if err != nil {
		return err
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		res, err := s.w.stmt(tx, deleteJournal).ExecContext(background, id, run)
		if err != nil {
			return err
		}
		switch n, err := res.RowsAffected(); {
		case err != nil:
			return err
		case n == 0:
			return session.ErrNoRun
		}
		if _, err := s.w.stmt(tx, deleteEntries).ExecContext(background, id); err != nil {
			return err
		}
		if len(encoded) == 0 {
			return nil
		}
		return s.appendTx(tx, id, encoded)
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

// ClaimRun implements [session.Journaler], on this machine's clock (the
// processes that share a SQLite file share a machine). It is one
// transaction: the update claims the journal only if nobody else's claim
// lasts, and when it claims nothing, the journal's row says why.
func (s *Store) ClaimRun(ctx context.Context, id, run, owner string, lease time.Duration) error {
	if err := record.CheckClaim(id, run, owner); err != nil {
		return err
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		now := time.Now().UnixNano()
		res, err := s.w.stmt(tx, claimJournal).ExecContext(background, id, run, owner, now, now+max(int64(lease), 0))
		if err != nil {
			return err
		}
		switch n, err := res.RowsAffected(); {
		case err != nil:
			return err
		case n == 1:
			return nil
		}
		var holder string
		var until int64
		switch err := s.w.stmt(tx, claimedBy).QueryRowContext(background, id, run).Scan(&holder, &until); {
		case errors.Is(err, sql.ErrNoRows):
			return session.ErrNoRun
		case err != nil:
			return err
		}
		return fmt.Errorf("%q holds it until %v: %w", holder, time.Unix(0, until), session.ErrClaimed)
	})
	if err != nil {
		return fmt.Errorf("sqlitestore: claiming run %q on %q: %w", run, id, err)
	}
	return nil
}
