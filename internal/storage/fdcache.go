package storage

import (
	"container/list"
	"sync"
)

// fdCache is the manager-wide budget of open segment file descriptors, kept
// as an LRU of segments. Touching a segment may evict the least recently
// used ones; eviction closes their files (or marks them for closing once
// their in-flight users release them) and they reopen on next use.
//
// Lock order: a segment's mu may be held while calling into the cache;
// the cache never holds its mu while locking a segment.
type fdCache struct {
	mu     sync.Mutex
	budget int
	open   int
	lru    list.List // of *cacheEntry, front = most recent
	byseg  map[*segment]*list.Element
}

type cacheEntry struct {
	seg *segment
	fds int
}

func newFDCache(budget int) *fdCache {
	return &fdCache{budget: budget, byseg: make(map[*segment]*list.Element)}
}

// touch records that s is in use holding fds descriptors, and evicts least
// recently used segments while over budget.
func (c *fdCache) touch(s *segment, fds int) {
	c.mu.Lock()
	if e, ok := c.byseg[s]; ok {
		ce := e.Value.(*cacheEntry)
		c.open += fds - ce.fds
		ce.fds = fds
		c.lru.MoveToFront(e)
	} else {
		c.byseg[s] = c.lru.PushFront(&cacheEntry{seg: s, fds: fds})
		c.open += fds
	}
	var victims []*segment
	for c.open > c.budget {
		e := c.lru.Back()
		ce := e.Value.(*cacheEntry)
		if ce.seg == s {
			break
		}
		c.removeLocked(e)
		victims = append(victims, ce.seg)
	}
	c.mu.Unlock()
	for _, v := range victims {
		v.evict()
	}
}

// forget drops s from the cache after its files were closed.
func (c *fdCache) forget(s *segment) {
	c.mu.Lock()
	if e, ok := c.byseg[s]; ok {
		c.removeLocked(e)
	}
	c.mu.Unlock()
}

func (c *fdCache) removeLocked(e *list.Element) {
	ce := e.Value.(*cacheEntry)
	c.open -= ce.fds
	delete(c.byseg, ce.seg)
	c.lru.Remove(e)
}

// openCount reports the descriptors the cache accounts for.
func (c *fdCache) openCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.open
}
