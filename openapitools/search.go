package openapitools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolnexus/toolnexus-go/internal/toolname"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// The search mode's tools and their arguments.
const (
	searchToolName = "search_operations"
	callToolName   = "call_operation"
	argQuery       = "query"
	argLimit       = "limit"
	argOperation   = "operation"
	argArguments   = "arguments"
	// defaultSearchLimit and maxSearchLimit bound the operations a search
	// lists.
	defaultSearchLimit = 5
	maxSearchLimit     = 20
	// searchSchemaBudget bounds the bytes of input schemas a search
	// answer carries: past it, operations are listed without theirs.
	searchSchemaBudget = 24 << 10
)

// searchIndex is what the search mode searches: a document per operation
// that has a tool.
type searchIndex struct {
	searchName, callName string
	docs                 []searchDoc
}

type searchDoc struct {
	op *Operation
	// strong holds the words of the name, path, summary and tags;
	// weak those of the description.
	strong, weak []string
}

func newSearchIndex(a *API) *searchIndex {
	idx := &searchIndex{
		searchName: toolname.Gemini(a.opts.Prefix, searchToolName),
		callName:   toolname.Gemini(a.opts.Prefix, callToolName),
	}
	for _, op := range a.ops {
		if op.Tool == nil {
			continue
		}
		strong := words(op.Name + " " + op.OperationID + " " + op.Method + " " + op.Path + " " + op.Summary + " " + strings.Join(op.Tags, " "))
		idx.docs = append(idx.docs, searchDoc{op: op, strong: strong, weak: words(op.Description)})
	}
	return idx
}

// words splits text into lower-case words, at anything but letters and
// digits, and between a lower-case letter and an upper-case one
// (listCustomers: list, customers).
func words(text string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	var prev rune
	for _, r := range text {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if unicode.IsUpper(r) && unicode.IsLower(prev) {
				flush()
			}
			cur = append(cur, r)
		default:
			flush()
		}
		prev = r
	}
	flush()
	return out
}

// matches reports whether a query word matches a word of a document: the
// same, or one a prefix of the other, both at least 3 letters long
// (customer, customers).
func matches(q, w string) bool {
	if q == w {
		return true
	}
	if len(q) < 3 || len(w) < 3 {
		return false
	}
	return strings.HasPrefix(w, q) || strings.HasPrefix(q, w)
}

// search ranks the operations for a query: 3 points for each query word
// in the name, path, summary or tags, 1 for one only in the description;
// an operation named exactly as the query comes first.
func (idx *searchIndex) search(query string, limit int) (found []*Operation, total int) {
	var qs []string
	for _, w := range words(query) {
		if !stopWords[w] {
			qs = append(qs, w)
		}
	}
	type scored struct {
		op    *Operation
		score int
		order int
	}
	var hits []scored
	for i, d := range idx.docs {
		score := 0
		if strings.EqualFold(strings.TrimSpace(query), d.op.Name) {
			score = 1 << 20
		}
		for _, q := range qs {
			switch {
			case containsMatch(d.strong, q):
				score += 3
			case containsMatch(d.weak, q):
				score++
			}
		}
		if score > 0 {
			hits = append(hits, scored{d.op, score, i})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
	for i := 0; i < len(hits) && i < limit; i++ {
		found = append(found, hits[i].op)
	}
	return found, len(hits)
}

// stopWords are left out of queries: they match everywhere.
var stopWords = map[string]bool{"a": true, "an": true, "the": true, "of": true, "to": true, "for": true, "and": true,
	"or": true, "in": true, "on": true, "by": true, "with": true, "from": true, "is": true, "all": true, "my": true}

func containsMatch(ws []string, q string) bool {
	for _, w := range ws {
		if matches(q, w) {
			return true
		}
	}
	return false
}

// SearchTools returns the search mode's two tools, for an API too large
// to declare each operation to the model: search_operations lists the
// operations that match a query, each with its arguments' schema, and
// call_operation calls one by name with its arguments, which are
// validated against that operation's schema before any request, as its
// own tool would. The model then reads two short declarations on every
// call instead of hundreds (see BENCHMARKS.md). Both names take
// Options.Prefix; [API.NeedsApproval] applies each operation's approval to
// call_operation's calls of it.
func (a *API) SearchTools() []*toolset.Tool {
	idx := a.search
	limitMax := float64(maxSearchLimit)
	limitMin := 1.0
	search := &toolset.Tool{
		Name: idx.searchName,
		Description: cut(fmt.Sprintf("Searches the operations of the %s API and lists those that match, best first, each with the "+
			"schema of its arguments. Call one with %s.", apiName(a), idx.callName), 512),
		InputSchema: &jsonschema.Schema{
			Type: "object",
			Properties: map[string]*jsonschema.Schema{
				argQuery: {Type: "string", Description: "Words to look for in the operations' names, paths and descriptions, " +
					"such as \"list customers\"; an operation's exact name finds it."},
				argLimit: {Type: "integer", Minimum: &limitMin, Maximum: &limitMax,
					Description: fmt.Sprintf("How many operations to list at most; %d when not given.", defaultSearchLimit)},
			},
			Required:             []string{argQuery},
			PropertyOrder:        []string{argQuery, argLimit},
			AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
		},
		ReadOnly: true,
		Run:      a.runSearch,
	}
	call := &toolset.Tool{
		Name: idx.callName,
		Description: fmt.Sprintf("Calls an operation of the %s API that %s listed, with arguments that follow its schema, "+
			"and returns the HTTP answer.", apiName(a), idx.searchName),
		InputSchema: &jsonschema.Schema{
			Type: "object",
			Properties: map[string]*jsonschema.Schema{
				argOperation: {Type: "string", Description: "The operation's name, as " + idx.searchName + " lists it."},
				argArguments: {Type: "object", Description: "The operation's arguments, as its schema says; {} when it takes none."},
			},
			Required:             []string{argOperation},
			PropertyOrder:        []string{argOperation, argArguments},
			AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
		},
		Run: a.runCall,
	}
	return []*toolset.Tool{search, call}
}

func apiName(a *API) string {
	if a.Title != "" {
		return a.Title
	}
	return "described"
}

// A searchHit is one operation a search lists.
type searchHit struct {
	Name        string             `json:"name"`
	Method      string             `json:"method"`
	Path        string             `json:"path"`
	Description string             `json:"description,omitempty"`
	Arguments   *jsonschema.Schema `json:"arguments,omitempty"`
	Note        string             `json:"note,omitempty"`
}

func (a *API) runSearch(_ context.Context, args map[string]any) (any, error) {
	query, _ := args[argQuery].(string)
	limit := defaultSearchLimit
	if l, ok := args[argLimit].(float64); ok {
		limit = int(l)
	}
	found, total := a.search.search(query, limit)
	hits := make([]searchHit, 0, len(found))
	budget := searchSchemaBudget
	for _, op := range found {
		h := searchHit{Name: op.Name, Method: op.Method, Path: op.Path, Description: cut(op.Tool.Description, 300)}
		if b, err := json.Marshal(op.Tool.Schema()); err == nil && len(b) <= budget {
			h.Arguments, budget = op.Tool.Schema(), budget-len(b)
		} else {
			h.Note = fmt.Sprintf("arguments not shown (this answer is full): search for %q to see them", op.Name)
		}
		hits = append(hits, h)
	}
	out := map[string]any{"operations": hits, "matches": total}
	if total == 0 {
		out["note"] = "no operation matches: try other words"
	}
	return out, nil
}

// errNoOperation is the error of a call of an operation the API lacks.
var errNoOperation = errors.New("no such operation")

func (a *API) runCall(ctx context.Context, args map[string]any) (any, error) {
	name, _ := args[argOperation].(string)
	op, ok := a.byName[name]
	switch {
	case !ok:
		return nil, fmt.Errorf("%w: %q; use %s to find the operation's name", errNoOperation, name, a.search.searchName)
	case op.Tool == nil:
		return nil, fmt.Errorf("%w: %q cannot be called: %v", errNoOperation, name, op.Err)
	}
	inner, _ := args[argArguments].(map[string]any)
	r := op.Tool.Execute(ctx, inner)
	if r.IsError {
		msg, _ := r.Output.(string)
		if r.Err != nil {
			return nil, &callError{msg: msg, err: r.Err}
		}
		return nil, errors.New(msg)
	}
	if len(r.Media) > 0 {
		return toolset.MediaOutput{Output: r.Output, Media: r.Media}, nil
	}
	return r.Output, nil
}

// callError carries the message the operation's own tool gave the model,
// and the error behind it (toolset.ErrInvalidArguments, say).
type callError struct {
	msg string
	err error
}

func (e *callError) Error() string { return e.msg }
func (e *callError) Unwrap() error { return e.err }
