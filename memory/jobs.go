package memory

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// jobKind says what a background job does.
type jobKind int

const (
	jobEmbed   jobKind = iota + 1 // embed the user's memories that have no vector
	jobExtract                    // have a model read a conversation and write facts
)

type job struct {
	kind  jobKind
	user  string
	epoch int
	ctx   context.Context // the context of the call that queued it, for the observer; never done
	ext   *extractJob
}

// acquire returns the state of user, counted as held until release.
// s.mu must be held.
func (s *Service) acquireLocked(user string) *userState {
	u := s.users[user]
	if u == nil {
		u = &userState{cancels: map[*job]context.CancelFunc{}}
		s.users[user] = u
	}
	u.refs++
	return u
}

// releaseLocked releases what acquireLocked counted. s.mu must be held.
func (s *Service) releaseLocked(user string, u *userState) {
	if u.refs--; u.refs == 0 {
		delete(s.users, user)
	}
}

// enqueue queues a job of user, unless the service is closed or the queue
// full; an embedding job is queued once until it runs. It reports whether
// it queued it.
func (s *Service) enqueue(ctx context.Context, kind jobKind, user string, ext *extractJob) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	u := s.users[user]
	if kind == jobEmbed && u != nil && u.embed {
		return true
	}
	if len(s.queue) >= s.cfg.QueueSize {
		return false
	}
	u = s.acquireLocked(user)
	if kind == jobEmbed {
		u.embed = true
	}
	s.queue = append(s.queue, &job{kind: kind, user: user, epoch: u.epoch, ctx: context.WithoutCancel(ctx), ext: ext})
	s.cond.Broadcast()
	return true
}

// work runs queued jobs until the service is closed and the queue empty.
func (s *Service) work() {
	defer s.wg.Done()
	for {
		s.mu.Lock()
		for len(s.queue) == 0 && !s.closed {
			s.cond.Wait()
		}
		if len(s.queue) == 0 {
			s.mu.Unlock()
			return
		}
		j := s.queue[0]
		s.queue[0] = nil
		s.queue = s.queue[1:]
		u := s.users[j.user]
		if j.kind == jobEmbed {
			u.embed = false
		}
		ctx, cancel := context.WithCancel(s.ctx)
		u.cancels[j] = cancel
		s.running++
		s.mu.Unlock()

		s.run(ctx, j, u)

		cancel()
		s.mu.Lock()
		delete(u.cancels, j)
		s.releaseLocked(j.user, u)
		s.running--
		s.cond.Broadcast()
		s.mu.Unlock()
	}
}

// run runs j, retrying it as Config says, unless ForgetUser forgot its
// user since it was queued.
func (s *Service) run(ctx context.Context, j *job, u *userState) {
	if !s.current(j, u) {
		return
	}
	switch j.kind {
	case jobEmbed:
		s.retry(ctx, j, u, EventEmbed, func(attempt int) error { return s.embedPending(ctx, j, u, attempt) })
	case jobExtract:
		s.retry(ctx, j, u, EventExtract, func(attempt int) error { return s.extract(ctx, j, u, attempt) })
	}
}

// current reports whether j's user was not forgotten since j was queued.
func (s *Service) current(j *job, u *userState) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return u.epoch == j.epoch
}

// retry calls f until it succeeds, at most the attempts Config says, with
// a growing delay between attempts; each failure is reported (the last
// as final) and logged.
func (s *Service) retry(ctx context.Context, j *job, u *userState, kind EventKind, f func(attempt int) error) {
	attempts, delay := s.cfg.MaxAttempts, s.cfg.RetryDelay
	for attempt := 1; ; attempt++ {
		start := time.Now()
		err := f(attempt)
		if err == nil || ctx.Err() != nil || !s.current(j, u) {
			return
		}
		final := attempt >= attempts
		e := &Event{Kind: kind, User: j.user, Thread: j.thread(), Attempt: attempt, Final: final,
			Start: start, Duration: time.Since(start), Err: err}
		var xe *extractError
		if errors.As(err, &xe) {
			e.Usage = xe.usage
		}
		s.observe(j.ctx, e)
		s.logger.Warn("memory: background "+kind.String()+" failed", "user", j.user, "attempt", attempt, "final", final, "error", err)
		if final {
			return
		}
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
		delay *= 2
	}
}

func (j *job) thread() string {
	if j.ext != nil {
		return j.ext.thread
	}
	return ""
}

// write runs f, which writes memories of j's user, unless the user was
// forgotten since j was queued; ForgetUser waits for it.
func (s *Service) write(j *job, u *userState, f func() error) error {
	u.write.Lock()
	defer u.write.Unlock()
	if !s.current(j, u) {
		return errForgotten
	}
	return f()
}

// errForgotten ends a job whose user was forgotten since it was queued.
var errForgotten = errors.New("memory: the user was forgotten")

// embedBatch is how many memories one embedding job embeds per call.
const embedBatch = 100

// embedPending embeds the memories of j's user that have no vector, a
// batch at a time, and stores their vectors.
func (s *Service) embedPending(ctx context.Context, j *job, u *userState, attempt int) error {
	for {
		recs, err := s.store.Unembedded(ctx, j.user, embedBatch)
		if err != nil || len(recs) == 0 {
			return err
		}
		start := time.Now()
		texts := make([]string, len(recs))
		for i, r := range recs {
			texts[i] = r.Text
		}
		vecs, err := s.cfg.Embedder.Embed(ctx, texts, EmbedDocument)
		if err == nil && len(vecs) != len(texts) {
			err = fmt.Errorf("memory: the embedder returned %d vectors for %d texts", len(vecs), len(texts))
		}
		if err != nil {
			return err
		}
		set := make(map[string][]float32, len(recs))
		for i, r := range recs {
			set[r.ID] = normalize(vecs[i])
		}
		if err := s.write(j, u, func() error { return s.store.SetVectors(ctx, j.user, set) }); err != nil {
			return err
		}
		s.observe(j.ctx, &Event{Kind: EventEmbed, User: j.user, Count: len(recs), Attempt: attempt, Start: start, Duration: time.Since(start)})
		if len(recs) < embedBatch {
			return nil
		}
	}
}
