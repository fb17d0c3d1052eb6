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

// A journal's claim is its owner and lease columns: owner '' is no
// claim; a NULL lease with an owner is a claim that lasts as long as the
// owner's life (live.go); otherwise the lease is when the claim ends.

// leaseSQL returns the lease column of the claim of the owner and the
// microseconds of lease that the parameters name, made now: NULL for no
// claim and for one of zero lease.
func leaseSQL(owner, micros string) string {
	return "CASE WHEN " + owner + "::text <> '' AND " + micros + "::bigint > 0 THEN clock_timestamp() + " + micros + "::bigint * interval '1 microsecond' END"
}

// beginRunSQL creates the journal $1 of run $2 holding the entries $4
// (their number $3, their size $5), claimed by $6 for $7 microseconds
// (see leaseSQL), in one statement. The primary key lets one journal in
// per conversation: against a journal being created or deleted by
// another transaction, the insert waits for it to end. It returns whether
// the journal was created, and the transaction's id.
var beginRunSQL = `WITH journal AS (
	INSERT INTO toolnexus_journals (id, run, started, updated, length, bytes, owner, lease)
	SELECT $1, $2, now, now, $3, $5, $6, ` + leaseSQL("$6", "$7") + ` FROM (SELECT clock_timestamp() AS now) AS t
	ON CONFLICT (id) DO NOTHING
	RETURNING id
), entries AS (
	INSERT INTO toolnexus_journal_entries (conversation, seq, entry)
	SELECT journal.id, t.n - 1, t.entry
	FROM journal, unnest($4::bytea[]) WITH ORDINALITY AS t(entry, n)
)
SELECT count(*) = 1, pg_current_xact_id()::text FROM journal`

// appendRunSQL appends the entries $4 (their number $3, their size $5)
// to the journal $1 of run $2 in one statement, if $6 owns its claim (the
// fence), renewing the claim for $7 microseconds: it updates the
// journal's row, which locks it until the transaction ends (an AppendRun
// or EndRun of the journal waits for this one, then sees its claim as
// this one left it), and numbers the entries from the length it found.
// It returns whether the write was made, and the transaction's id.
var appendRunSQL = `WITH journal AS (
	UPDATE toolnexus_journals AS j SET
		updated = greatest(clock_timestamp(), j.updated + interval '1 microsecond'),
		length = j.length + $3,
		bytes = j.bytes + $5,
		lease = ` + leaseSQL("$6", "$7") + `
	WHERE j.id = $1 AND j.run = $2 AND j.owner = $6
	RETURNING j.length - $3 AS first
), entries AS (
	INSERT INTO toolnexus_journal_entries (conversation, seq, entry)
	SELECT $1, journal.first + t.n - 1, t.entry
	FROM journal, unnest($4::bytea[]) WITH ORDINALITY AS t(entry, n)
)
SELECT count(*) = 1, pg_current_xact_id()::text FROM journal`

// BeginRun implements [session.Journaler]. It is one transaction around
// one statement, and it is retried as Append is (see the package doc).
func (s *Store) BeginRun(ctx context.Context, id, run string, claim session.Claim, entries [][]byte) error {
	entries, size, err := record.Entries(id, run, entries)
	if err == nil {
		err = checkClaim(claim)
	}
	if err != nil {
		return err
	}
	err = retry(ctx, func() (bool, error) {
		return s.writeOnce(ctx, func(tx pgx.Tx) (string, error) {
			xid, err := journalWrite(ctx, tx, beginRunSQL, id, run, len(entries), entries, size, claim.Owner, claim.Lease.Microseconds())
			if err == errRefused {
				err = session.ErrRunInProgress
			}
			return xid, err
		})
	})
	if err != nil {
		return fmt.Errorf("pgstore: beginning run %q on %q: %w", run, id, err)
	}
	return nil
}

// AppendRun implements [session.Journaler]. It is one transaction around
// one statement, and it is retried as Append is.
func (s *Store) AppendRun(ctx context.Context, id, run string, claim session.Claim, entries [][]byte) error {
	entries, size, err := record.Entries(id, run, entries)
	if err == nil {
		err = checkClaim(claim)
	}
	if err != nil {
		return err
	}
	err = retry(ctx, func() (bool, error) {
		return s.writeOnce(ctx, func(tx pgx.Tx) (string, error) {
			xid, err := journalWrite(ctx, tx, appendRunSQL, id, run, len(entries), entries, size, claim.Owner, claim.Lease.Microseconds())
			if err == errRefused {
				err = refusal(ctx, tx, id, run)
			}
			return xid, err
		})
	})
	if err != nil {
		return fmt.Errorf("pgstore: appending to run %q on %q: %w", run, id, err)
	}
	return nil
}

// errRefused is journalWrite's error when its statement wrote nothing.
var errRefused = errors.New("pgstore: the write was refused")

// journalWrite runs sql, beginRunSQL or appendRunSQL, in tx: its
// transaction's id, or errRefused when the statement wrote nothing.
func journalWrite(ctx context.Context, tx pgx.Tx, sql string, args ...any) (string, error) {
	var wrote bool
	var xid string
	if err := tx.QueryRow(ctx, sql, args...).Scan(&wrote, &xid); err != nil {
		return "", err
	}
	if !wrote {
		return "", errRefused
	}
	return xid, nil
}

// refusal returns why a write of the journal id of run under a claim
// wrote nothing, read in tx: ErrNoRun, or ErrClaimed naming who claims
// it.
func refusal(ctx context.Context, tx pgx.Tx, id, run string) error {
	var holder string
	var until *time.Time
	err := tx.QueryRow(ctx, "SELECT owner, lease FROM toolnexus_journals WHERE id = $1 AND run = $2", id, run).Scan(&holder, &until)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return session.ErrNoRun
	case err != nil:
		return err
	case holder == "":
		return fmt.Errorf("nobody claims it: %w", session.ErrClaimed)
	case until == nil:
		return fmt.Errorf("%q holds it for as long as it lives: %w", holder, session.ErrClaimed)
	}
	return fmt.Errorf("%q holds it until %v: %w", holder, *until, session.ErrClaimed)
}

// checkClaim checks a claim a write names.
func checkClaim(c session.Claim) error {
	if err := record.CheckOwner(c.Owner); err != nil {
		return err
	}
	return record.CheckLease(c.Lease)
}

// EndRun implements [session.Journaler]. It is one transaction: it
// deletes the journal's row (waiting for a write to the journal in
// progress, and making an AppendRun or EndRun that waits for it find no
// journal), then, in a second statement that sees every entry committed
// meanwhile, the journal's entries, and appends the contents with
// Append's statement. It is retried as Append is: an EndRun whose commit
// went unanswered asks the server whether it took effect, and is never
// applied twice.
func (s *Store) EndRun(ctx context.Context, id, run string, claim session.Claim, contents []*genai.Content) error {
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
	var size int64
	for _, b := range encoded {
		size += int64(len(b))
	}
	err = retry(ctx, func() (bool, error) {
		return s.writeOnce(ctx, func(tx pgx.Tx) (string, error) {
			var xid string
			err := tx.QueryRow(ctx, "DELETE FROM toolnexus_journals WHERE id = $1 AND run = $2 AND owner = $3 RETURNING pg_current_xact_id()::text",
				id, run, claim.Owner).Scan(&xid)
			switch {
			case errors.Is(err, pgx.ErrNoRows):
				return "", refusal(ctx, tx, id, run)
			case err != nil:
				return "", err
			}
			batch := &pgx.Batch{}
			batch.Queue("DELETE FROM toolnexus_journal_entries WHERE conversation = $1", id)
			if len(encoded) > 0 {
				batch.Queue(appendSQL, id, len(encoded), size, encoded)
			}
			return xid, tx.SendBatch(ctx, batch).Close()
		})
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
		err := s.pool.QueryRow(ctx, `SELECT run, started, updated, owner, lease, `+heldSQL+`, bytes,
			ARRAY(SELECT entry FROM toolnexus_journal_entries WHERE conversation = $1 ORDER BY seq)
			FROM toolnexus_journals WHERE id = $1`, id).Scan(&j.Run, &j.Started, &j.Updated, &j.Owner, &lease, &j.Held, &j.Bytes, &j.Entries)
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
	sql, args, err := listQuery(opts, "SELECT id, run, length, bytes, started, updated, owner, lease, "+heldSQL+" FROM toolnexus_journals", true)
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
				err := row.Scan(&j.ID, &j.Run, &j.Len, &j.Bytes, &j.Started, &j.Updated, &j.Owner, &lease, &j.Held)
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

// heldSQL says whether the claim of a row of toolnexus_journals lasts:
// its lease has not passed, or, for a claim of zero lease, its owner's
// life goes on (livesSQL).
var heldSQL = `CASE WHEN owner = '' THEN false WHEN lease IS NOT NULL THEN lease > clock_timestamp() ELSE ` + livesSQL + ` END`

// claimRunSQL claims the journal $1 of run $2 for $3 for $4
// microseconds (see leaseSQL), if nobody else's claim lasts, on the
// server's clock. Against a claim being taken by another transaction,
// the update waits for it to end and looks at the row again: of claims
// that race, one takes the journal. It returns the transaction's id.
var claimRunSQL = `UPDATE toolnexus_journals SET owner = $3, lease = ` + leaseSQL("$3", "$4") + `
	WHERE id = $1 AND run = $2 AND (owner = $3 OR NOT (` + heldSQL + `))
	RETURNING pg_current_xact_id()::text`

// ClaimRun implements [session.Journaler]. It is one transaction, retried
// as Append is: a claim taken twice by its owner is the same claim.
func (s *Store) ClaimRun(ctx context.Context, id, run string, claim session.Claim) error {
	if err := record.CheckClaim(id, run, claim.Owner); err != nil {
		return err
	}
	if err := record.CheckLease(claim.Lease); err != nil {
		return err
	}
	err := retry(ctx, func() (bool, error) {
		return s.writeOnce(ctx, func(tx pgx.Tx) (string, error) {
			var xid string
			err := tx.QueryRow(ctx, claimRunSQL, id, run, claim.Owner, claim.Lease.Microseconds()).Scan(&xid)
			if errors.Is(err, pgx.ErrNoRows) {
				return "", refusal(ctx, tx, id, run)
			}
			return xid, err
		})
	})
	if err != nil {
		return fmt.Errorf("pgstore: claiming run %q on %q: %w", run, id, err)
	}
	return nil
}

// ReleaseRun implements [session.Journaler]. It is one transaction,
// retried as Append is: a release made twice is one.
func (s *Store) ReleaseRun(ctx context.Context, id, run, owner string) error {
	if err := record.CheckClaim(id, run, owner); err != nil {
		return err
	}
	err := retry(ctx, func() (bool, error) {
		return s.writeOnce(ctx, func(tx pgx.Tx) (string, error) {
			var xid string
			err := tx.QueryRow(ctx, `UPDATE toolnexus_journals SET owner = '', lease = NULL
				WHERE id = $1 AND run = $2 AND owner IN ($3, '') RETURNING pg_current_xact_id()::text`, id, run, owner).Scan(&xid)
			if errors.Is(err, pgx.ErrNoRows) {
				return "", refusal(ctx, tx, id, run)
			}
			return xid, err
		})
	})
	if err != nil {
		return fmt.Errorf("pgstore: releasing run %q on %q: %w", run, id, err)
	}
	return nil
}
