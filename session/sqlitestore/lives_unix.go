//go:build unix

package sqlitestore

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// livesSupported says whether this platform has the file locks lives
// need.
const livesSupported = true

// lock creates owner's file and locks it, exclusively, for its life. It
// fails when another life of owner holds it.
func (l *lives) lock(owner string) (*os.File, error) {
	if err := os.MkdirAll(l.dir, 0o700); err != nil {
		return nil, err
	}
	path := l.file(owner)
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, err
		}
		if err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, errors.New("it is going on already")
			}
			return nil, err
		}
		// A process that found a dead owner's file unlocked may have
		// removed it between the open and the lock: the lock must be on
		// the file the path names.
		held, err1 := f.Stat()
		named, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(held, named) {
			return f, nil
		}
		f.Close()
	}
}

// alive reports whether owner's life goes on: whether its file is
// locked. A file that is not there, or is not locked, is a dead owner's;
// with remove, a dead owner's file is removed (ClaimRun does, holding
// the database's write lock, so that the files of processes that died
// do not pile up).
func (l *lives) alive(owner string, remove bool) (bool, error) {
	path := l.file(owner)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	how := syscall.LOCK_SH
	if remove {
		how = syscall.LOCK_EX
	}
	switch err := flock(f, how|syscall.LOCK_NB); {
	case errors.Is(err, syscall.EWOULDBLOCK):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("locking %s: %w", path, err)
	}
	if remove {
		os.Remove(path)
	}
	return false, nil
}

// flock applies how to f's lock, again when a signal interrupts it.
func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
