package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"google.golang.org/genai"
)

// maxContextTerms bounds the terms of a neighbouring message kept with a
// memory (Record.Before, Record.After).
const maxContextTerms = 64

// IngestMessages remembers messages of conversations, each as a memory of
// user (KindMessage) with its thread, position, author and time. A message
// already remembered (the same thread and index) is not remembered twice,
// so a thread may be ingested again, whole or in part. Messages with no
// text are skipped; a message longer than Config.MaxMemoryBytes is
// remembered cut to it. Within the messages given, each one's neighbours
// in its thread (by index) are kept with it for ranking. It returns the
// memories added. With an Embedder, they are embedded in the background:
// search finds them by their words at once, by their meaning once that is
// done.
func (s *Service) IngestMessages(ctx context.Context, user string, msgs []Message) ([]Memory, error) {
	return s.ingest(ctx, user, msgs, nil)
}

// IngestThread remembers the new messages of a thread: the text of
// contents[from:] (user and model contents; function calls, their
// responses and thoughts are not remembered), each content a message whose
// index is its position in contents, its author its role, its time now.
// The content before from gives the first one's context. A served agent
// calls it after each saved run (see [Service.RememberRun]). With an
// Embedder or an Extraction, the new messages are embedded, and read by
// the extraction's model, in the background.
func (s *Service) IngestThread(ctx context.Context, user, thread string, contents []*genai.Content, from int) ([]Memory, error) {
	if thread == "" {
		return nil, fmt.Errorf("%w: empty thread", ErrInvalid)
	}
	if from < 0 || from > len(contents) {
		return nil, fmt.Errorf("%w: from %d out of the thread's %d contents", ErrInvalid, from, len(contents))
	}
	now := s.now()
	var msgs []Message
	for i := from; i < len(contents); i++ {
		if t := contentText(contents[i]); t != "" {
			msgs = append(msgs, Message{Thread: thread, Index: i, Author: contents[i].Role, Text: t, Time: now})
		}
	}
	var prev []Message
	for i := from - 1; i >= 0; i-- {
		if t := contentText(contents[i]); t != "" {
			prev = append(prev, Message{Thread: thread, Index: i, Author: contents[i].Role, Text: t})
			break
		}
	}
	return s.ingest(ctx, user, msgs, prev)
}

// contentText returns the text of c's text parts that are not thoughts.
func contentText(c *genai.Content) string {
	if c == nil || (c.Role != genai.RoleUser && c.Role != genai.RoleModel) {
		return ""
	}
	var b strings.Builder
	for _, p := range c.Parts {
		if p == nil || p.Thought || p.Text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.Text)
	}
	return strings.TrimSpace(b.String())
}

// ingest stores msgs, with prev as context only (not stored), and queues
// their embedding and their extraction, a job per thread.
func (s *Service) ingest(ctx context.Context, user string, msgs, prev []Message) ([]Memory, error) {
	if err := checkUser(user); err != nil {
		return nil, err
	}
	if s.isClosed() {
		return nil, ErrClosed
	}
	start := time.Now()
	now := s.now()
	var kept []Message
	for i, m := range msgs {
		if m.Thread == "" {
			return nil, fmt.Errorf("%w: message %d has no thread", ErrInvalid, i)
		}
		if m.Index < 0 {
			return nil, fmt.Errorf("%w: message %d has a negative index", ErrInvalid, i)
		}
		m.Text = strings.TrimSpace(cut(clean(m.Text), s.cfg.MaxMemoryBytes))
		m.Thread, m.Author = clean(m.Thread), clean(m.Author)
		if m.Text == "" {
			continue
		}
		if m.Time.IsZero() {
			m.Time = now
		}
		kept = append(kept, m)
	}
	if len(kept) == 0 {
		return nil, nil
	}
	recs := records(user, kept, prev)
	ids, err := s.store.Add(ctx, user, recs)
	e := &Event{Kind: EventIngest, User: user, Start: start}
	if kept[0].Thread == kept[len(kept)-1].Thread {
		e.Thread = kept[0].Thread
	}
	if err != nil {
		e.Err, e.Duration = err, time.Since(start)
		s.observe(ctx, e)
		return nil, fmt.Errorf("memory: ingest: %w", err)
	}
	added := make([]Memory, 0, len(ids))
	for _, r := range recs {
		if slices.Contains(ids, r.ID) {
			added = append(added, r.Memory)
		}
	}
	e.Memories, e.Duration = added, time.Since(start)
	s.observe(ctx, e)
	if len(added) == 0 {
		return added, nil
	}
	if s.cfg.Embedder != nil && !s.enqueue(ctx, jobEmbed, user, nil) {
		s.logger.WarnContext(ctx, "memory: the background queue is full: new memories are embedded at the user's next ingest", "user", user)
	}
	if s.cfg.Extraction != nil {
		s.queueExtraction(ctx, user, kept, added)
	}
	return added, nil
}

// queueExtraction queues the messages of kept that were added, a job per
// thread.
func (s *Service) queueExtraction(ctx context.Context, user string, kept []Message, added []Memory) {
	isNew := make(map[string]bool, len(added))
	for _, a := range added {
		isNew[messageKey(a.Thread, a.Message)] = true
	}
	byThread := map[string][]Message{}
	var threads []string
	for _, m := range kept {
		if !isNew[messageKey(m.Thread, m.Index)] {
			continue
		}
		if byThread[m.Thread] == nil {
			threads = append(threads, m.Thread)
		}
		byThread[m.Thread] = append(byThread[m.Thread], m)
	}
	for _, t := range threads {
		if s.enqueue(ctx, jobExtract, user, &extractJob{thread: t, messages: byThread[t]}) {
			continue
		}
		err := fmt.Errorf("memory: the background queue is full (%d jobs)", s.cfg.QueueSize)
		s.observe(ctx, &Event{Kind: EventExtract, User: user, Thread: t, Final: true, Start: time.Now(), Err: err})
		s.logger.WarnContext(ctx, "memory: extraction dropped: the messages stay remembered", "user", user, "thread", t, "error", err)
	}
}

// records makes the records of msgs, each with the terms of its
// neighbours in its thread (by index): among msgs, and prev.
func records(user string, msgs, prev []Message) []Record {
	all := slices.Concat(prev, msgs)
	slices.SortStableFunc(all, func(a, b Message) int {
		if c := strings.Compare(a.Thread, b.Thread); c != 0 {
			return c
		}
		return a.Index - b.Index
	})
	terms := map[[2]any]string{}
	neighbours := map[[2]any][2]string{}
	for i, m := range all {
		k := [2]any{m.Thread, m.Index}
		terms[k] = Analyze(m.Text)
		var nb [2]string
		if i > 0 && all[i-1].Thread == m.Thread {
			nb[0] = capTerms(Analyze(all[i-1].Text))
		}
		if i+1 < len(all) && all[i+1].Thread == m.Thread {
			nb[1] = capTerms(Analyze(all[i+1].Text))
		}
		neighbours[k] = nb
	}
	recs := make([]Record, len(msgs))
	for i, m := range msgs {
		k := [2]any{m.Thread, m.Index}
		nb := neighbours[k]
		recs[i] = Record{Memory: Memory{ID: newID(), User: user, Kind: KindMessage, Text: m.Text, Author: m.Author,
			Thread: m.Thread, Message: m.Index, Time: m.Time}, Terms: terms[k], Before: nb[0], After: nb[1]}
	}
	return recs
}

// capTerms keeps the first maxContextTerms terms of terms.
func capTerms(terms string) string {
	n := 0
	for i := range len(terms) {
		if terms[i] == ' ' {
			if n++; n == maxContextTerms {
				return terms[:i]
			}
		}
	}
	return terms
}

// Remember remembers facts about user, told directly (KindFact), and
// returns them as stored. A fact with no text is ErrInvalid, one over
// Config.MaxMemoryBytes ErrTooLarge; then nothing is stored.
func (s *Service) Remember(ctx context.Context, user string, facts ...Fact) ([]Memory, error) {
	if err := checkUser(user); err != nil {
		return nil, err
	}
	if s.isClosed() {
		return nil, ErrClosed
	}
	start := time.Now()
	now := s.now()
	recs := make([]Record, 0, len(facts))
	for i, f := range facts {
		text := strings.TrimSpace(clean(f.Text))
		f.Author, f.Thread = clean(f.Author), clean(f.Thread)
		switch {
		case text == "":
			return nil, fmt.Errorf("%w: fact %d has no text", ErrInvalid, i)
		case len(text) > s.cfg.MaxMemoryBytes:
			return nil, fmt.Errorf("%w: fact %d has %d bytes, more than the %d a memory holds", ErrTooLarge, i, len(text), s.cfg.MaxMemoryBytes)
		}
		m := Memory{ID: newID(), User: user, Kind: KindFact, Text: text, Author: f.Author, Thread: f.Thread, Message: -1, Time: f.Time}
		if f.Thread != "" {
			m.Message = f.Message
		}
		if m.Time.IsZero() {
			m.Time = now
		}
		recs = append(recs, Record{Memory: m, Terms: Analyze(text)})
	}
	if len(recs) == 0 {
		return nil, nil
	}
	if _, err := s.store.Add(ctx, user, recs); err != nil {
		s.observe(ctx, &Event{Kind: EventIngest, User: user, Start: start, Duration: time.Since(start), Err: err})
		return nil, fmt.Errorf("memory: remember: %w", err)
	}
	out := make([]Memory, len(recs))
	for i, r := range recs {
		out[i] = r.Memory
	}
	s.observe(ctx, &Event{Kind: EventIngest, User: user, Memories: out, Start: start, Duration: time.Since(start)})
	if s.cfg.Embedder != nil {
		s.enqueue(ctx, jobEmbed, user, nil)
	}
	return out, nil
}

// Forget removes one memory of user, with its embedding. A memory the
// user does not have is ErrNotFound.
func (s *Service) Forget(ctx context.Context, user, id string) error {
	if err := checkUser(user); err != nil {
		return err
	}
	start := time.Now()
	if err := s.store.Delete(ctx, user, id); err != nil {
		return fmt.Errorf("memory: forget: %w", err)
	}
	s.observe(ctx, &Event{Kind: EventForget, User: user, Removed: []string{id}, Start: start, Duration: time.Since(start)})
	return nil
}

// ForgetUser removes every trace of user: their memories and embeddings
// from the store, their background work queued (embeddings, extractions
// not yet run), and the work running for them, cancelled, which writes
// nothing after ForgetUser returns. A message ingested after it starts is
// a new memory.
func (s *Service) ForgetUser(ctx context.Context, user string) error {
	if err := checkUser(user); err != nil {
		return err
	}
	start := time.Now()
	s.mu.Lock()
	u := s.acquireLocked(user)
	u.epoch++
	kept := s.queue[:0]
	for _, j := range s.queue {
		if j.user == user {
			s.releaseLocked(user, u)
			continue
		}
		kept = append(kept, j)
	}
	clear(s.queue[len(kept):])
	s.queue = kept
	u.embed = false
	for _, cancel := range u.cancels {
		cancel()
	}
	s.cond.Broadcast()
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.releaseLocked(user, u)
		s.mu.Unlock()
	}()
	u.write.Lock()
	err := s.store.DeleteUser(ctx, user)
	u.write.Unlock()
	if err != nil {
		return fmt.Errorf("memory: forget user: %w", err)
	}
	s.observe(ctx, &Event{Kind: EventForget, User: user, All: true, Start: start, Duration: time.Since(start)})
	return nil
}

// List returns a page of user's memories, the most recent first.
func (s *Service) List(ctx context.Context, user string, opts ListOptions) (Page, error) {
	if err := checkUser(user); err != nil {
		return Page{}, err
	}
	return s.store.List(ctx, user, opts)
}
