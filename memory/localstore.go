package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// NewStore returns a [Store] that keeps memories in this process, lost when
// it ends: for tests, examples and programs that need no persistence. It
// keeps an inverted index per user, so that search reads only the
// memories that hold a query's terms.
func NewStore() Store {
	return &localStore{users: map[string]*localUser{}}
}

type localStore struct {
	mu    sync.RWMutex
	users map[string]*localUser
	seq   int64 // orders additions across users
}

type localUser struct {
	recs     map[string]*localRec
	messages map[string]string              // thread + "\x00" + message -> id
	postings map[string]map[string]struct{} // term -> ids
	stats    Stats                          // DF holds every term
}

type localRec struct {
	Record
	seq int64
}

func (s *localStore) user(user string, create bool) *localUser {
	u := s.users[user]
	if u == nil && create {
		u = &localUser{recs: map[string]*localRec{}, messages: map[string]string{},
			postings: map[string]map[string]struct{}{}, stats: Stats{DF: map[string]int{}}}
		s.users[user] = u
	}
	return u
}

func messageKey(thread string, message int) string {
	return thread + "\x00" + strconv.Itoa(message)
}

func (u *localUser) add(r Record, seq int64) {
	r.Vector = slices.Clone(r.Vector)
	u.recs[r.ID] = &localRec{r, seq}
	if r.Kind == KindMessage && r.Thread != "" {
		u.messages[messageKey(r.Thread, r.Message)] = r.ID
	}
	for _, t := range DistinctTerms(&r) {
		p := u.postings[t]
		if p == nil {
			p = map[string]struct{}{}
			u.postings[t] = p
		}
		p[r.ID] = struct{}{}
		u.stats.DF[t]++
	}
	u.stats.Count++
	u.stats.TermsLen += TermCount(r.Terms)
	u.stats.BeforeLen += TermCount(r.Before)
	u.stats.AfterLen += TermCount(r.After)
}

func (u *localUser) remove(id string) bool {
	lr := u.recs[id]
	if lr == nil {
		return false
	}
	r := &lr.Record
	delete(u.recs, id)
	if k := messageKey(r.Thread, r.Message); r.Kind == KindMessage && u.messages[k] == id {
		delete(u.messages, k)
	}
	for _, t := range DistinctTerms(r) {
		delete(u.postings[t], id)
		if len(u.postings[t]) == 0 {
			delete(u.postings, t)
		}
		if u.stats.DF[t]--; u.stats.DF[t] <= 0 {
			delete(u.stats.DF, t)
		}
	}
	u.stats.Count--
	u.stats.TermsLen -= TermCount(r.Terms)
	u.stats.BeforeLen -= TermCount(r.Before)
	u.stats.AfterLen -= TermCount(r.After)
	return true
}

func (s *localStore) Add(ctx context.Context, user string, recs []Record) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := CheckRecords(user, recs); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addLocked(user, recs), nil
}

func (s *localStore) addLocked(user string, recs []Record) []string {
	u := s.user(user, true)
	var added []string
	for _, r := range recs {
		if r.Kind == KindMessage && r.Thread != "" {
			if _, ok := u.messages[messageKey(r.Thread, r.Message)]; ok {
				continue
			}
		}
		if _, ok := u.recs[r.ID]; ok {
			continue
		}
		s.seq++
		r.User = user
		u.add(r, s.seq)
		added = append(added, r.ID)
	}
	return added
}

func (s *localStore) Replace(ctx context.Context, user string, add []Record, remove []string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := CheckRecords(user, add); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if u := s.user(user, false); u != nil {
		for _, id := range remove {
			u.remove(id)
		}
	}
	s.addLocked(user, add)
	s.dropIfEmpty(user)
	return nil
}

func (s *localStore) dropIfEmpty(user string) {
	if u := s.users[user]; u != nil && len(u.recs) == 0 {
		delete(s.users, user)
	}
}

func (s *localStore) Stats(ctx context.Context, user string, terms []string) (Stats, error) {
	if err := ctx.Err(); err != nil {
		return Stats{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := Stats{DF: make(map[string]int, len(terms))}
	u := s.user(user, false)
	if u == nil {
		return st, nil
	}
	st.Count, st.TermsLen, st.BeforeLen, st.AfterLen = u.stats.Count, u.stats.TermsLen, u.stats.BeforeLen, u.stats.AfterLen
	for _, t := range terms {
		if df := u.stats.DF[t]; df > 0 {
			st.DF[t] = df
		}
	}
	return st, nil
}

func (s *localStore) Match(ctx context.Context, user string, terms []string, limit int) ([]Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	u := s.user(user, false)
	if u == nil || limit <= 0 {
		return nil, nil
	}
	ids := map[string]struct{}{}
	for _, t := range terms {
		for id := range u.postings[t] {
			ids[id] = struct{}{}
		}
	}
	found := make([]*localRec, 0, len(ids))
	for id := range ids {
		found = append(found, u.recs[id])
	}
	if len(found) > limit {
		slices.SortFunc(found, func(a, b *localRec) int { return cmp.Compare(b.seq, a.seq) })
		found = found[:limit]
	}
	out := make([]Record, len(found))
	for i, lr := range found {
		out[i] = lr.Record
		out[i].Vector = nil
	}
	return out, nil
}

func (s *localStore) Get(ctx context.Context, user string, ids []string) ([]Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	u := s.user(user, false)
	if u == nil {
		return nil, nil
	}
	var out []Record
	for _, id := range ids {
		if lr := u.recs[id]; lr != nil {
			r := lr.Record
			r.Vector = nil
			out = append(out, r)
		}
	}
	return out, nil
}

func (s *localStore) List(ctx context.Context, user string, opts ListOptions) (Page, error) {
	if err := ctx.Err(); err != nil {
		return Page{}, err
	}
	var after int64
	var afterID string
	if opts.Cursor != "" {
		var err error
		if after, afterID, err = DecodeCursor(opts.Cursor); err != nil {
			return Page{}, err
		}
	}
	s.mu.RLock()
	u := s.user(user, false)
	var all []Memory
	if u != nil {
		for _, lr := range u.recs {
			all = append(all, lr.Memory)
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(all, compareListed)
	if opts.Cursor != "" {
		i, _ := slices.BinarySearchFunc(all, Memory{ID: afterID}, func(m, _ Memory) int {
			return compareKey(timeKey(m.Time), m.ID, after, afterID)
		})
		all = all[i:]
		if len(all) > 0 && all[0].ID == afterID {
			all = all[1:]
		}
	}
	n := ListLimit(opts)
	var p Page
	if len(all) > n {
		all = all[:n]
		last := all[n-1]
		p.Next = EncodeCursor(last.Time, last.ID)
	}
	p.Memories = all
	return p, nil
}

// compareListed orders memories as List returns them: newest first, ties
// by id descending.
func compareListed(a, b Memory) int {
	return compareKey(timeKey(a.Time), a.ID, timeKey(b.Time), b.ID)
}

func compareKey(at int64, aid string, bt int64, bid string) int {
	if at != bt {
		return cmp.Compare(bt, at)
	}
	return strings.Compare(bid, aid)
}

func (s *localStore) Delete(ctx context.Context, user, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.user(user, false)
	if u == nil || !u.remove(id) {
		return fmt.Errorf("%w: memory %q", ErrNotFound, id)
	}
	s.dropIfEmpty(user)
	return nil
}

func (s *localStore) DeleteUser(ctx context.Context, user string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.users, user)
	return nil
}

func (s *localStore) SetVectors(ctx context.Context, user string, vectors map[string][]float32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.user(user, false)
	if u == nil {
		return nil
	}
	for id, v := range vectors {
		if lr := u.recs[id]; lr != nil {
			lr.Vector = slices.Clone(v)
		}
	}
	return nil
}

func (s *localStore) Unembedded(ctx context.Context, user string, limit int) ([]Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	u := s.user(user, false)
	if u == nil {
		return nil, nil
	}
	var found []*localRec
	for _, lr := range u.recs {
		if lr.Vector == nil {
			found = append(found, lr)
		}
	}
	slices.SortFunc(found, func(a, b *localRec) int { return cmp.Compare(a.seq, b.seq) })
	if len(found) > limit {
		found = found[:max(limit, 0)]
	}
	out := make([]Record, len(found))
	for i, lr := range found {
		out[i] = lr.Record
	}
	return out, nil
}

func (s *localStore) Vectors(ctx context.Context, user string, f func(id string, v []float32) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.RLock()
	u := s.user(user, false)
	type iv struct {
		id string
		v  []float32
	}
	var vs []iv
	if u != nil {
		for id, lr := range u.recs {
			if lr.Vector != nil {
				vs = append(vs, iv{id, lr.Vector})
			}
		}
	}
	s.mu.RUnlock()
	for _, x := range vs {
		if err := f(x.id, x.v); err != nil {
			return err
		}
	}
	return ctx.Err()
}
