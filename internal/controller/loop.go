package controller

import (
	"context"
	"sync"
	"time"

	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/metastore"
)

// Loop is the controller's event manager: one goroutine takes events from
// an unbounded queue and hands them to the Controller; store watches and
// broker responses only enqueue.
type Loop struct {
	c     *Controller
	store metastore.Store

	mu     sync.Mutex
	queue  []Event
	signal chan struct{}
}

// NewLoop wraps c. Run starts it.
func NewLoop(c *Controller) *Loop {
	l := &Loop{c: c, store: c.cfg.Store, signal: make(chan struct{}, 1)}
	c.enqueue = l.Enqueue
	return l
}

// Enqueue adds an event; safe from any goroutine, never blocks.
func (l *Loop) Enqueue(ev Event) {
	l.mu.Lock()
	l.queue = append(l.queue, ev)
	l.mu.Unlock()
	select {
	case l.signal <- struct{}{}:
	default:
	}
}

// Run starts the store watches, then processes events until ctx ends, when
// the controller resigns.
func (l *Loop) Run(ctx context.Context) {
	var wg sync.WaitGroup
	l.watch(ctx, &wg, metadata.ControllerKey, false, func([]metastore.Event) Event { return ControllerChange{} })
	l.watch(ctx, &wg, metadata.BrokerIDsPrefix, true, func([]metastore.Event) Event { return BrokerChange{} })
	l.watch(ctx, &wg, metadata.TopicsPrefix, true, topicChange)
	l.watch(ctx, &wg, metadata.DeleteTopicsPrefix, true, func([]metastore.Event) Event { return DeleteTopics{} })
	defer wg.Wait()
	for {
		select {
		case <-ctx.Done():
			l.c.Handle(context.Background(), Expire{})
			return
		case <-l.signal:
		}
		for {
			l.mu.Lock()
			if len(l.queue) == 0 {
				l.mu.Unlock()
				break
			}
			ev := l.queue[0]
			l.queue[0] = nil
			l.queue = l.queue[1:]
			l.mu.Unlock()
			l.c.Handle(ctx, ev)
			if ctx.Err() != nil {
				break
			}
		}
	}
}

// topicChange keeps only topic-level assignment writes.
func topicChange(evs []metastore.Event) Event {
	var kvs []metastore.KV
	for _, e := range evs {
		if _, p, ok := metadata.ParseTopicsKey(e.KV.Key); ok && p < 0 && e.Type == metastore.EventPut {
			kvs = append(kvs, e.KV)
		}
	}
	if len(kvs) == 0 {
		return nil
	}
	return TopicChange{KVs: kvs}
}

// watch follows key (or prefix) from the current revision and turns each
// batch of changes into an event. A broken watch (compaction) restarts from
// a fresh read, enqueuing a resync.
func (l *Loop) watch(ctx context.Context, wg *sync.WaitGroup, key string, prefix bool, conv func([]metastore.Event) Event) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			kvs, rev, err := l.store.List(ctx, key)
			if err != nil {
				select {
				case <-ctx.Done():
				case <-time.After(200 * time.Millisecond):
				}
				continue
			}
			var ch <-chan metastore.WatchResponse
			if prefix {
				ch = l.store.WatchPrefix(ctx, key, rev+1)
			} else {
				ch = l.store.WatchKey(ctx, key, rev+1)
			}
			if prefix && key == metadata.TopicsPrefix {
				// Topics created while no watch ran are picked up here.
				evs := make([]metastore.Event, len(kvs))
				for i, kv := range kvs {
					evs[i] = metastore.Event{Type: metastore.EventPut, KV: kv}
				}
				if ev := conv(evs); ev != nil {
					l.Enqueue(ev)
				}
			}
			for resp := range ch {
				if resp.Err != nil {
					break
				}
				if ev := conv(resp.Events); ev != nil {
					l.Enqueue(ev)
				}
			}
		}
	}()
}
