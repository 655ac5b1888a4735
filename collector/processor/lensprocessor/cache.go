package lensprocessor

import (
	"container/list"
	"sync"
)

// procKey identifies a process: a pid and its start time, so that a
// reused pid is a different process and never inherits another's job.
type procKey struct {
	pid   int
	start uint64
}

// lru is a bounded least-recently-used cache, safe for concurrent use.
// evict is called, under the cache's lock, with each value it drops.
type lru[K comparable, V any] struct {
	mu    sync.Mutex
	max   int
	order *list.List // front: most recent; values are *lruEntry[K, V]
	items map[K]*list.Element
	evict func(V)
}

type lruEntry[K comparable, V any] struct {
	key   K
	value V
}

func newLRU[K comparable, V any](max int, evict func(V)) *lru[K, V] {
	if evict == nil {
		evict = func(V) {}
	}
	return &lru[K, V]{max: max, order: list.New(), items: make(map[K]*list.Element, min(max, 1024)), evict: evict}
}

// get returns k's value when valid(value) holds, called under the lock
// (so that no eviction closes what valid uses); an invalid value is
// dropped.
func (c *lru[K, V]) get(k K, valid func(V) bool) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var zero V
	e, ok := c.items[k]
	if !ok {
		return zero, false
	}
	v := e.Value.(*lruEntry[K, V]).value
	if valid != nil && !valid(v) {
		c.order.Remove(e)
		delete(c.items, k)
		c.evict(v)
		return zero, false
	}
	c.order.MoveToFront(e)
	return v, true
}

func (c *lru[K, V]) add(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		le := e.Value.(*lruEntry[K, V])
		c.evict(le.value)
		le.value = v
		c.order.MoveToFront(e)
		return
	}
	c.items[k] = c.order.PushFront(&lruEntry[K, V]{key: k, value: v})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		le := last.Value.(*lruEntry[K, V])
		delete(c.items, le.key)
		c.evict(le.value)
	}
}

func (c *lru[K, V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
