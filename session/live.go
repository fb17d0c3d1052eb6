package session

import (
	"context"
	"fmt"
	"sync"

	"github.com/toolnexus/toolnexus-go/session/internal/record"
)

// Live implements [LiveJournaler]. The lives of a Memory's owners are the
// process's: a life lasts until its Close, and the store never loses one.
func (m *Memory) Live(ctx context.Context, owner string) (Life, error) {
	if err := record.CheckOwner(owner); err != nil || owner == "" {
		return nil, fmt.Errorf("session: beginning a life: %w", cmpErr(err, "the owner is empty"))
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("session: beginning the life of %q: %w", owner, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lives[owner] != nil {
		return nil, fmt.Errorf("session: beginning the life of %q: it is going on already", owner)
	}
	if m.lives == nil {
		m.lives = map[string]*memLife{}
	}
	l := &memLife{m: m, owner: owner, done: make(chan struct{})}
	m.lives[owner] = l
	return l, nil
}

// memLife is the life of an owner of a Memory's claims.
type memLife struct {
	m     *Memory
	owner string
	once  sync.Once
	done  chan struct{}
}

func (l *memLife) Check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("session: checking the life of %q: %w", l.owner, err)
	}
	select {
	case <-l.done:
		return fmt.Errorf("session: the life of %q ended: %w", l.owner, ErrLifeLost)
	default:
		return nil
	}
}

func (l *memLife) Done() <-chan struct{} { return l.done }

func (l *memLife) Err() error { return nil }

func (l *memLife) Close() error {
	l.once.Do(func() {
		l.m.mu.Lock()
		if l.m.lives[l.owner] == l {
			delete(l.m.lives, l.owner)
		}
		l.m.mu.Unlock()
		close(l.done)
	})
	return nil
}

// cmpErr returns err, or an error of msg when err is nil.
func cmpErr(err error, msg string) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("session: %s", msg)
}
