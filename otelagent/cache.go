package otelagent

import "sync"

// maxCached bounds each cache: beyond it, values are made on every use
// instead of kept. The keys are model names, tool names, finish reasons
// and error types, which are few in practice.
const maxCached = 256

// A cache keeps values made from keys, so that what each model or tool
// call would otherwise build again (a span name, a metric attribute set)
// is built once. It is safe for concurrent use; its zero value is empty.
type cache[K comparable, V any] struct {
	mu sync.RWMutex
	m  map[K]V
}

// get returns the value of k, making it with make the first time.
func (c *cache[K, V]) get(k K, make func(K) V) V {
	c.mu.RLock()
	v, ok := c.m[k]
	c.mu.RUnlock()
	if ok {
		return v
	}
	v = make(k)
	c.mu.Lock()
	if c.m == nil {
		c.m = map[K]V{}
	}
	if len(c.m) < maxCached {
		c.m[k] = v
	}
	c.mu.Unlock()
	return v
}
