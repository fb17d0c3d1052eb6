package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/session/internal/record"
	"google.golang.org/genai"
)

// beginRunSQL creates the journal $1 of run $2 holding the entries $4
// (their number $3, their size $5) in one statement. The primary key lets
// one journal in per conversation: against a journal being created or
// deleted by another transaction, the insert waits for it to end. It
// returns whether the journal was created.
const beginRunSQL = `WITH journal AS (
	INSERT INTO toolnexus_journals (id, run, started, updated, length, bytes)
	SELECT $1, $2, now, now, $3, $5 FROM (SELECT clock_timestamp() AS now) AS t
	ON CONFLICT (id) DO NOTHING
	RETURNING id
), entries AS (
	INSERT INTO toolnexus_journal_entries (conversation, seq, entry)
	SELECT journal.id, t.n - 1, t.entry
	FROM journal, unnest($4::bytea[]) WITH ORDINALITY AS t(entry, n)
)
SELECT count(*) = 1 FROM journal`

// appendRunSQL appends the entries $4 (their number $3, their size $5) to
// the journal $1 of run $2 in one statement: it updates the journal's
// row, which locks it until the transaction ends (an AppendRun or EndRun
// of the journal waits for this one), and numbers the entries from the
// length it found. It returns whether the run's journal was there.
const appendRunSQL = `WITH journal AS (
	UPDATE toolnexus_journals AS j SET
		updated = greatest(clock_timestamp(), j.updated + interval '1 microsecond'),
		length = j.length + $3,
		bytes = j.bytes + $5
	WHERE j.id = $1 AND j.run = $2
	RETURNING j.length - $3 AS first
), entries AS (
	INSERT INTO toolnexus_journal_entries (conversation, seq, entry)
	SELECT $1, journal.first + t.n - 1, t.entry
	FROM journal, unnest($4::bytea[]) WITH ORDINALITY AS t(entry, n)
)
SELECT count(*) = 1 FROM journal`

// BeginRun implements [session.Journaler]. It is one statement, committed
// and retried as Append is (see the package doc).
func (s *Store) BeginRun(ctx context.Context, id, run string, entries [][]byte) error {
	entries, size, err := record.Entries(id, run, entries)
	if err != nil {
		return err
	}
	err = s.commits.do(ctx, &write{
		queue: func(b *pgx.Batch) { b.Queue(beginRunSQL, id, run, len(entries), entries, size) },
		read:  wrote(session.ErrRunInProgress),
	})
	if err != nil {
		return fmt.Errorf("pgstore: beginning run %q on %q: %w", run, id, err)
	}
	return nil
}

// AppendRun implements [session.Journaler]. It is one statement,
// committed and retried as Append is.
func (s *Store) AppendRun(ctx context.Context, id, run string, entries [][]byte) error {
	entries, size, err := record.Entries(id, run, entries)
	if err != nil {
		return err
	}
	err = s.commits.do(ctx, &write{
		queue: func(b *pgx.Batch) { b.Queue(appendRunSQL, id, run, len(entries), entries, size) },
		read:  wrote(session.ErrNoRun),
	})
	if err != nil {
		return fmt.Errorf("pgstore: appending to run %q on %q: %w", run, id, err)
	}
	return nil
}

// wrote returns the reader of a statement that answers whether it wrote:
// refusal when it did not.
func wrote(refusal error) func(pgx.BatchResults) error {
	return func(br pgx.BatchResults) error {
		var ok bool
		if err := br.QueryRow().Scan(&ok); err != nil {
			return err
		}
		if !ok {
			return refusal
		}
		return nil
	}
}

// endRunSQL ends the run $5 on the conversation $1 in one statement: it
// deletes the journal's row (waiting for a write to the journal in
// progress, and making an AppendRun or EndRun that waits for it find no
// journal) and, if it did, appends the contents $4 (their number $2, their
// size $3) as appendSQL does. It returns whether it deleted the journal.
var endRunSQL = "WITH journal AS (DELETE FROM toolnexus_journals WHERE id = $1 AND run = $5 RETURNING id),\n" +
	"conversation AS (" + fmt.Sprintf(upsertConversation, "SELECT id, clock_timestamp(), clock_timestamp(), $2, $3 FROM journal WHERE $2 > 0") + "),\n" +
	"contents AS (" + insertContents + ")\n" +
	"SELECT count(*) = 1 FROM journal"

// endEntriesSQL deletes the entries of the conversation $1 once it has no
// journal: a statement of its own after endRunSQL's, so that it sees the
// entries committed while endRunSQL waited for the journal's row. When
// endRunSQL deleted nothing because another run's journal is there, it
// deletes nothing either.
const endEntriesSQL = `DELETE FROM toolnexus_journal_entries
	WHERE conversation = $1 AND NOT EXISTS (SELECT FROM toolnexus_journals WHERE id = $1)`

// EndRun implements [session.Journaler]. It is two statements, endRunSQL
// and endEntriesSQL, committed and retried as Append is: an EndRun whose
// commit went unanswered asks the server whether it took effect, and is
// never applied twice.
func (s *Store) EndRun(ctx context.Context, id, run string, contents []*genai.Content) error {
	encoded, err := record.Encode(id, contents)
	if err == nil {
		err = record.CheckRun(run)
	}
	if err != nil {
		return err
	}
	size := sizeOf(encoded)
	ended := wrote(session.ErrNoRun)
	err = s.commits.do(ctx, &write{
		queue: func(b *pgx.Batch) {
			b.Queue(endRunSQL, id, len(encoded), size, encoded, run)
			b.Queue(endEntriesSQL, id)
		},
		read: func(br pgx.BatchResults) error {
			err := ended(br)
			if _, derr := br.Exec(); derr != nil {
				return derr
			}
			return err
		},
	})
	if err != nil {
		return fmt.Errorf("pgstore: ending run %q on %q: %w", run, id, err)
	}
	return nil
}

// LoadRun implements [session.Journaler]. One statement reads one
// snapshot: a write to the journal in progress is all there or not at
// all. It is retried as reads are.
func (s *Store) LoadRun(ctx context.Context, id string) (session.Journal, error) {
	if err := record.CheckID(id); err != nil {
		return session.Journal{}, err
	}
	j := session.Journal{ID: id}
	err := retry(ctx, func() (bool, error) {
		var lease *time.Time
		err := s.pool.QueryRow(ctx, `SELECT run, started, updated, owner, lease, bytes,
			ARRAY(SELECT entry FROM toolnexus_journal_entries WHERE conversation = $1 ORDER BY seq)
			FROM toolnexus_journals WHERE id = $1`, id).Scan(&j.Run, &j.Started, &j.Updated, &j.Owner, &lease, &j.Bytes, &j.Entries)
		if lease != nil {
			j.Lease = *lease
		}
		if errors.Is(err, pgx.ErrNoRows) {
			return false, session.ErrNoRun // the answer
		}
		return true, err
	})
	if err != nil {
		return session.Journal{}, fmt.Errorf("pgstore: loading the run on %q: %w", id, err)
	}
	if j.Len = len(j.Entries); j.Len == 0 {
		j.Entries = nil
	}
	return j, nil
}

// ListRuns implements [session.Journaler]: an index range of the
// journals' primary key, sorted, as ListPage's of the conversations.
func (s *Store) ListRuns(ctx context.Context, opts session.ListOptions) (session.JournalPage, error) {
	sql, args, err := listQuery(opts, "SELECT id, run, length, bytes, started, updated, owner, lease FROM toolnexus_journals", true)
	if err != nil {
		return session.JournalPage{}, fmt.Errorf("pgstore: listing runs: %w", err)
	}
	var journals []session.Journal
	err = retry(ctx, func() (bool, error) {
		rows, err := s.pool.Query(ctx, sql, args...)
		if err == nil {
			journals, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (session.Journal, error) {
				var j session.Journal
				var lease *time.Time
				err := row.Scan(&j.ID, &j.Run, &j.Len, &j.Bytes, &j.Started, &j.Updated, &j.Owner, &lease)
				if lease != nil {
					j.Lease = *lease
				}
				return j, err
			})
		}
		return true, err
	})
	if err != nil {
		return session.JournalPage{}, fmt.Errorf("pgstore: listing runs: %w", err)
	}
	var page session.JournalPage
	if limit := pageSize(opts.Limit); len(journals) > limit {
		journals = journals[:limit]
		page.Next = cursor(journals[limit-1].Updated, journals[limit-1].ID)
	}
	page.Journals = journals
	return page, nil
}

// claimRunSQL claims the journal $1 of run $2 for $3 for $4
// microseconds, if nobody else's claim lasts, on the server's clock.
// Against a claim being taken by another transaction, the update waits
// for it to end and looks at the row again: of claims that race, one
// takes the journal. claimedSQL, a statement of its own after it, reads
// the claim that holds the journal when the update took nothing.
const (
	claimRunSQL = `UPDATE toolnexus_journals SET owner = $3, lease = clock_timestamp() + $4 * interval '1 microsecond'
	WHERE id = $1 AND run = $2 AND (owner = $3 OR lease IS NULL OR lease <= clock_timestamp())`
	claimedSQL = "SELECT owner, lease FROM toolnexus_journals WHERE id = $1 AND run = $2"
)

// ClaimRun implements [session.Journaler]. It is two statements,
// committed and retried as Append is: a claim taken twice by its owner is
// the same claim.
func (s *Store) ClaimRun(ctx context.Context, id, run, owner string, lease time.Duration) error {
	if err := record.CheckClaim(id, run, owner); err != nil {
		return err
	}
	err := s.commits.do(ctx, &write{
		queue: func(b *pgx.Batch) {
			b.Queue(claimRunSQL, id, run, owner, max(lease, 0).Microseconds())
			b.Queue(claimedSQL, id, run)
		},
		read: func(br pgx.BatchResults) error {
			tag, err := br.Exec()
			if err != nil {
				return err
			}
			var holder string
			var until time.Time
			err = br.QueryRow().Scan(&holder, &until)
			switch {
			case tag.RowsAffected() == 1:
				return nil
			case errors.Is(err, pgx.ErrNoRows):
				return session.ErrNoRun
			case err != nil:
				return err
			}
			return fmt.Errorf("%q holds it until %v: %w", holder, until, session.ErrClaimed)
		},
	})
	if err != nil {
		return fmt.Errorf("pgstore: claiming run %q on %q: %w", run, id, err)
	}
	return nil
}
