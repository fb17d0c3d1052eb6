package memory

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// SearchOptions narrow a search. The zero value returns the 10 best
// memories of every kind.
type SearchOptions struct {
	// Limit is how many results at most. Zero means 10; at most
	// MaxResults (100).
	Limit int

	// Kinds keeps only memories of these kinds. Empty means every kind.
	Kinds []Kind

	// ExcludeThread leaves out the memories of one thread: the one a run
	// is in, whose messages its history already holds.
	ExcludeThread string
}

func (o *SearchOptions) limit() int {
	switch {
	case o == nil || o.Limit <= 0:
		return 10
	case o.Limit > MaxResults:
		return MaxResults
	}
	return o.Limit
}

func (o *SearchOptions) keep(m *Memory) bool {
	if o == nil {
		return true
	}
	if o.ExcludeThread != "" && m.Thread == o.ExcludeThread {
		return false
	}
	return len(o.Kinds) == 0 || slices.Contains(o.Kinds, m.Kind)
}

// Search returns the memories of user that matter most for query, best
// first (see the package documentation, "Ranking"), with where each came
// from. A query over Config.MaxQueryBytes is refused with ErrTooLarge; a
// query with no word search can match returns nothing, unless embeddings
// are configured. With embeddings, a query that cannot be embedded (an
// outage, a timeout) is answered by the lexical ranking alone, and the
// fallback reported to the Observer and the Logger: Search fails only when
// the store does.
func (s *Service) Search(ctx context.Context, user, query string, opts *SearchOptions) ([]Result, error) {
	if err := checkUser(user); err != nil {
		return nil, err
	}
	if len(query) > s.cfg.MaxQueryBytes {
		return nil, fmt.Errorf("%w: the query has %d bytes, more than the %d the service takes", ErrTooLarge, len(query), s.cfg.MaxQueryBytes)
	}
	if s.isClosed() {
		return nil, ErrClosed
	}
	start := time.Now()
	e := &Event{Kind: EventSearch, User: user, Query: query, Start: start}
	res, err := s.search(ctx, user, query, opts, e)
	e.Results, e.Duration = res, time.Since(start)
	if err != nil {
		e.Err = err
	}
	s.observe(ctx, e)
	return res, err
}

func (s *Service) search(ctx context.Context, user, query string, opts *SearchOptions, e *Event) ([]Result, error) {
	q := newQuery(query, s.now())
	n := opts.limit()
	if s.cfg.Embedder == nil {
		res, _, err := s.lexical(ctx, user, q, opts)
		return res, err
	}
	// Hybrid: the lexical ranking, the vector ranking, fused.
	depth := max(n, fuseDepth)
	lex, _, err := s.lexical(ctx, user, q, &SearchOptions{Limit: depth, Kinds: optKinds(opts), ExcludeThread: optThread(opts)})
	if err != nil {
		return nil, err
	}
	qv, err := s.embedQuery(ctx, query)
	if err != nil {
		e.Fallback, e.Err = true, err
		s.logger.WarnContext(ctx, "memory: the query could not be embedded: the search is lexical", "user", user, "error", err)
		return lex[:min(n, len(lex))], nil
	}
	ids, _, err := s.nearest(ctx, user, qv, depth*2)
	if err != nil {
		return nil, err
	}
	e.Hybrid = true
	return s.fuse(ctx, user, lex, ids, opts, n)
}

func optKinds(o *SearchOptions) []Kind {
	if o == nil {
		return nil
	}
	return o.Kinds
}

func optThread(o *SearchOptions) string {
	if o == nil {
		return ""
	}
	return o.ExcludeThread
}

// lexical returns the lexical ranking of user's memories for q, the best
// opts.limit() that opts keeps, and the stats it used.
func (s *Service) lexical(ctx context.Context, user string, q *query, opts *SearchOptions) ([]Result, Stats, error) {
	if len(q.distinct) == 0 {
		return nil, Stats{}, nil
	}
	st, err := s.store.Stats(ctx, user, q.distinct)
	if err != nil {
		return nil, Stats{}, fmt.Errorf("memory: search: %w", err)
	}
	terms := matchTerms(q.distinct, st, matchBudget)
	if len(terms) == 0 {
		return nil, st, nil
	}
	recs, err := s.store.Match(ctx, user, terms, matchBudget)
	if err != nil {
		return nil, Stats{}, fmt.Errorf("memory: search: %w", err)
	}
	n := opts.limit()
	var out []Result
	for i, sc := range rankLexical(q, st, recs) {
		if !opts.keep(&sc.rec.Memory) {
			continue
		}
		out = append(out, Result{Memory: sc.rec.Memory, Score: sc.score, Lexical: i + 1})
		if len(out) == n {
			break
		}
	}
	return out, st, nil
}

// embedQuery embeds a query, within Config.EmbedTimeout.
func (s *Service) embedQuery(ctx context.Context, query string) ([]float32, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.EmbedTimeout)
	defer cancel()
	vs, err := s.cfg.Embedder.Embed(ctx, []string{query}, EmbedQuery)
	if err == nil && (len(vs) != 1 || len(vs[0]) == 0) {
		err = fmt.Errorf("memory: the embedder returned %d vectors for a query", len(vs))
	}
	if err != nil {
		return nil, err
	}
	return normalize(vs[0]), nil
}

// nearest returns the ids of at most k memories of user nearest v, the
// nearest first, and their similarities: the store's index if it has one,
// else every vector of the user, scored exactly.
func (s *Service) nearest(ctx context.Context, user string, v []float32, k int) ([]string, []float64, error) {
	if vi, ok := s.store.(VectorIndex); ok {
		return vi.Nearest(ctx, user, v, k)
	}
	top := newTopK(k)
	err := s.store.Vectors(ctx, user, func(id string, w []float32) error {
		top.push(id, dot(v, w))
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("memory: search: %w", err)
	}
	ids, sims := top.sorted()
	return ids, sims, nil
}

// fuse merges the lexical results and the vector ranking by reciprocal
// rank fusion, and returns the best n that opts keeps.
func (s *Service) fuse(ctx context.Context, user string, lex []Result, ids []string, opts *SearchOptions, n int) ([]Result, error) {
	byID := make(map[string]*Result, len(lex)+len(ids))
	var order []*Result
	for i := range lex {
		r := &lex[i]
		r.Score = 1.0 / float64(rrfK+r.Lexical)
		byID[r.ID] = r
		order = append(order, r)
	}
	var missing []string
	for _, id := range ids {
		if byID[id] == nil {
			missing = append(missing, id)
		}
	}
	got := map[string]*Record{}
	if len(missing) > 0 {
		recs, err := s.store.Get(ctx, user, missing)
		if err != nil {
			return nil, fmt.Errorf("memory: search: %w", err)
		}
		for i := range recs {
			got[recs[i].ID] = &recs[i]
		}
	}
	// The vector ranking counts the memories opts keeps, in order.
	rank := 0
	for _, id := range ids {
		r := byID[id]
		if r == nil {
			rec := got[id]
			if rec == nil || !opts.keep(&rec.Memory) {
				continue
			}
			r = &Result{Memory: rec.Memory}
			byID[id] = r
			order = append(order, r)
		}
		rank++
		r.Vector = rank
		r.Score += 1.0 / float64(rrfK+rank)
	}
	out := make([]Result, len(order))
	for i, r := range order {
		out[i] = *r
	}
	slices.SortStableFunc(out, func(a, b Result) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	return out[:min(n, len(out))], nil
}

// topK keeps the k ids with the highest scores.
type topK struct {
	k     int
	ids   []string
	score []float64
}

func newTopK(k int) *topK { return &topK{k: k} }

func (t *topK) push(id string, score float64) {
	if len(t.ids) < t.k {
		t.ids = append(t.ids, id)
		t.score = append(t.score, score)
		t.up(len(t.ids) - 1)
		return
	}
	if t.k == 0 || score <= t.score[0] {
		return
	}
	t.ids[0], t.score[0] = id, score
	t.down(0)
}

// A min-heap on score: the root is the lowest kept.
func (t *topK) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if t.score[p] <= t.score[i] {
			return
		}
		t.swap(i, p)
		i = p
	}
}

func (t *topK) down(i int) {
	n := len(t.ids)
	for {
		l, small := 2*i+1, i
		if l < n && t.score[l] < t.score[small] {
			small = l
		}
		if r := l + 1; r < n && t.score[r] < t.score[small] {
			small = r
		}
		if small == i {
			return
		}
		t.swap(i, small)
		i = small
	}
}

func (t *topK) swap(i, j int) {
	t.ids[i], t.ids[j] = t.ids[j], t.ids[i]
	t.score[i], t.score[j] = t.score[j], t.score[i]
}

// sorted returns the ids kept, the highest score first, and their scores.
func (t *topK) sorted() ([]string, []float64) {
	idx := make([]int, len(t.ids))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		switch {
		case t.score[a] > t.score[b]:
			return -1
		case t.score[a] < t.score[b]:
			return 1
		}
		return 0
	})
	ids := make([]string, len(idx))
	scores := make([]float64, len(idx))
	for i, j := range idx {
		ids[i], scores[i] = t.ids[j], t.score[j]
	}
	return ids, scores
}
