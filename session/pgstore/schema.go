package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// SchemaVersion is the version of the tables this package writes, kept in
// the table toolnexus_schema_version.
const SchemaVersion = 4

// migrations[v] takes the tables from version v to v+1.
var migrations = []string{
	0: `
CREATE TABLE toolnexus_conversations (
	id      text COLLATE "C" PRIMARY KEY, -- byte order: a prefix is an index range
	created timestamptz NOT NULL,         -- the first append
	updated timestamptz NOT NULL,         -- the last append, later than the one before
	length  integer NOT NULL,             -- the number of contents
	bytes   bigint NOT NULL               -- the sum of their sizes
);
CREATE INDEX toolnexus_conversations_by_updated ON toolnexus_conversations (updated DESC, id);
CREATE TABLE toolnexus_contents (
	conversation text COLLATE "C" NOT NULL,
	seq          integer NOT NULL, -- from 0, in order
	content      bytea NOT NULL,   -- the content's JSON
	PRIMARY KEY (conversation, seq)
);`,
	// The journals of the runs in progress: at most one per conversation
	// (the primary key), its entries in order.
	1: `
CREATE TABLE toolnexus_journals (
	id      text COLLATE "C" PRIMARY KEY, -- the conversation's
	run     text NOT NULL,
	started timestamptz NOT NULL,         -- BeginRun
	updated timestamptz NOT NULL,         -- the last BeginRun or AppendRun, later than the one before
	length  integer NOT NULL              -- the number of entries
);
CREATE INDEX toolnexus_journals_by_updated ON toolnexus_journals (updated, id);
CREATE TABLE toolnexus_journal_entries (
	conversation text COLLATE "C" NOT NULL,
	seq          integer NOT NULL, -- from 0, in order
	entry        bytea NOT NULL,
	PRIMARY KEY (conversation, seq)
);`,
	// The claims of the journals (ClaimRun): who holds each, until when;
	// and their sizes.
	2: `
ALTER TABLE toolnexus_journals ADD COLUMN owner text NOT NULL DEFAULT '', ADD COLUMN lease timestamptz,
	ADD COLUMN bytes bigint NOT NULL DEFAULT 0; -- the sum of the entries' sizes
UPDATE toolnexus_journals AS j SET bytes = (SELECT coalesce(sum(length(entry)), 0) FROM toolnexus_journal_entries WHERE conversation = j.id);`,
	// Claims that last as long as their owner's life: an owner with a
	// NULL lease (a version 3 store read them as run out, and would take
	// them); a released claim has no owner.
	3: `
UPDATE toolnexus_journals SET owner = '', lease = NULL WHERE lease IS NULL OR lease <= clock_timestamp();
COMMENT ON COLUMN toolnexus_journals.lease IS 'when the claim ends; NULL with an owner: when the owner''s life does (see pgstore)';`,
}

// migrationLock is the key of the advisory lock that serializes
// migrations: "toolnexu" in ASCII.
const migrationLock int64 = 0x746f6f6c6e657875

// migrate brings the database's tables to SchemaVersion. When they are
// there already it only reads their version (it works on a read-only
// database); otherwise one transaction, under an advisory lock that makes
// processes opening at once take turns, creates or migrates them.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	if v, err := version(ctx, pool); err != nil || v == SchemaVersion {
		return err
	}
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrationLock); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS toolnexus_schema_version (version integer NOT NULL)"); err != nil {
			return err
		}
		v, err := version(ctx, tx)
		if err != nil || v == SchemaVersion {
			return err
		}
		for _, m := range migrations[v:] {
			if _, err := tx.Exec(ctx, m); err != nil {
				return fmt.Errorf("migrating the tables from version %d: %w", v, err)
			}
			v++
		}
		if _, err := tx.Exec(ctx, "DELETE FROM toolnexus_schema_version"); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "INSERT INTO toolnexus_schema_version (version) VALUES ($1)", SchemaVersion)
		return err
	})
}

// version returns the version of the tables: 0 if there are none. A
// version newer than this package's is an error.
func version(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) (int, error) {
	var v *int
	err := q.QueryRow(ctx, "SELECT max(version) FROM toolnexus_schema_version").Scan(&v)
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "42P01": // undefined_table
		return 0, nil
	case err != nil:
		return 0, err
	case v == nil:
		return 0, nil
	case *v > SchemaVersion:
		return 0, fmt.Errorf("the database holds the store's tables at version %d, written by a newer version of pgstore (this one writes %d)", *v, SchemaVersion)
	}
	return *v, nil
}
