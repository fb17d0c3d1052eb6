package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/toolnexus/toolnexus-go/internal/pgtest"
	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/session/pgstore"
	"github.com/toolnexus/toolnexus-go/session/sessiontest"
	"google.golang.org/genai"
)

var ctx = context.Background()

// open opens a store on the database at u, closed when t ends.
func open(t *testing.T, u string) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(ctx, u)
	if err != nil {
		t.Fatalf("Open = %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close() = %v", err)
		}
	})
	return s
}

func TestContract(t *testing.T) {
	sessiontest.Run(t, func(t *testing.T) session.Store {
		return open(t, pgtest.Database(t))
	})
}

// What was appended is there once the database is opened again, by
// another Store; a Store made by New over a pool leaves the pool open.
func TestReopenAndNew(t *testing.T) {
	u := pgtest.Database(t)
	s, err := pgstore.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	want := sessiontest.Conversation()
	if err := s.Append(ctx, "c", want); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := s.Load(ctx, "c"); err == nil {
		t.Errorf("Load after Close = nil error; want one")
	}

	pool, err := pgxpool.New(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	again, err := pgstore.New(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := again.Load(ctx, "c"); err != nil || len(got) != len(want) {
		t.Fatalf("Load after reopening = %d contents, %v; want %d", len(got), err, len(want))
	}
	again.Close()
	if err := pool.Ping(ctx); err != nil {
		t.Errorf("the pool after the Store's Close: Ping = %v; want it open", err)
	}
	if _, err := pgstore.New(ctx, nil); err == nil {
		t.Errorf("New(nil) = nil error")
	}
}

// Tables written by a newer version of the package are refused, not
// misread.
func TestNewerSchema(t *testing.T) {
	u := pgtest.Database(t)
	open(t, u)
	pgtest.Exec(t, u, fmt.Sprintf("UPDATE toolnexus_schema_version SET version = %d", pgstore.SchemaVersion+1))
	_, err := pgstore.Open(ctx, u)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("version %d, written by a newer version of pgstore", pgstore.SchemaVersion+1)) {
		t.Errorf("Open of newer tables = %v; want an error naming the version", err)
	}
}

// Stores opened at once on a new database, as processes starting together
// would: every Open succeeds, the tables are made once, and all work.
func TestConcurrentOpen(t *testing.T) {
	u := pgtest.Database(t)
	const n = 8
	stores := make([]*pgstore.Store, n)
	var wg sync.WaitGroup
	for i := range stores {
		wg.Go(func() {
			s, err := pgstore.Open(ctx, u)
			if err != nil {
				t.Errorf("Open %d = %v", i, err)
				return
			}
			stores[i] = s
		})
	}
	wg.Wait()
	for i, s := range stores {
		if s == nil {
			continue
		}
		defer s.Close()
		if err := s.Append(ctx, "c", genai.Text(fmt.Sprint(i))); err != nil {
			t.Errorf("Append through store %d = %v", i, err)
		}
	}
	if t.Failed() {
		return
	}
	if got, err := stores[0].Load(ctx, "c"); err != nil || len(got) != n {
		t.Errorf("Load = %d contents, %v; want %d", len(got), err, n)
	}
	var rows, version int
	pool, err := pgxpool.New(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := pool.QueryRow(ctx, "SELECT count(*), max(version) FROM toolnexus_schema_version").Scan(&rows, &version); err != nil {
		t.Fatal(err)
	}
	if rows != 1 || version != pgstore.SchemaVersion {
		t.Errorf("toolnexus_schema_version holds %d rows, version %d; want 1 row, %d", rows, version, pgstore.SchemaVersion)
	}
}

func TestDoneContextOpen(t *testing.T) {
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := pgstore.Open(done, pgtest.Database(t)); !errors.Is(err, context.Canceled) {
		t.Errorf("Open with a done context = %v; want context.Canceled", err)
	}
}

// Deletes of a conversation that others append to at the same time leave
// no contents behind: after them all, the conversation holds exactly what
// its row counts, and appends go on from there.
func TestDeleteWhileAppending(t *testing.T) {
	s := open(t, pgtest.Database(t))
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 30 {
				if err := s.Append(ctx, "c", genai.Text(fmt.Sprint(w, "/", i))); err != nil {
					t.Errorf("Append = %v", err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for range 30 {
			if err := s.Delete(ctx, "c"); err != nil && !errors.Is(err, session.ErrNotFound) {
				t.Errorf("Delete = %v", err)
				return
			}
		}
	})
	wg.Wait()
	if err := s.Append(ctx, "c", genai.Text("last")); err != nil {
		t.Fatalf("Append after the deletes = %v", err)
	}
	got, err := s.Load(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	infos, err := s.List(ctx)
	if err != nil || len(infos) != 1 || infos[0].Len != len(got) || infos[0].Bytes != size(t, got...) {
		t.Errorf("List() = %+v, %v; want one conversation of the %d contents Load returns", infos, err, len(got))
	}
	if last := got[len(got)-1].Parts[0].Text; last != "last" {
		t.Errorf("the last content is %q; want the last appended", last)
	}
}
