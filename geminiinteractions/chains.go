package geminiinteractions

import (
	"container/list"
	"crypto/sha256"
	"sync"

	"google.golang.org/genai"
)

// A fingerprint identifies what a content says to the API: the SHA-256 of
// its steps' JSON. Two contents with the same fingerprint make the same
// steps, and so the same history on the server.
type fingerprint [sha256.Size]byte

// An entry is one content of a chain: the content the loop was handed (or
// sent), and its fingerprint.
type entry struct {
	ptr *genai.Content
	fp  fingerprint
}

// A node is one interaction this Models created with store: the contents it
// added to its parent's history (the request's new contents, then the
// model's answer, last), so that its whole history is its parent's
// followed by these.
type node struct {
	id     string
	model  string
	parent *node
	n      int     // contents in the history through this node
	added  []entry // the contents this interaction added; the answer last
	output *genai.Content
	elem   *list.Element // its place in the LRU list

	// foreign marks an interaction named by a continuation token made in
	// another process: its id is known, its history is not. It is never
	// remembered.
	foreign bool
}

// chains holds the interactions a Models created, to know when the
// contents of a request extend exactly what one of them holds. It
// remembers at most max of them, the least recently used forgotten first.
type chains struct {
	mu       sync.Mutex
	max      int
	lru      list.List // of *node, most recent first
	byID     map[string]*node
	byPtr    map[*genai.Content]*node // by their answer's address
	byOutput map[fingerprint][]*node  // by their answer's fingerprint
	models   map[string]int           // nodes per model, to skip the search when there is none
}

func newChains(max int) *chains {
	return &chains{max: max, byID: map[string]*node{}, byPtr: map[*genai.Content]*node{},
		byOutput: map[fingerprint][]*node{}, models: map[string]int{}}
}

// add remembers n, forgetting the least recently used node when there are
// more than max.
func (c *chains) add(n *node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.byID[n.id]; old != nil {
		c.removeLocked(old)
	}
	n.elem = c.lru.PushFront(n)
	c.byID[n.id] = n
	last := n.added[len(n.added)-1]
	if last.ptr != nil {
		c.byPtr[last.ptr] = n
	}
	c.byOutput[last.fp] = append(c.byOutput[last.fp], n)
	c.models[n.model]++
	for c.lru.Len() > c.max {
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
	c.lru.Init()
	c.byID, c.byPtr, c.byOutput, c.models = map[string]*node{}, map[*genai.Content]*node{}, map[fingerprint][]*node{}, map[string]int{}
}

func (c *chains) removeLocked(n *node) {
	c.lru.Remove(n.elem)
	delete(c.byID, n.id)
	last := n.added[len(n.added)-1]
	if c.byPtr[last.ptr] == n {
		delete(c.byPtr, last.ptr)
	}
	list := c.byOutput[last.fp]
	for i, o := range list {
		if o == n {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(c.byOutput, last.fp)
	} else {
		c.byOutput[last.fp] = list
	}
	if c.models[n.model]--; c.models[n.model] == 0 {
		delete(c.models, n.model)
	}
}

// match returns the remembered interaction of model whose history is the
// longest prefix of contents that leaves at least one content to send,
// and that prefix's length; nil when there is none. fp computes a
// content's fingerprint (the caller caches them).
func (c *chains) match(model string, contents []*genai.Content, fp func(i int) fingerprint) (*node, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.models[model] == 0 {
		return nil, 0
	}
	for j := len(contents) - 2; j >= 0; j-- {
		if n := c.byPtr[contents[j]]; n != nil && n.model == model && n.n == j+1 && c.verifyLocked(n, contents, fp) {
			c.lru.MoveToFront(n.elem)
			return n, j + 1
		}
		for _, n := range c.byOutput[fp(j)] {
			if n.model == model && n.n == j+1 && c.verifyLocked(n, contents, fp) {
				c.lru.MoveToFront(n.elem)
				return n, j + 1
			}
		}
	}
	return nil, 0
}

// verifyLocked reports whether contents[:n.n] are n's history: each is the
// content the chain recorded, or one with the same fingerprint.
func (c *chains) verifyLocked(n *node, contents []*genai.Content, fp func(i int) fingerprint) bool {
	i := n.n
	for nd := n; nd != nil; nd = nd.parent {
		for k := len(nd.added) - 1; k >= 0; k-- {
			i--
			if i < 0 {
				return false
			}
			if e := nd.added[k]; contents[i] != e.ptr && fp(i) != e.fp {
				return false
			}
		}
	}
	return i == 0
}

// get returns the node of interaction id, or nil.
func (c *chains) get(id string) *node {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byID[id]
}
