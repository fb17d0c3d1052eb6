package sessiontest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus-go/session"
	"google.golang.org/genai"
)

// none is the claim of a write by a process that holds none.
var none session.Claim

// leased is owner's claim for lease.
func leased(owner string, lease time.Duration) session.Claim {
	return session.Claim{Owner: owner, Lease: lease}
}

// checkClaim fails t unless the journal of id is claimed by owner (""
// for nobody), its lease past the time after (or, for held false, not),
// as LoadRun and ListRuns show it, Held saying held.
func checkClaim(t *testing.T, j session.Journaler, id, owner string, after time.Time, held bool) {
	t.Helper()
	got := mustLoadRun(t, j, id)
	if got.Owner != owner || got.Lease.After(after) != held || got.Held != held {
		t.Errorf("LoadRun(%q) claims: owner %q, lease %v, held %v; want owner %q, lease after %v: %v", id, got.Owner, got.Lease, got.Held, owner, after, held)
	}
	p, err := j.ListRuns(ctx, session.ListOptions{Prefix: id})
	if err != nil || len(p.Journals) != 1 || p.Journals[0].Owner != got.Owner || !p.Journals[0].Lease.Equal(got.Lease) || p.Journals[0].Held != got.Held {
		t.Errorf("ListRuns(%q) = %+v, %v; want the claim LoadRun shows: %q until %v, held %v", id, p, err, got.Owner, got.Lease, got.Held)
	}
}

// testClaimRun claims a journal: at most one owner holds it while its
// lease lasts; the owner renews and releases it; a claim that ran out is
// anyone's; a claim changes neither the entries nor Updated.
func testClaimRun(t *testing.T, s session.Store) {
	j := journaler(t, s)
	mustBeginRun(t, j, "c", "run-1", []byte("one"))
	begun := mustLoadRun(t, j, "c")
	if begun.Owner != "" || !begun.Lease.IsZero() || begun.Held {
		t.Errorf("a journal never claimed: owner %q, lease %v, held %v; want none", begun.Owner, begun.Lease, begun.Held)
	}
	before := time.Now().Add(-time.Minute) // a clock of its own may be a little behind
	if err := j.ClaimRun(ctx, "c", "run-1", leased("a", time.Hour)); err != nil {
		t.Fatalf("ClaimRun of a journal never claimed = %v", err)
	}
	checkClaim(t, j, "c", "a", before.Add(time.Hour), true)
	if err := j.ClaimRun(ctx, "c", "run-1", leased("b", time.Hour)); !errors.Is(err, session.ErrClaimed) {
		t.Errorf("ClaimRun by b of a's claim = %v; want ErrClaimed", err)
	}
	checkClaim(t, j, "c", "a", before.Add(time.Hour), true)
	if err := j.ClaimRun(ctx, "c", "run-1", leased("a", 2*time.Hour)); err != nil {
		t.Errorf("ClaimRun by a, renewing its claim = %v", err)
	}
	checkClaim(t, j, "c", "a", before.Add(2*time.Hour), true)
	got := checkRun(t, j, "c", "run-1", [][]byte{[]byte("one")})
	if !got.Updated.Equal(begun.Updated) {
		t.Errorf("claims changed Updated from %v to %v; want it as it was", begun.Updated, got.Updated)
	}
	if err := j.AppendRun(ctx, "c", "run-1", leased("a", 3*time.Hour), [][]byte{[]byte("two")}); err != nil {
		t.Fatalf("AppendRun by a, which claims it = %v", err)
	}
	checkClaim(t, j, "c", "a", before.Add(3*time.Hour), true) // a write renews the claim

	// Released, it is anyone's at once; a release is made once.
	if err := j.ReleaseRun(ctx, "c", "run-1", "b"); !errors.Is(err, session.ErrClaimed) {
		t.Errorf("ReleaseRun by b of a's claim = %v; want ErrClaimed", err)
	}
	checkClaim(t, j, "c", "a", before.Add(3*time.Hour), true)
	for range 2 {
		if err := j.ReleaseRun(ctx, "c", "run-1", "a"); err != nil {
			t.Errorf("ReleaseRun by a = %v", err)
		}
		checkClaim(t, j, "c", "", time.Time{}, false)
	}
	if err := j.ClaimRun(ctx, "c", "run-1", leased("b", time.Millisecond)); err != nil {
		t.Fatalf("ClaimRun by b of a released claim = %v", err)
	}
	// A claim that runs out is anyone's (the wait is a hang guard only).
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		err := j.ClaimRun(ctx, "c", "run-1", leased("c", time.Hour))
		if err == nil {
			break
		}
		if !errors.Is(err, session.ErrClaimed) || time.Now().After(deadline) {
			t.Fatalf("ClaimRun by c of b's claim of a millisecond = %v; want it taken once the claim ran out", err)
		}
	}
	checkClaim(t, j, "c", "c", before.Add(time.Hour), true)

	for _, tc := range []struct{ id, run string }{{"c", "run-2"}, {"d", "run-1"}} {
		if err := j.ClaimRun(ctx, tc.id, tc.run, leased("a", time.Hour)); !errors.Is(err, session.ErrNoRun) {
			t.Errorf("ClaimRun(%q, %q) = %v; want ErrNoRun", tc.id, tc.run, err)
		}
		if err := j.ReleaseRun(ctx, tc.id, tc.run, "a"); !errors.Is(err, session.ErrNoRun) {
			t.Errorf("ReleaseRun(%q, %q) = %v; want ErrNoRun", tc.id, tc.run, err)
		}
	}
	for _, tc := range []struct {
		id, run string
		claim   session.Claim
	}{{"c", "run-1", leased("", time.Hour)}, {"", "run-1", leased("a", time.Hour)}, {"c", "", leased("a", time.Hour)},
		{"c", "run-1", leased("nul\x00", time.Hour)}, {"c", "run-1", leased("a", -time.Second)}} {
		if err := j.ClaimRun(ctx, tc.id, tc.run, tc.claim); err == nil || errors.Is(err, session.ErrNoRun) || errors.Is(err, session.ErrClaimed) {
			t.Errorf("ClaimRun(%q, %q, %+v) = %v; want an error saying what is wrong", tc.id, tc.run, tc.claim, err)
		}
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if err := j.ClaimRun(done, "c", "run-1", leased("a", time.Hour)); !errors.Is(err, context.Canceled) {
		t.Errorf("ClaimRun with a done context = %v; want an error wrapping context.Canceled", err)
	}
	if err := j.ReleaseRun(done, "c", "run-1", "c"); !errors.Is(err, context.Canceled) {
		t.Errorf("ReleaseRun with a done context = %v; want an error wrapping context.Canceled", err)
	}
	checkClaim(t, j, "c", "c", before.Add(time.Hour), true)

	// The run ends: its claim goes with its journal.
	if err := j.EndRun(ctx, "c", "run-1", leased("c", time.Hour), nil); err != nil {
		t.Fatalf("EndRun by the owner = %v", err)
	}
	if err := j.ClaimRun(ctx, "c", "run-1", leased("c", time.Hour)); !errors.Is(err, session.ErrNoRun) {
		t.Errorf("ClaimRun of a run that ended = %v; want ErrNoRun", err)
	}
	mustBeginRun(t, j, "c", "run-2", []byte("x"))
	if got := mustLoadRun(t, j, "c"); got.Owner != "" || !got.Lease.IsZero() || got.Held {
		t.Errorf("the next run's journal: owner %q, lease %v, held %v; want no claim", got.Owner, got.Lease, got.Held)
	}

	// BeginRun claims the journal it creates, as it is told.
	if err := j.BeginRun(ctx, "e", "run-1", leased("a", time.Hour), [][]byte{[]byte("one")}); err != nil {
		t.Fatalf("BeginRun claimed by a = %v", err)
	}
	checkClaim(t, j, "e", "a", before.Add(time.Hour), true)
	if err := j.ClaimRun(ctx, "e", "run-1", leased("b", time.Hour)); !errors.Is(err, session.ErrClaimed) {
		t.Errorf("ClaimRun by b of the journal a began = %v; want ErrClaimed", err)
	}
}

// testFencedWrites writes to a journal under claims that are not its
// own: a process that lost the run (its claim ran out and another took
// it), another owner, and no claim. Each write is refused with
// ErrClaimed and writes nothing; the owner's writes go on.
func testFencedWrites(t *testing.T, s session.Store) {
	j := journaler(t, s)
	mustAppend(t, s, "c", text(genai.RoleUser, "before"))
	if err := j.BeginRun(ctx, "c", "run-1", leased("a", time.Millisecond), [][]byte{[]byte("begun by a")}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		err := j.ClaimRun(ctx, "c", "run-1", leased("b", time.Hour))
		if err == nil {
			break
		}
		if !errors.Is(err, session.ErrClaimed) || time.Now().After(deadline) {
			t.Fatalf("ClaimRun by b of a's claim of a millisecond = %v; want it taken once the claim ran out", err)
		}
	}
	want := [][]byte{[]byte("begun by a")}
	for _, c := range []session.Claim{leased("a", time.Hour), leased("x", time.Hour), none} {
		if err := j.AppendRun(ctx, "c", "run-1", c, [][]byte{[]byte("late")}); !errors.Is(err, session.ErrClaimed) {
			t.Errorf("AppendRun under %+v of b's journal = %v; want ErrClaimed", c, err)
		}
		if err := j.EndRun(ctx, "c", "run-1", c, []*genai.Content{text(genai.RoleModel, "late")}); !errors.Is(err, session.ErrClaimed) {
			t.Errorf("EndRun under %+v of b's journal = %v; want ErrClaimed", c, err)
		}
		checkRun(t, j, "c", "run-1", want)
		checkLen(t, s, "c", 1)
	}
	if err := j.AppendRun(ctx, "c", "run-1", leased("b", time.Hour), [][]byte{[]byte("by b")}); err != nil {
		t.Fatalf("AppendRun by b, which claims it = %v", err)
	}
	checkRun(t, j, "c", "run-1", append(want, []byte("by b")))
	// A write of a run that is not in progress is ErrNoRun, whoever asks.
	if err := j.AppendRun(ctx, "c", "run-2", leased("b", time.Hour), [][]byte{[]byte("x")}); !errors.Is(err, session.ErrNoRun) {
		t.Errorf("AppendRun of another run = %v; want ErrNoRun", err)
	}
	if err := j.EndRun(ctx, "c", "run-1", leased("b", time.Hour), []*genai.Content{text(genai.RoleModel, "by b")}); err != nil {
		t.Fatalf("EndRun by b = %v", err)
	}
	checkLen(t, s, "c", 2)
	for _, c := range []session.Claim{leased("a", time.Hour), leased("b", time.Hour)} {
		if err := j.EndRun(ctx, "c", "run-1", c, nil); !errors.Is(err, session.ErrNoRun) {
			t.Errorf("EndRun under %+v of a run that ended = %v; want ErrNoRun", c, err)
		}
	}
	// A journal released is written by no claim, and only so.
	mustBeginRun(t, j, "d", "run-1", []byte("one"))
	if err := j.AppendRun(ctx, "d", "run-1", leased("a", time.Hour), [][]byte{[]byte("a's")}); !errors.Is(err, session.ErrClaimed) {
		t.Errorf("AppendRun by a of a journal nobody claims = %v; want ErrClaimed", err)
	}
	mustAppendRun(t, j, "d", "run-1", []byte("two"))
	checkRun(t, j, "d", "run-1", [][]byte{[]byte("one"), []byte("two")})
}

// testConcurrentClaims races claims of one journal by many owners, from
// many goroutines: exactly one takes it.
func testConcurrentClaims(t *testing.T, s session.Store) {
	j := journaler(t, s)
	mustBeginRun(t, j, "c", "run-1", []byte("one"))
	const racers = 16
	errs := race(racers, func(i int) error { return j.ClaimRun(ctx, "c", "run-1", leased(fmt.Sprint("owner-", i), time.Hour)) })
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

// testLives claims journals for as long as their owner lives, on a
// session.LiveJournaler (skipped on another Journaler, and where the
// store cannot track lives): the claim lasts while the owner's life
// does, whatever the time, and is anyone's as soon as the life ends.
func testLives(t *testing.T, s session.Store) {
	lj, ok := journaler(t, s).(session.LiveJournaler)
	if !ok {
		t.Skipf("%T is not a session.LiveJournaler", s)
	}
	life, err := lj.Live(ctx, "a")
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("%T cannot track lives here: %v", s, err)
	}
	if err != nil {
		t.Fatalf("Live(a) = %v", err)
	}
	defer life.Close()
	if err := life.Check(ctx); err != nil {
		t.Errorf("Check of a life going on = %v", err)
	}
	if _, err := lj.Live(ctx, "a"); err == nil {
		t.Errorf("Live(a) while a's life goes on = nil; want an error")
	}
	if _, err := lj.Live(ctx, ""); err == nil {
		t.Errorf("Live(\"\") = nil; want an error")
	}
	for _, id := range []string{"c", "d"} {
		mustBeginRun(t, lj, id, "run-1", []byte("one"))
		if err := lj.ClaimRun(ctx, id, "run-1", session.Claim{Owner: "a"}); err != nil {
			t.Fatalf("ClaimRun of zero lease by a, which lives = %v", err)
		}
	}
	if got := mustLoadRun(t, lj, "c"); got.Owner != "a" || !got.Lease.IsZero() || !got.Held {
		t.Errorf("LoadRun of a's journal: %+v; want it a's, of no lease, held while a lives", got)
	}
	if p, err := lj.ListRuns(ctx, session.ListOptions{Prefix: "c"}); err != nil || len(p.Journals) != 1 || p.Journals[0].Owner != "a" || !p.Journals[0].Held {
		t.Errorf("ListRuns(c) = %+v, %v; want the journal a's, held while a lives", p, err)
	}
	if err := lj.ClaimRun(ctx, "c", "run-1", leased("b", time.Hour)); !errors.Is(err, session.ErrClaimed) {
		t.Errorf("ClaimRun by b of a claim whose owner lives = %v; want ErrClaimed", err)
	}
	if err := lj.AppendRun(ctx, "c", "run-1", session.Claim{Owner: "a"}, [][]byte{[]byte("two")}); err != nil {
		t.Errorf("AppendRun by a, which lives = %v", err)
	}
	if err := lj.BeginRun(ctx, "e", "run-1", session.Claim{Owner: "a"}, [][]byte{[]byte("one")}); err != nil {
		t.Errorf("BeginRun claimed by a for its life = %v", err)
	}
	if got := mustLoadRun(t, lj, "e"); got.Owner != "a" || !got.Held {
		t.Errorf("LoadRun of the journal a began = %+v; want it a's, held", got)
	}

	// A claim of zero lease by an owner that has no life is anyone's.
	mustBeginRun(t, lj, "f", "run-1", []byte("one"))
	if err := lj.ClaimRun(ctx, "f", "run-1", session.Claim{Owner: "ghost"}); err != nil {
		t.Fatalf("ClaimRun of zero lease by an owner with no life = %v", err)
	}
	if got := mustLoadRun(t, lj, "f"); got.Owner != "ghost" || got.Held {
		t.Errorf("LoadRun of a journal claimed by an owner with no life = %+v; want it not held", got)
	}
	if err := lj.ClaimRun(ctx, "f", "run-1", leased("b", time.Hour)); err != nil {
		t.Errorf("ClaimRun by b of a claim whose owner has no life = %v", err)
	}

	// The life ends: its claims are anyone's at once.
	if err := life.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	select {
	case <-life.Done():
	default:
		t.Errorf("Done is not closed after Close")
	}
	if err := life.Err(); err != nil {
		t.Errorf("Err after Close = %v; want nil", err)
	}
	if err := life.Check(ctx); !errors.Is(err, session.ErrLifeLost) {
		t.Errorf("Check after Close = %v; want ErrLifeLost", err)
	}
	if got := mustLoadRun(t, lj, "c"); got.Owner != "a" || got.Held {
		t.Errorf("LoadRun of the journal of an owner whose life ended = %+v; want a's, not held", got)
	}
	if err := lj.ClaimRun(ctx, "c", "run-1", leased("b", time.Hour)); err != nil {
		t.Errorf("ClaimRun by b once a's life ended = %v", err)
	}
	if err := lj.AppendRun(ctx, "c", "run-1", session.Claim{Owner: "a"}, [][]byte{[]byte("late")}); !errors.Is(err, session.ErrClaimed) {
		t.Errorf("AppendRun by a once b took its journal = %v; want ErrClaimed", err)
	}
	checkRun(t, lj, "c", "run-1", [][]byte{[]byte("one"), []byte("two")})
	// A new life, under another name, claims what is free.
	life2, err := lj.Live(ctx, "a2")
	if err != nil {
		t.Fatalf("Live(a2) = %v", err)
	}
	defer life2.Close()
	if err := lj.ClaimRun(ctx, "d", "run-1", session.Claim{Owner: "a2"}); err != nil {
		t.Errorf("ClaimRun by a2 of a's journal, a's life over = %v", err)
	}
}
