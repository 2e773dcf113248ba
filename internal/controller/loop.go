package controller

import (
	"context"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-kafka/samsa/internal/metastore"
	"github.com/samsa-kafka/samsa/internal/quota"
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

	observe func(event string, took time.Duration) // ObserveEvents; nil: none
}

// ObserveEvents has f told of every event the loop handles, by name, and
// how long the controller took (Kafka's ControllerStats <state>RateAndTimeMs).
// Call it before Run; f runs on the loop.
func (l *Loop) ObserveEvents(f func(event string, took time.Duration)) { l.observe = f }

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

// QueueLen is how many events wait for the loop (Kafka's
// ControllerEventManager EventQueueSize). Safe from any goroutine.
func (l *Loop) QueueLen() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.queue)
}

// Run starts the store watches, then processes events until ctx ends, when
// the controller resigns.
func (l *Loop) Run(ctx context.Context) {
	var wg sync.WaitGroup
	l.c.mirroring = true
	l.follow(ctx, &wg)
	l.rebalanceTimer(ctx, &wg)
	defer wg.Wait()
	var decode warmDecoder
	defer decode.stop()
	for {
		select {
		case <-ctx.Done():
			l.c.Handle(context.Background(), Expire{})
			return
		case <-l.signal:
		}
		l.drain(ctx, func(ev Event) { decode.schedule(l, ev) })
	}
}

// drain hands the queued events to the controller in order (consecutive
// store changes as one, next), calling after, if set, behind each, until
// the queue is empty or ctx ends.
func (l *Loop) drain(ctx context.Context, after func(Event)) {
	for ctx.Err() == nil {
		l.mu.Lock()
		if len(l.queue) == 0 {
			l.mu.Unlock()
			return
		}
		ev := l.next()
		l.mu.Unlock()
		if l.observe == nil {
			l.c.Handle(ctx, ev)
		} else {
			start := time.Now()
			l.c.Handle(ctx, ev)
			l.observe(ev.name(), time.Since(start))
		}
		if after != nil {
			after(ev)
		}
	}
}

// next takes the first event off the queue, with l.mu held. Consecutive
// store changes are handed over as one: handling them costs the same
// either way, but one handler run (say, electing the leaders of every
// topic created meanwhile) does in one store write what several would.
func (l *Loop) next() Event {
	ev := l.queue[0]
	l.queue[0] = nil
	l.queue = l.queue[1:]
	sc, ok := ev.(storeChange)
	if !ok || sc.snapshot {
		return ev
	}
	merged := false
	for len(l.queue) > 0 {
		more, ok := l.queue[0].(storeChange)
		if !ok || more.snapshot {
			break
		}
		if !merged { // the first event's slice belongs to the watch
			sc.events = append(make([]metastore.Event, 0, len(sc.events)+len(more.events)), sc.events...)
			merged = true
		}
		sc.events = append(sc.events, more.events...)
		sc.revision = more.revision
		l.queue[0] = nil
		l.queue = l.queue[1:]
	}
	return sc
}

// follow reads the whole store once, then watches every change after it,
// feeding both to the loop. A broken watch (compaction) starts over with a
// fresh read.
func (l *Loop) follow(ctx context.Context, wg *sync.WaitGroup) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			snapshot, ch, err := l.startFollowing(ctx)
			if err != nil {
				select {
				case <-ctx.Done():
				case <-time.After(200 * time.Millisecond):
				}
				continue
			}
			l.Enqueue(snapshot)
			for resp := range ch {
				if resp.Err != nil {
					break
				}
				l.Enqueue(changeOf(resp))
			}
		}
	}()
}

// startFollowing reads the whole store and watches it from the next
// revision on: the snapshot is the first event follow feeds the loop, the
// watch's responses (changeOf) the others.
func (l *Loop) startFollowing(ctx context.Context) (storeChange, <-chan metastore.WatchResponse, error) {
	kvs, rev, err := l.store.List(ctx, "/")
	if err != nil {
		return storeChange{}, nil, err
	}
	return storeChange{snapshot: true, kvs: kvs, revision: rev}, l.store.WatchPrefix(ctx, "/", rev+1), nil
}

// changeOf is the event of one watch response.
func changeOf(resp metastore.WatchResponse) storeChange {
	return storeChange{events: resp.Events, revision: resp.Revision}
}

// askLoop enqueues the event ev builds and waits for its reply: fail's
// NOT_CONTROLLER at once on an inactive controller, REQUEST_TIMED_OUT when
// ctx ends first. The loop's time is not the request's (quota.Parked), as
// Kafka's controller thread answers through a callback.
func askLoop[R any](ctx context.Context, l *Loop, ev func(reply func(R)) Event, fail func(code int16) R) R {
	if !l.c.IsActive() {
		return fail(kerr.NotController.Code)
	}
	ch := make(chan R, 1)
	l.Enqueue(ev(func(r R) { ch <- r }))
	defer quota.Parked(ctx)()
	select {
	case r := <-ch:
		return r
	case <-ctx.Done():
		return fail(kerr.RequestTimedOut.Code)
	}
}

// warmDecoder schedules the decoding of a warm standby's pending state
// chunks (warmchunks.go): a first decodeWarm warmDecodeDelay after chunks
// arrive, then one after another, each queued behind the events waiting,
// until none is pending. Only the loop goroutine uses it.
type warmDecoder struct {
	queued bool // a decodeWarm is queued or its timer runs
	timer  *time.Timer
}

// schedule runs after the loop handled ev.
func (d *warmDecoder) schedule(l *Loop, ev Event) {
	_, decoded := ev.(decodeWarm)
	if decoded {
		d.queued = false
	}
	if d.queued || !l.c.warmPending() {
		return
	}
	d.queued = true
	if decoded {
		l.Enqueue(decodeWarm{})
		return
	}
	d.timer = time.AfterFunc(warmDecodeDelay, func() { l.Enqueue(decodeWarm{}) })
}

func (d *warmDecoder) stop() {
	if d.timer != nil {
		d.timer.Stop()
	}
}
