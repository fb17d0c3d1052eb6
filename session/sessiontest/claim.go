package sessiontest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/session"
)

// checkClaim fails t unless the journal of id is claimed by owner, its
// lease past the time after (or, for a release, not).
func checkClaim(t *testing.T, j session.Journaler, id, owner string, after time.Time, held bool) {
	t.Helper()
	got := mustLoadRun(t, j, id)
	if got.Owner != owner || got.Lease.After(after) != held {
		t.Errorf("LoadRun(%q) claims: owner %q, lease %v; want owner %q, lease after %v: %v", id, got.Owner, got.Lease, owner, after, held)
	}
	p, err := j.ListRuns(ctx, session.ListOptions{Prefix: id})
	if err != nil || len(p.Journals) != 1 || p.Journals[0].Owner != got.Owner || !p.Journals[0].Lease.Equal(got.Lease) {
		t.Errorf("ListRuns(%q) = %+v, %v; want the claim LoadRun shows: %q until %v", id, p, err, got.Owner, got.Lease)
	}
}

// testClaimRun claims a journal: at most one owner holds it while its
// lease lasts; the owner renews and releases it; a claim that ran out is
// anyone's; a claim changes neither the entries nor Updated.
func testClaimRun(t *testing.T, s session.Store) {
	j := journaler(t, s)
	mustBeginRun(t, j, "c", "run-1", []byte("one"))
	begun := mustLoadRun(t, j, "c")
	if begun.Owner != "" || !begun.Lease.IsZero() {
		t.Errorf("a journal never claimed: owner %q, lease %v; want none", begun.Owner, begun.Lease)
	}
	before := time.Now().Add(-time.Minute) // a clock of its own may be a little behind
	if err := j.ClaimRun(ctx, "c", "run-1", "a", time.Hour); err != nil {
		t.Fatalf("ClaimRun of a journal never claimed = %v", err)
	}
	checkClaim(t, j, "c", "a", before.Add(time.Hour), true)
	if err := j.ClaimRun(ctx, "c", "run-1", "b", time.Hour); !errors.Is(err, session.ErrClaimed) {
		t.Errorf("ClaimRun by b of a's claim = %v; want ErrClaimed", err)
	}
	checkClaim(t, j, "c", "a", before.Add(time.Hour), true)
	if err := j.ClaimRun(ctx, "c", "run-1", "a", 2*time.Hour); err != nil {
		t.Errorf("ClaimRun by a, renewing its claim = %v", err)
	}
	checkClaim(t, j, "c", "a", before.Add(2*time.Hour), true)
	got := checkRun(t, j, "c", "run-1", [][]byte{[]byte("one")})
	if !got.Updated.Equal(begun.Updated) {
		t.Errorf("claims changed Updated from %v to %v; want it as it was", begun.Updated, got.Updated)
	}
	mustAppendRun(t, j, "c", "run-1", []byte("two"))
	checkClaim(t, j, "c", "a", before.Add(2*time.Hour), true)

	// Released, it is anyone's at once.
	if err := j.ClaimRun(ctx, "c", "run-1", "a", 0); err != nil {
		t.Errorf("ClaimRun by a, releasing = %v", err)
	}
	if err := j.ClaimRun(ctx, "c", "run-1", "b", time.Millisecond); err != nil {
		t.Fatalf("ClaimRun by b of a released claim = %v", err)
	}
	// A claim that runs out is anyone's (the wait is a hang guard only).
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		err := j.ClaimRun(ctx, "c", "run-1", "c", time.Hour)
		if err == nil {
			break
		}
		if !errors.Is(err, session.ErrClaimed) || time.Now().After(deadline) {
			t.Fatalf("ClaimRun by c of b's claim of a millisecond = %v; want it taken once the claim ran out", err)
		}
	}
	checkClaim(t, j, "c", "c", before.Add(time.Hour), true)

	for _, tc := range []struct{ id, run string }{{"c", "run-2"}, {"d", "run-1"}} {
		if err := j.ClaimRun(ctx, tc.id, tc.run, "a", time.Hour); !errors.Is(err, session.ErrNoRun) {
			t.Errorf("ClaimRun(%q, %q) = %v; want ErrNoRun", tc.id, tc.run, err)
		}
	}
	for _, tc := range []struct{ id, run, owner string }{{"c", "run-1", ""}, {"", "run-1", "a"}, {"c", "", "a"}, {"c", "run-1", "nul\x00"}} {
		if err := j.ClaimRun(ctx, tc.id, tc.run, tc.owner, time.Hour); err == nil || errors.Is(err, session.ErrNoRun) || errors.Is(err, session.ErrClaimed) {
			t.Errorf("ClaimRun(%q, %q, owner %q) = %v; want an error saying what is wrong", tc.id, tc.run, tc.owner, err)
		}
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if err := j.ClaimRun(done, "c", "run-1", "a", time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("ClaimRun with a done context = %v; want an error wrapping context.Canceled", err)
	}
	checkClaim(t, j, "c", "c", before.Add(time.Hour), true)

	// The run ends: its claim goes with its journal.
	mustEndRun(t, j, "c", "run-1")
	if err := j.ClaimRun(ctx, "c", "run-1", "c", time.Hour); !errors.Is(err, session.ErrNoRun) {
		t.Errorf("ClaimRun of a run that ended = %v; want ErrNoRun", err)
	}
	mustBeginRun(t, j, "c", "run-2", []byte("x"))
	if got := mustLoadRun(t, j, "c"); got.Owner != "" || !got.Lease.IsZero() {
		t.Errorf("the next run's journal: owner %q, lease %v; want no claim", got.Owner, got.Lease)
	}
}

// testConcurrentClaims races claims of one journal by many owners, from
// many goroutines: exactly one takes it.
func testConcurrentClaims(t *testing.T, s session.Store) {
	j := journaler(t, s)
	mustBeginRun(t, j, "c", "run-1", []byte("one"))
	const racers = 16
	errs := race(racers, func(i int) error { return j.ClaimRun(ctx, "c", "run-1", fmt.Sprint("owner-", i), time.Hour) })
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("owners %d and %d both claimed the run", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, session.ErrClaimed):
			t.Errorf("ClaimRun %d = %v; want nil or ErrClaimed", i, err)
		}
	}
	if winner < 0 {
		t.Fatalf("no ClaimRun of %d won", racers)
	}
	if got := mustLoadRun(t, j, "c"); got.Owner != fmt.Sprint("owner-", winner) {
		t.Errorf("the journal is claimed by %q; want owner-%d, the one that won", got.Owner, winner)
	}
}

// mustEndRun ends run on id, saving nothing.
func mustEndRun(t *testing.T, j session.Journaler, id, run string) {
	t.Helper()
	if err := j.EndRun(ctx, id, run, nil); err != nil {
		t.Fatalf("EndRun(%q, %q) = %v", id, run, err)
	}
}
