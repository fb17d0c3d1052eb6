package pgstore

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/toolnexus/toolnexus-go/internal/pgtest"
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
	if err := s.BeginRun(ctx, "c", "run", [][]byte{[]byte("entry")}); err != nil {
		t.Fatalf("BeginRun after the migration = %v", err)
	}
	if err := s.EndRun(ctx, "c", "run", genai.Text("hi")); err != nil {
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
