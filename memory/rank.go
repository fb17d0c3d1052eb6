package memory

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus-go/memory/internal/text"
)

// Analyze returns the terms search indexes for s, space-separated: its
// words, lower-cased, without English stop words, stemmed (Porter2), in
// order (see the package documentation, "Ranking"). Stores that keep their
// own index of [Record.Terms] split it on spaces.
func Analyze(s string) string {
	return strings.Join(text.Terms(s), " ")
}

// The ranking's parameters. They were chosen on LoCoMo's two shared
// conversations, each held out in turn (see docs/memory.md).
const (
	bm25K1 = 0.9
	bm25B  = 0.5

	// The weights of the terms of the messages around a message: the one
	// before it (often the question it answers) and the one after.
	beforeWeight = 0.8
	afterWeight  = 0.2

	// authorBoost multiplies the score of a memory whose author the query
	// names, dateBoost that of a memory from a day or month the query
	// names.
	authorBoost = 2.0
	dateBoost   = 2.0

	// recencyBoost is the most a memory gains for being new: a memory of
	// now scores (1+recencyBoost) times one of long ago, one recencyHalfLife
	// old half as much more.
	recencyBoost    = 0.1
	recencyHalfLife = 30 * 24 * time.Hour
)

// A query is a search's text, analyzed once.
type query struct {
	terms    []string        // the query's terms, repeated as often as they occur
	distinct []string        // each once
	words    map[string]bool // its words, lower-cased, stop words included
	periods  []text.Period
	now      time.Time
}

func newQuery(s string, now time.Time) *query {
	q := &query{words: map[string]bool{}, periods: text.Periods(s), now: now}
	text.Scan(s, func(w string, _ int, _ bool) { q.words[w] = true })
	seen := map[string]bool{}
	for _, t := range text.Terms(s) {
		q.terms = append(q.terms, t)
		if !seen[t] {
			seen[t] = true
			q.distinct = append(q.distinct, t)
		}
	}
	return q
}

// scorer scores records for one query with one user's stats. It is used
// by one goroutine.
type scorer struct {
	q                    *query
	idf                  []float64 // of q.distinct
	occ                  []int     // the index in q.distinct of each term of q.terms
	avgTerms, avgContext float64
	tf, ctx              []float64 // scratch: per distinct term
}

func newScorer(q *query, st Stats) *scorer {
	n := float64(max(st.Count, 1))
	s := &scorer{q: q, idf: make([]float64, len(q.distinct)), tf: make([]float64, len(q.distinct)), ctx: make([]float64, len(q.distinct))}
	for i, t := range q.distinct {
		df := float64(st.DF[t])
		s.idf[i] = math.Log(1 + (n-df+0.5)/(df+0.5))
	}
	for _, t := range q.terms {
		s.occ = append(s.occ, slices.Index(q.distinct, t))
	}
	s.avgTerms = max(float64(st.TermsLen)/n, 1)
	s.avgContext = max((beforeWeight*float64(st.BeforeLen)+afterWeight*float64(st.AfterLen))/n, 1)
	return s
}

// score returns r's lexical score: BM25 over its terms, plus BM25 over the
// weighted terms of its neighbours, times the boosts for a named author, a
// named date and recency. A record that holds no term of the query scores 0.
func (s *scorer) score(r *Record) float64 {
	clear(s.tf)
	clear(s.ctx)
	dl := s.count(r.Terms, 1, s.tf)
	cl := s.count(r.Before, beforeWeight, s.ctx) + s.count(r.After, afterWeight, s.ctx)
	var sum float64
	for _, i := range s.occ {
		var part float64
		if f := s.tf[i]; f > 0 {
			part += f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*dl/s.avgTerms))
		}
		if f := s.ctx[i]; f > 0 {
			part += f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*cl/s.avgContext))
		}
		sum += s.idf[i] * part
	}
	if sum == 0 {
		return 0
	}
	if s.namesAuthor(r.Author) {
		sum *= authorBoost
	}
	for _, p := range s.q.periods {
		if !r.Time.IsZero() && p.Contains(r.Time) {
			sum *= dateBoost
			break
		}
	}
	if !r.Time.IsZero() && !s.q.now.IsZero() {
		age := max(s.q.now.Sub(r.Time), 0)
		sum *= 1 + recencyBoost*math.Exp2(-float64(age)/float64(recencyHalfLife))
	}
	return sum
}

// count adds weight to tf[i] for each occurrence in terms (space-separated)
// of the query's i-th distinct term, and returns the weighted number of
// terms, without allocating.
func (s *scorer) count(terms string, weight float64, tf []float64) float64 {
	var n float64
	for len(terms) > 0 {
		end := strings.IndexByte(terms, ' ')
		if end < 0 {
			end = len(terms)
		}
		if w := terms[:end]; w != "" {
			n += weight
			for i, t := range s.q.distinct {
				if t == w {
					tf[i] += weight
					break
				}
			}
		}
		if end == len(terms) {
			break
		}
		terms = terms[end+1:]
	}
	return n
}

// namesAuthor reports whether the query names author: a word of the
// author's name, other than a stop word, is a word of the query. The roles
// of a thread ("user", "model") are not names.
func (s *scorer) namesAuthor(author string) bool {
	if author == "" || author == "user" || author == "model" {
		return false
	}
	named := false
	text.Scan(author, func(w string, _ int, _ bool) {
		if !named && !text.IsStop(w) && s.q.words[w] {
			named = true
		}
	})
	return named
}

// scored is a record and its score.
type scored struct {
	rec   *Record
	score float64
}

// rankLexical scores recs for q and returns those that score above 0, best
// first: ties by time (newer first), then id.
func rankLexical(q *query, st Stats, recs []Record) []scored {
	s := newScorer(q, st)
	out := make([]scored, 0, len(recs))
	for i := range recs {
		if sc := s.score(&recs[i]); sc > 0 {
			out = append(out, scored{&recs[i], sc})
		}
	}
	slices.SortFunc(out, func(a, b scored) int {
		switch {
		case a.score != b.score:
			if a.score > b.score {
				return -1
			}
			return 1
		case !a.rec.Time.Equal(b.rec.Time):
			return b.rec.Time.Compare(a.rec.Time)
		}
		return strings.Compare(a.rec.ID, b.rec.ID)
	})
	return out
}

// matchTerms picks the terms a store matches candidates on: the rarest
// first, as long as the memories holding them total at most budget, and
// always the rarest one. Common terms weigh little in the score (their IDF
// is low) and would make the candidates many; the candidates are still
// scored on every term of the query. (Matching pairs of common terms
// instead costs more than it saves: the full-text indexes then read both
// terms' whole posting lists.)
func matchTerms(distinct []string, st Stats, budget int) []string {
	terms := make([]string, 0, len(distinct))
	for _, t := range distinct {
		if st.DF[t] > 0 {
			terms = append(terms, t)
		}
	}
	slices.SortStableFunc(terms, func(a, b string) int { return st.DF[a] - st.DF[b] })
	total := 0
	for i, t := range terms {
		if i > 0 && total+st.DF[t] > budget {
			return terms[:i]
		}
		total += st.DF[t]
	}
	return terms
}
