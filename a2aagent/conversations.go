package a2aagent

import (
	"container/list"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// convKey names a conversation of ours: the calling run's user
// (agentserver.RunUser) and its conversation (agent.Conversation). The
// zero key names none.
type convKey struct{ user, conversation string }

// conversation is what a RemoteTool remembers of one conversation of
// ours: the remote agent's contextId for it, and its task that waits for
// input. Calls of one conversation hold its slot one at a time, and only
// the call holding it reads or writes contextID and waiting.
type conversation struct {
	key       convKey
	slot      chan struct{}
	refs      int // calls holding or waiting for slot; guarded by conversations.mu
	contextID string
	waiting   *waiting
}

// conversations is a bounded set of conversations, the least recently
// used forgotten first, but never one a call holds or waits for: while
// more conversations than max are in use, the set holds them all.
type conversations struct {
	max int
	mu  sync.Mutex
	m   map[convKey]*list.Element
	lru list.List // of *conversation, the most recent first
}

func newConversations(max int) *conversations {
	return &conversations{max: max, m: map[convKey]*list.Element{}}
}

// acquire returns key's conversation once no other call holds it, or
// ctx's error. A call with no conversation (the zero key) gets one of its
// own. Every conversation acquire returns is given back with release.
func (cs *conversations) acquire(ctx context.Context, key convKey) (*conversation, error) {
	var c *conversation
	if key == (convKey{}) {
		c = &conversation{slot: make(chan struct{}, 1)}
	} else {
		cs.mu.Lock()
		if e := cs.m[key]; e != nil {
			cs.lru.MoveToFront(e)
			c = e.Value.(*conversation)
		} else {
			c = &conversation{key: key, slot: make(chan struct{}, 1)}
			cs.m[key] = cs.lru.PushFront(c)
		}
		c.refs++
		cs.evict()
		cs.mu.Unlock()
	}
	select {
	case c.slot <- struct{}{}:
		return c, nil
	case <-ctx.Done():
		cs.unref(c)
		return nil, ctx.Err()
	}
}

// release gives back a conversation acquire returned.
func (cs *conversations) release(c *conversation) {
	<-c.slot
	cs.unref(c)
}

// unref ends a call's use of c; c may then be forgotten.
func (cs *conversations) unref(c *conversation) {
	if c.key == (convKey{}) {
		return
	}
	cs.mu.Lock()
	c.refs--
	cs.evict()
	cs.mu.Unlock()
}

// evict forgets the least recently used conversations that no call holds
// or waits for, while there are more than max. cs.mu is held.
func (cs *conversations) evict() {
	for e := cs.lru.Back(); e != nil && cs.lru.Len() > cs.max; {
		prev := e.Prev()
		if c := e.Value.(*conversation); c.refs == 0 {
			cs.lru.Remove(e)
			delete(cs.m, c.key)
		}
		e = prev
	}
}

// callInfo is what the transport saw of a call's HTTP exchanges: whether
// the remote agent answered, and the status of its last answer.
type callInfo struct {
	answered bool
	status   int
	tooLarge bool // a response was over the limit
}

type callInfoKey struct{}

// limitedClient returns a copy of hc (http.DefaultClient when nil) whose
// responses are bounded to max bytes each, and whose exchanges a call's
// callInfo sees.
func limitedClient(hc *http.Client, max int64) *http.Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	c := *hc
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = &limitTransport{base: base, max: max}
	return &c
}

type limitTransport struct {
	base http.RoundTripper
	max  int64
}

func (t *limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	info, _ := req.Context().Value(callInfoKey{}).(*callInfo)
	if info != nil {
		info.answered, info.status = true, resp.StatusCode
	}
	resp.Body = &limitedBody{rc: resp.Body, left: t.max, limit: t.max, info: info}
	return resp, nil
}

// errTooLarge is the error of a response over the limit.
type errTooLarge struct{ limit int64 }

func (e *errTooLarge) Error() string {
	return fmt.Sprintf("the response is larger than %d bytes", e.limit)
}

type limitedBody struct {
	rc          io.ReadCloser
	left, limit int64
	info        *callInfo // nil outside a call
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One more byte tells a body of exactly the limit from a larger one.
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			if b.info != nil {
				b.info.tooLarge = true
			}
			return 0, &errTooLarge{b.limit}
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }
