package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/session"
	"google.golang.org/genai"
)

// The listings and the usage read the range of the ids' index that the
// prefix spans: SQLite's plan searches the primary key's index, and scans
// no table.
func TestListingUsesTheIndex(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, q := range []struct {
		name, query, table string
		args               []any
	}{
		{"listPage", listPage, "conversations", []any{"agentserver/alice/", prefixEnd("agentserver/alice/"), true, 5, "x", 101}},
		{"usage", usage, "conversations", []any{"agentserver/alice/", prefixEnd("agentserver/alice/")}},
		{"listRuns", listRuns, "journals", []any{"agentserver/alice/", prefixEnd("agentserver/alice/"), true, 5, "x", 101}},
	} {
		rows, err := s.db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q.query, q.args...)
		if err != nil {
			t.Fatalf("%s: %v", q.name, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		joined := strings.Join(plan, "; ")
		if !strings.Contains(joined, "SEARCH "+q.table+" USING") || !strings.Contains(joined, "(id>? AND id<?)") || strings.Contains(joined, "SCAN "+q.table) {
			t.Errorf("%s's plan = %q; want a search of the ids' index range, no scan", q.name, joined)
		}
	}
}

// A file of schema version 1 (no bytes column) is migrated when it is
// opened: the sizes of its conversations are computed from their contents,
// and later appends add to them.
func TestMigrateFromVersion1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v1.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := json.Marshal(genai.NewContentFromText("hello", genai.RoleUser))
	second, _ := json.Marshal(genai.NewContentFromText("hi there", genai.RoleModel))
	_, err = db.Exec(migrations[1]+`
		INSERT INTO conversations VALUES ('agentserver/alice/t1', 1, 2, 2), ('agentserver/bob/t1', 1, 3, 1);
		INSERT INTO contents VALUES ('agentserver/alice/t1', 0, ?1), ('agentserver/alice/t1', 1, ?2), ('agentserver/bob/t1', 0, ?1);
		PRAGMA user_version = 1;`, first, second)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open of a version 1 file = %v", err)
	}
	defer s.Close()
	want := int64(len(first) + len(second))
	if u, err := s.Usage(ctx, "agentserver/alice/"); err != nil || u != (session.Usage{Conversations: 1, Bytes: want}) {
		t.Errorf("Usage(alice) after the migration = %+v, %v; want 1 conversation of %d bytes", u, err, want)
	}
	if err := s.Append(ctx, "agentserver/alice/t1", []*genai.Content{genai.NewContentFromText("more", genai.RoleUser)}); err != nil {
		t.Fatal(err)
	}
	more, _ := json.Marshal(genai.NewContentFromText("more", genai.RoleUser))
	p, err := s.ListPage(ctx, session.ListOptions{Prefix: "agentserver/alice/"})
	if err != nil || len(p.Infos) != 1 || p.Infos[0].Bytes != want+int64(len(more)) || p.Infos[0].Len != 3 {
		t.Errorf("ListPage(alice) = %+v, %v; want t1 of 3 contents, %d bytes", p, err, want+int64(len(more)))
	}
	var version int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil || version != schemaVersion {
		t.Errorf("user_version = %d, %v; want %d", version, err, schemaVersion)
	}
}

// A file of schema version 2 (no journals) is migrated when it is opened:
// its conversations are kept, and runs begin and end on them.
func TestMigrateFromVersion2(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v2.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := json.Marshal(genai.NewContentFromText("hello", genai.RoleUser))
	_, err = db.Exec(migrations[1]+migrations[2]+`
		INSERT INTO conversations VALUES ('c', 1, 2, 1, ?2);
		INSERT INTO contents VALUES ('c', 0, ?1);
		PRAGMA user_version = 2;`, first, len(first))
	db.Close()
	if err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open of a version 2 file = %v", err)
	}
	defer s.Close()
	if err := s.BeginRun(ctx, "c", "run", session.Claim{}, [][]byte{[]byte("entry")}); err != nil {
		t.Fatalf("BeginRun after the migration = %v", err)
	}
	if err := s.EndRun(ctx, "c", "run", session.Claim{}, []*genai.Content{genai.NewContentFromText("hi", genai.RoleModel)}); err != nil {
		t.Fatalf("EndRun after the migration = %v", err)
	}
	if got, err := s.Load(ctx, "c"); err != nil || len(got) != 2 || got[0].Parts[0].Text != "hello" {
		t.Errorf("Load after the migration and a run = %d contents, %v; want the stored one and the run's", len(got), err)
	}
	var version int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil || version != schemaVersion {
		t.Errorf("user_version = %d, %v; want %d", version, err, schemaVersion)
	}
}

// A version 3 file's journals get their sizes, from their entries, and
// no claim.
func TestMigrateFromVersion3(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v3.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec(migrations[1] + migrations[2] + migrations[3] + `
		INSERT INTO journals VALUES ('c', 'run', 1, 2, 2);
		INSERT INTO journal_entries VALUES ('c', 0, x'0102030405'), ('c', 1, x'060708');
		PRAGMA user_version = 3;`)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open of a version 3 file = %v", err)
	}
	defer s.Close()
	j, err := s.LoadRun(ctx, "c")
	if err != nil || j.Bytes != 8 || j.Len != 2 || j.Owner != "" || !j.Lease.IsZero() {
		t.Errorf("LoadRun after the migration = %+v, %v; want 2 entries of 8 bytes, no claim", j, err)
	}
	if err := s.AppendRun(ctx, "c", "run", session.Claim{}, [][]byte{[]byte("ab")}); err != nil {
		t.Fatal(err)
	}
	if p, err := s.ListRuns(ctx, session.ListOptions{}); err != nil || len(p.Journals) != 1 || p.Journals[0].Bytes != 10 {
		t.Errorf("ListRuns after an AppendRun = %+v, %v; want the journal, of 10 bytes", p, err)
	}
	if err := s.ClaimRun(ctx, "c", "run", session.Claim{Owner: "me", Lease: time.Minute}); err != nil {
		t.Errorf("ClaimRun after the migration = %v", err)
	}
}

// A version 4 file's claims: one released (its lease passed) is no
// claim any more, one whose lease lasts is kept (version 5 reads a lease
// of 0 with an owner as a claim for the owner's life).
func TestMigrateFromVersion4(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v4.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour).UnixNano()
	_, err = db.Exec(migrations[1]+migrations[2]+migrations[3]+migrations[4]+`
		INSERT INTO journals VALUES ('released', 'run', 1, 2, 0, 'gone', 5, 0);
		INSERT INTO journals VALUES ('held', 'run', 1, 3, 0, 'alive', ?, 0);
		PRAGMA user_version = 4;`, later)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open of a version 4 file = %v", err)
	}
	defer s.Close()
	if j, err := s.LoadRun(ctx, "released"); err != nil || j.Owner != "" || !j.Lease.IsZero() || j.Held {
		t.Errorf("LoadRun of a released claim after the migration = %+v, %v; want no claim", j, err)
	}
	if j, err := s.LoadRun(ctx, "held"); err != nil || j.Owner != "alive" || j.Lease.UnixNano() != later || !j.Held {
		t.Errorf("LoadRun of a claim that lasts after the migration = %+v, %v; want it kept", j, err)
	}
}
