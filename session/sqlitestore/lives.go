package sqlitestore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/toolnexus/toolnexus-go/session"
	"github.com/toolnexus/toolnexus-go/session/internal/record"
)

// lives tracks the lives of the owners of claims (session.LiveJournaler)
// with file locks: an owner's life is an exclusive lock on a file of its
// own in the directory beside the database (its path and "-lives"),
// which the kernel drops when the process dies, however it dies. Whether
// an owner lives is whether its file is locked. The lock is flock's, so
// two Stores of one process, or two lives, hold locks of their own.
type lives struct {
	dir string
}

// file returns the path of owner's lock file: its name is a hash of the
// owner's, so that any owner names a file.
func (l *lives) file(owner string) string {
	sum := sha256.Sum256([]byte(owner))
	return filepath.Join(l.dir, hex.EncodeToString(sum[:16])+".lock")
}

var _ session.LiveJournaler = (*Store)(nil)

// Live implements [session.LiveJournaler]: owner's life is an exclusive
// lock on its file in the directory of lives (the database's path and
// "-lives", created if need be), which lasts until Close or the process's
// end; the store never loses it while the process lives. Where flock is
// not available (Windows), it fails with an error wrapping
// errors.ErrUnsupported.
func (s *Store) Live(ctx context.Context, owner string) (session.Life, error) {
	if err := record.CheckOwner(owner); err != nil || owner == "" {
		if err == nil {
			err = fmt.Errorf("the owner is empty")
		}
		return nil, fmt.Errorf("sqlitestore: beginning a life: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sqlitestore: beginning the life of %q: %w", owner, err)
	}
	f, err := s.lives.lock(owner)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: beginning the life of %q: %w", owner, err)
	}
	return &fileLife{owner: owner, f: f, path: s.lives.file(owner), done: make(chan struct{})}, nil
}

// fileLife is a life held by a lock on its file.
type fileLife struct {
	owner string
	path  string
	mu    sync.Mutex
	f     *os.File // nil once closed
	done  chan struct{}
}

func (l *fileLife) Check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sqlitestore: checking the life of %q: %w", l.owner, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return fmt.Errorf("sqlitestore: the life of %q ended: %w", l.owner, session.ErrLifeLost)
	}
	return nil
}

func (l *fileLife) Done() <-chan struct{} { return l.done }

func (l *fileLife) Err() error { return nil }

// Close removes the life's file, then unlocks it: a process that looks
// at the owner meanwhile finds the file gone or unlocked, either way
// dead.
func (l *fileLife) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	os.Remove(l.path)
	err := l.f.Close() // unlocks
	l.f = nil
	close(l.done)
	return err
}
