package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/toolnexus/toolnexus-go/internal/pgtest"
	"github.com/toolnexus/toolnexus-go/session"
	"google.golang.org/genai"
)

// Tables of version 1 (no journals) are migrated when the store opens:
// the conversations are kept, and runs begin and end on them.
func TestMigrateFromVersion1(t *testing.T) {
	ctx := context.Background()
	u := pgtest.Database(t)
	pgtest.Exec(t, u, migrations[0],
		"CREATE TABLE toolnexus_schema_version (version integer NOT NULL)",
		"INSERT INTO toolnexus_schema_version VALUES (1)",
		`INSERT INTO toolnexus_conversations VALUES ('c', now(), now(), 1, 44)`,
		`INSERT INTO toolnexus_contents VALUES ('c', 0, '{"parts":[{"text":"hello"}],"role":"user"}')`)
	s, err := Open(ctx, u)
	if err != nil {
		t.Fatalf("Open of version 1 tables = %v", err)
	}
	defer s.Close()
	if err := s.BeginRun(ctx, "c", "run", session.Claim{}, [][]byte{[]byte("entry")}); err != nil {
		t.Fatalf("BeginRun after the migration = %v", err)
	}
	if err := s.EndRun(ctx, "c", "run", session.Claim{}, genai.Text("hi")); err != nil {
		t.Fatalf("EndRun after the migration = %v", err)
	}
	if got, err := s.Load(ctx, "c"); err != nil || len(got) != 2 || got[0].Parts[0].Text != "hello" {
		t.Errorf("Load after the migration and a run = %d contents, %v; want the stored one and the run's", len(got), err)
	}
	pool, err := pgxpool.New(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if v, err := version(ctx, pool); err != nil || v != SchemaVersion {
		t.Errorf("version after the migration = %d, %v; want %d", v, err, SchemaVersion)
	}
}

// Tables of version 2 (journals without claims nor sizes) are migrated:
// each journal gets its size, from its entries, and no claim.
func TestMigrateFromVersion2(t *testing.T) {
	ctx := context.Background()
	u := pgtest.Database(t)
	pgtest.Exec(t, u, migrations[0], migrations[1],
		"CREATE TABLE toolnexus_schema_version (version integer NOT NULL)",
		"INSERT INTO toolnexus_schema_version VALUES (2)",
		`INSERT INTO toolnexus_journals VALUES ('c', 'run', now(), now(), 2)`,
		`INSERT INTO toolnexus_journal_entries VALUES ('c', 0, '\x0102030405'), ('c', 1, '\x060708')`)
	s, err := Open(ctx, u)
	if err != nil {
		t.Fatalf("Open of version 2 tables = %v", err)
	}
	defer s.Close()
	j, err := s.LoadRun(ctx, "c")
	if err != nil || j.Bytes != 8 || j.Len != 2 || j.Owner != "" || !j.Lease.IsZero() {
		t.Errorf("LoadRun after the migration = %+v, %v; want 2 entries of 8 bytes, no claim", j, err)
	}
	if err := s.ClaimRun(ctx, "c", "run", session.Claim{Owner: "me", Lease: time.Minute}); err != nil {
		t.Errorf("ClaimRun after the migration = %v", err)
	}
}
