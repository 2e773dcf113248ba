package memstore

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/samsa-kafka/samsa/internal/metastore"
)

// watcher is one watch: an unbounded FIFO filled under the store's lock and
// drained into out by the watcher's own goroutine.
type watcher struct {
	s      *Store
	client *Client
	key    string
	prefix bool

	mu    sync.Mutex
	queue []metastore.WatchResponse
	wake  chan struct{}
	out   chan metastore.WatchResponse
}

func (c *Client) watch(ctx context.Context, key string, prefix bool, fromRev int64) <-chan metastore.WatchResponse {
	w := &watcher{
		s: c.s, client: c, key: key, prefix: prefix,
		wake: make(chan struct{}, 1),
		out:  make(chan metastore.WatchResponse),
	}
	s := c.s
	s.mu.Lock()
	switch {
	case c.closed || s.closed:
		w.push(metastore.WatchResponse{Err: metastore.ErrClosed, Revision: s.rev})
	case fromRev > 0 && fromRev <= s.compactRev:
		w.push(metastore.WatchResponse{
			Err:      fmt.Errorf("memstore: watch %q from revision %d: %w (compacted at %d)", key, fromRev, metastore.ErrCompacted, s.compactRev),
			Revision: s.compactRev,
		})
	default:
		if fromRev > 0 {
			for i := s.historyIndex(fromRev); i < len(s.history); i++ {
				w.deliver(s.history[i].rev, s.history[i].events)
			}
		}
		s.watchers[w] = struct{}{}
		if c.watchers == nil {
			c.watchers = make(map[*watcher]struct{})
		}
		c.watchers[w] = struct{}{}
	}
	s.mu.Unlock()
	go w.run(ctx)
	return w.out
}

func (w *watcher) matches(key string) bool {
	if w.prefix {
		return strings.HasPrefix(key, w.key)
	}
	return key == w.key
}

// deliver queues the events of one revision that match the watch. Called
// with the store's lock held.
func (w *watcher) deliver(rev int64, events []metastore.Event) {
	var mine []metastore.Event
	for _, ev := range events {
		if w.matches(ev.KV.Key) {
			mine = append(mine, copyEvent(ev))
		}
	}
	if len(mine) > 0 {
		w.push(metastore.WatchResponse{Events: mine, Revision: rev})
	}
}

func (w *watcher) push(r metastore.WatchResponse) {
	w.mu.Lock()
	w.queue = append(w.queue, r)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// endWatcherLocked queues a final error response and unregisters w.
func (s *Store) endWatcherLocked(w *watcher, err error) {
	if _, ok := s.watchers[w]; !ok {
		return
	}
	delete(s.watchers, w)
	delete(w.client.watchers, w)
	w.push(metastore.WatchResponse{Err: err, Revision: s.rev})
}

// run drains the queue into out until an error response was sent or ctx
// ends; then it unregisters the watcher and closes out.
func (w *watcher) run(ctx context.Context) {
	defer close(w.out)
	defer func() {
		w.s.mu.Lock()
		delete(w.s.watchers, w)
		delete(w.client.watchers, w)
		w.s.mu.Unlock()
	}()
	for {
		w.mu.Lock()
		q := w.queue
		w.queue = nil
		w.mu.Unlock()
		for _, r := range q {
			select {
			case w.out <- r:
			case <-ctx.Done():
				return
			}
			if r.Err != nil {
				return
			}
		}
		select {
		case <-w.wake:
		case <-ctx.Done():
			return
		}
	}
}
