package lensprocessor

import (
	"container/list"
	"sync"
)

// procKey identifies a process for caching: a pid and its start time, so
// that a reused pid is a different key and never inherits another
// process's job.
type procKey struct {
	pid   int
	start uint64
}

// lru is a bounded least-recently-used cache, safe for concurrent use.
type lru[V any] struct {
	mu    sync.Mutex
	max   int
	order *list.List // front: most recent; values are *lruEntry[V]
	items map[procKey]*list.Element
}

type lruEntry[V any] struct {
	key   procKey
	value V
}

func newLRU[V any](max int) *lru[V] {
	return &lru[V]{max: max, order: list.New(), items: make(map[procKey]*list.Element, min(max, 1024))}
}

func (c *lru[V]) get(k procKey) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*lruEntry[V]).value, true
	}
	var zero V
	return zero, false
}

func (c *lru[V]) add(k procKey, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		e.Value.(*lruEntry[V]).value = v
		c.order.MoveToFront(e)
		return
	}
	c.items[k] = c.order.PushFront(&lruEntry[V]{key: k, value: v})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*lruEntry[V]).key)
	}
}

func (c *lru[V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
