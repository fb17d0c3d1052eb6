package pgstore

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/toolnexus/toolnexus-go/internal/pgtest"
	"github.com/toolnexus/toolnexus-go/session"
)

func TestSuccessor(t *testing.T) {
	for _, tc := range []struct {
		prefix, want string
		ok           bool
	}{
		{"a", "b", true},
		{"alice/", "alice0", true},
		{"é", "ê", true},
		{"x\uD7FF", "x\uE000", true},
		{"x\U0010FFFF", "y", true},
		{"\U0010FFFF\U0010FFFF", "", false},
	} {
		got, ok := successor(tc.prefix)
		if got != tc.want || ok != tc.ok || (ok && !utf8.ValidString(got)) {
			t.Errorf("successor(%q) = %q, %v; want %q, %v", tc.prefix, got, ok, tc.want, tc.ok)
		}
	}
}

// The queries of ListPage, ListRuns and Usage read an index range, never the whole
// table: with sequential scans priced out and the plan made for any value
// of the parameters (as a prepared statement's generic plan is), the
// plans hold no Seq Scan.
func TestListingUsesAnIndex(t *testing.T) {
	ctx := context.Background()
	u := pgtest.Database(t)
	s, err := Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pgtest.Exec(t, u, `INSERT INTO toolnexus_conversations (id, created, updated, length, bytes)
		SELECT 'user' || (i % 100) || '/' || i, clock_timestamp(), clock_timestamp(), 1, 10 FROM generate_series(1, 10000) i`,
		`INSERT INTO toolnexus_journals (id, run, started, updated, length)
		SELECT 'user' || (i % 100) || '/' || i, 'run', clock_timestamp(), clock_timestamp(), 0 FROM generate_series(1, 10000) i`,
		"ANALYZE toolnexus_conversations", "ANALYZE toolnexus_journals")
	page, err := s.ListPage(ctx, session.ListOptions{Prefix: "user7/", Limit: 2})
	if err != nil || page.Next == "" {
		t.Fatalf("ListPage = %v, %v", page, err)
	}
	type query struct {
		name string
		sql  string
		args []any
	}
	var queries []query
	for _, opts := range []session.ListOptions{{Prefix: "user7/"}, {Prefix: "user7/", Cursor: page.Next}, {}, {Cursor: page.Next}} {
		sql, args, err := listQuery(opts, "SELECT "+infoColumns+" FROM toolnexus_conversations", false)
		if err != nil {
			t.Fatal(err)
		}
		queries = append(queries, query{"ListPage " + opts.Prefix + " " + opts.Cursor, sql, args})
		sql, args, err = listQuery(opts, "SELECT id, run, length, started, updated FROM toolnexus_journals", true)
		if err != nil {
			t.Fatal(err)
		}
		queries = append(queries, query{"ListRuns " + opts.Prefix + " " + opts.Cursor, sql, args})
	}
	where, args := prefixRange("user7/", nil)
	queries = append(queries, query{"Usage", "SELECT count(*), coalesce(sum(bytes), 0) FROM toolnexus_conversations" + where, args})
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL enable_seqscan = off; SET LOCAL plan_cache_mode = force_generic_plan"); err != nil {
			return err
		}
		for _, q := range queries {
			rows, err := tx.Query(ctx, "EXPLAIN "+q.sql, q.args...)
			if err != nil {
				return err
			}
			lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return err
			}
			plan := strings.Join(lines, "\n")
			if strings.Contains(plan, "Seq Scan") || !strings.Contains(plan, "Index") {
				t.Errorf("%s: the plan scans the table:\n%s", q.name, plan)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
