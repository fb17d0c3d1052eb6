package pgstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/internal/pgtest"
	"github.com/toolnexus/toolnexus-go/session"
)

// The server ends the connection of a life (pg_terminate_backend, as an
// administrator or a failover does): the life is lost (Done, Err, Check),
// and its claims of zero lease are anyone's at once.
func TestLifeLost(t *testing.T) {
	ctx := context.Background()
	u := pgtest.Database(t)
	s := open(t, u)
	life, err := s.Live(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	defer life.Close()
	if err := s.BeginRun(ctx, "c", "run", session.Claim{Owner: "a"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.ClaimRun(ctx, "c", "run", session.Claim{Owner: "b", Lease: time.Hour}); !errors.Is(err, session.ErrClaimed) {
		t.Fatalf("ClaimRun by b while a lives = %v; want ErrClaimed", err)
	}
	pgtest.Exec(t, u, `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND classid = 1818850917 AND objsubid = 2`)
	select {
	case <-life.Done():
	case <-time.After(time.Minute): // a hang guard
		t.Fatal("the life is not lost a minute after its connection ended")
	}
	if err := life.Err(); !errors.Is(err, session.ErrLifeLost) {
		t.Errorf("Err of a life lost = %v; want ErrLifeLost", err)
	}
	if err := life.Check(ctx); !errors.Is(err, session.ErrLifeLost) {
		t.Errorf("Check of a life lost = %v; want ErrLifeLost", err)
	}
	if j, err := s.LoadRun(ctx, "c"); err != nil || j.Held {
		t.Errorf("LoadRun once a's life was lost = %+v, %v; want its claim not held", j, err)
	}
	if err := s.ClaimRun(ctx, "c", "run", session.Claim{Owner: "b", Lease: time.Hour}); err != nil {
		t.Errorf("ClaimRun by b once a's life was lost = %v", err)
	}
	if err := life.Close(); err != nil {
		t.Errorf("Close of a life lost = %v", err)
	}
}
