package geminiinteractions

import (
	"container/list"
	"crypto/sha256"
	"encoding"
	"hash"
	"sync"

	"google.golang.org/genai"
)

// A fingerprint identifies what a content says to the API: the SHA-256 of
// its steps' JSON. Two contents with the same fingerprint make the same
// steps, and so the same history on the server. The zero fingerprint
// stands for "not known yet", and for the empty history.
type fingerprint [sha256.Size]byte

// A history's running fingerprint is the SHA-256 of its contents'
// fingerprints, in order: it says the whole history in 32 bytes, so that
// a node holds its history without its ancestors, and a request is
// checked against it with one comparison. fold returns the hash that
// computes it, going on from state, the marshaled state of a fold (nil
// for the empty history).
func fold(state []byte) hash.Hash {
	h := sha256.New()
	if state != nil {
		if err := h.(encoding.BinaryUnmarshaler).UnmarshalBinary(state); err != nil {
			panic("geminiinteractions: a fold's state does not unmarshal: " + err.Error()) // it came from MarshalBinary
		}
	}
	return h
}

// foldState returns the marshaled state of h, a fold.
func foldState(h hash.Hash) []byte {
	b, err := h.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		panic("geminiinteractions: a fold's state does not marshal: " + err.Error())
	}
	return b
}

// foldSum returns the running fingerprint h has computed so far.
func foldSum(h hash.Hash) (s fingerprint) {
	h.Sum(s[:0])
	return s
}

// An entry is one content a node keeps: the content the loop was handed
// (or sent; nil for an answer the loop joined from hops), its fingerprint,
// and the size of its steps' JSON.
type entry struct {
	ptr  *genai.Content
	fp   fingerprint
	size int64
}

// What a remembered interaction costs beside the JSON of the contents it
// keeps, in bytes, as counted against Config.MaxRememberedBytes: the Go
// values around each content (the content, its parts, the index entry
// that finds its fingerprint by address), and the node itself with its
// index entries. With them, the count is within 15% of the memory taken,
// and above it for short texts (measured on amd64 by
// TestRememberedMemoryBounded).
const (
	contentOverhead = 512
	nodeOverhead    = 512
)

// A node is one interaction this Models created with store. It knows its
// whole history by its length and running fingerprint, and keeps only the
// contents it added to its parent's history (the request's new contents,
// then the model's answer, last): its ancestors are not kept, so that
// what a node holds is its own, and checking a request against it takes
// one comparison, not a walk of the chain.
type node struct {
	id     string
	model  string
	n      int         // contents in its history, its answer last
	base   []byte      // the state of the fold of its history without its answer, for a continuation hop's node to go on from
	sum    fingerprint // the running fingerprint of its history
	kept   []entry     // the contents it added to its parent's history; its answer last
	output *genai.Content
	size   int64         // what it holds, in bytes (see contentOverhead)
	elem   *list.Element // its place in the LRU list

	// foreign marks an interaction named by a continuation token made in
	// another process: its id is known, its history is not. It is never
	// remembered.
	foreign bool
}

// known is what chains know of a content that a remembered node keeps:
// its fingerprint, and how many nodes keep it.
type known struct {
	fp   fingerprint
	refs int
}

// chains holds the interactions a Models created, to know when the
// contents of a request extend exactly what one of them holds. It
// remembers at most max of them, holding at most maxBytes (see
// node.size), the least recently used forgotten first.
type chains struct {
	mu       sync.Mutex
	max      int
	maxBytes int64
	bytes    int64     // held by the remembered nodes
	lru      list.List // of *node, most recent first
	byID     map[string]*node
	byOutput map[fingerprint][]*node  // by their answer's fingerprint
	known    map[*genai.Content]known // the contents the nodes keep, by address
	models   map[string]int           // nodes per model, to skip the search when there is none
	checked  int64                    // nodes a request was checked against, for tests
}

func newChains(max int, maxBytes int64) *chains {
	c := &chains{max: max, maxBytes: maxBytes}
	c.init()
	return c
}

func (c *chains) init() {
	c.lru.Init()
	c.bytes = 0
	c.byID, c.byOutput, c.known, c.models = map[string]*node{}, map[fingerprint][]*node{}, map[*genai.Content]known{}, map[string]int{}
}

// add remembers n, forgetting the least recently used nodes while there
// are more than max or they hold more than maxBytes. A node that alone
// holds more than maxBytes is not remembered.
func (c *chains) add(n *node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.byID[n.id]; old != nil {
		c.removeLocked(old)
	}
	if n.size > c.maxBytes {
		return
	}
	n.elem = c.lru.PushFront(n)
	c.byID[n.id] = n
	for _, e := range n.kept {
		if e.ptr != nil {
			k, ok := c.known[e.ptr]
			if !ok {
				k.fp = e.fp
			}
			k.refs++
			c.known[e.ptr] = k
		}
	}
	out := n.kept[len(n.kept)-1].fp
	c.byOutput[out] = append(c.byOutput[out], n)
	c.models[n.model]++
	c.bytes += n.size
	for c.lru.Len() > c.max || c.bytes > c.maxBytes {
		c.removeLocked(c.lru.Back().Value.(*node))
	}
}

// forget drops the node of interaction id, if it is remembered: the server
// no longer holds it.
func (c *chains) forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.byID[id]; n != nil {
		c.removeLocked(n)
	}
}

// reset forgets every node.
func (c *chains) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
}

func (c *chains) removeLocked(n *node) {
	c.lru.Remove(n.elem)
	delete(c.byID, n.id)
	for _, e := range n.kept {
		if e.ptr == nil {
			continue
		}
		if k := c.known[e.ptr]; k.refs <= 1 {
			delete(c.known, e.ptr)
		} else {
			k.refs--
			c.known[e.ptr] = k
		}
	}
	out := n.kept[len(n.kept)-1].fp
	list := c.byOutput[out]
	for i, o := range list {
		if o == n {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(c.byOutput, out)
	} else {
		c.byOutput[out] = list
	}
	if c.models[n.model]--; c.models[n.model] == 0 {
		delete(c.models, n.model)
	}
	c.bytes -= n.size
}

// match returns the remembered interaction of model whose history is the
// longest prefix of p's contents that leaves at least one content to send,
// and that prefix's length; nil when there is none. A candidate (an
// interaction whose answer is a content of the request, at its place) is
// checked with one comparison, of running fingerprints. The contents'
// fingerprints come from the contents the remembered nodes keep, found by
// address, or are computed from their steps; p keeps them, and the
// running fingerprints of its prefixes.
func (c *chains) match(model string, p *request) (*node, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.models[model] == 0 {
		return nil, 0
	}
	for j := len(p.contents) - 2; j >= 0; j-- {
		for _, n := range c.byOutput[p.fingerprint(j, c.known)] {
			c.checked++
			if n.model == model && n.n == j+1 && n.sum == foldSum(p.foldTo(j+1, c.known)) {
				c.lru.MoveToFront(n.elem)
				return n, j + 1
			}
		}
	}
	return nil, 0
}

// get returns the node of interaction id, or nil.
func (c *chains) get(id string) *node {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byID[id]
}

// held returns the number of nodes remembered and the bytes they hold.
func (c *chains) held() (int, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len(), c.bytes
}
