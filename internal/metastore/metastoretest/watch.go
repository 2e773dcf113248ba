package metastoretest

import (
	"context"
	"errors"
	"testing"

	"github.com/samsa-kafka/samsa/internal/metastore"
)

func testWatchKeyVsPrefix(t *testing.T, s metastore.Store) {
	ctx := watchCtx(t)
	kw := s.WatchKey(ctx, "/controller", 0)
	pw := s.WatchPrefix(ctx, "/brokers/ids/", 0)
	put(t, s, "/controller_epoch", "1")
	put(t, s, "/brokers/idsX", "no")
	put(t, s, "/brokers/ids/1", "b1")
	rc := put(t, s, "/controller", "c")
	put(t, s, "/brokers/ids/2", "b2")

	ev := nextEvents(t, kw, 1)[0]
	if ev.KV.Key != "/controller" || ev.Type != metastore.EventPut || ev.KV.Version != rc || string(ev.KV.Value) != "c" {
		t.Fatalf("key watch first event: %+v (want /controller at %d)", ev, rc)
	}
	evs := nextEvents(t, pw, 2)
	if evs[0].KV.Key != "/brokers/ids/1" || evs[1].KV.Key != "/brokers/ids/2" {
		t.Fatalf("prefix watch events: %q, %q", evs[0].KV.Key, evs[1].KV.Key)
	}
}

func testWatchOrder(t *testing.T, s metastore.Store, opts Options) {
	const n = 300
	w := s.WatchPrefix(watchCtx(t), "/o/", 0)
	// Write everything before reading anything: a slow reader must lose
	// nothing and block no writer.
	revs := make([]int64, n)
	for i := range revs {
		revs[i] = put(t, s, keyN("/o/", i%7), keyN("", i))
	}
	if opts.CoalescedWatches {
		checkCoalesced(t, w, revs)
		return
	}
	evs := nextEvents(t, w, n)
	for i, ev := range evs {
		if ev.Type != metastore.EventPut || ev.KV.Key != keyN("/o/", i%7) || string(ev.KV.Value) != keyN("", i) || ev.KV.Version != revs[i] {
			t.Fatalf("event %d: %+v, want %s=%s at %d", i, ev, keyN("/o/", i%7), keyN("", i), revs[i])
		}
	}
}

func testWatchDelete(t *testing.T, s metastore.Store, opts Options) {
	w := s.WatchKey(watchCtx(t), "/d", 0)
	rp := put(t, s, "/d", "v")
	var evs []metastore.Event
	if opts.CoalescedWatches {
		// A delete right after the put may hide both.
		evs = nextEvents(t, w, 1)
	}
	rd := del(t, s, "/d")
	evs = append(evs, nextEvents(t, w, 2-len(evs))...)
	if evs[0].Type != metastore.EventPut || evs[0].KV.Version != rp || evs[0].KV.Created != rp {
		t.Fatalf("put event %+v", evs[0])
	}
	if evs[1].Type != metastore.EventDelete || evs[1].KV.Version != rd || evs[1].KV.Value != nil || evs[1].KV.Key != "/d" {
		t.Fatalf("delete event %+v (want revision %d, nil value)", evs[1], rd)
	}
}

func testWatchReplay(t *testing.T, s metastore.Store) {
	put(t, s, "/r/0", "0")
	from := put(t, s, "/r/1", "1")
	put(t, s, "/other", "x")
	put(t, s, "/r/2", "2")
	w := s.WatchPrefix(watchCtx(t), "/r/", from)
	last := put(t, s, "/r/3", "3")
	evs := nextEvents(t, w, 3)
	for i, want := range []string{"/r/1", "/r/2", "/r/3"} {
		if evs[i].KV.Key != want {
			t.Fatalf("replayed event %d: %q, want %q", i, evs[i].KV.Key, want)
		}
	}
	if evs[0].KV.Version != from || evs[2].KV.Version != last {
		t.Fatalf("replay revisions %d..%d, want %d..%d", evs[0].KV.Version, evs[2].KV.Version, from, last)
	}
	// A key watch replays too.
	kw := s.WatchKey(watchCtx(t), "/r/1", from)
	if ev := nextEvents(t, kw, 1)[0]; ev.KV.Key != "/r/1" || ev.KV.Version != from {
		t.Fatalf("key replay: %+v", ev)
	}
}

func testWatchCompacted(t *testing.T, s metastore.Store) {
	c, ok := s.(Compactor)
	if !ok {
		t.Skip("store cannot compact")
	}
	old := put(t, s, "/c/1", "1")
	put(t, s, "/c/2", "2")
	now := put(t, s, "/c/3", "3")
	if err := c.Compact(now); err != nil {
		if errors.Is(err, errors.ErrUnsupported) {
			t.Skip("store cannot compact")
		}
		t.Fatalf("compact %d: %v", now, err)
	}
	w := s.WatchPrefix(watchCtx(t), "/c/", old)
	r := next(t, w)
	if !errors.Is(r.Err, metastore.ErrCompacted) {
		t.Fatalf("watch from compacted revision: %+v, want ErrCompacted", r)
	}
	waitClosed(t, w)
	// Watching from after the compaction point still works.
	w = s.WatchPrefix(watchCtx(t), "/c/", now+1)
	put(t, s, "/c/4", "4")
	if ev := nextEvents(t, w, 1)[0]; ev.KV.Key != "/c/4" {
		t.Fatalf("watch after compaction: %+v", ev)
	}
}

func testWatchCancel(t *testing.T, s metastore.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	w := s.WatchPrefix(ctx, "/w/", 0)
	kw := s.WatchKey(ctx, "/w/1", 0)
	put(t, s, "/w/1", "1")
	nextEvents(t, w, 1)
	cancel()
	waitClosed(t, w)
	waitClosed(t, kw)
}

// checkCoalesced reads w until it has seen the last write of every key of
// testWatchOrder (the i-th write put keyN("/o/", i%7) at revs[i]): each
// event must be one of the writes, in revision order.
func checkCoalesced(t *testing.T, w <-chan metastore.WatchResponse, revs []int64) {
	t.Helper()
	write := make(map[int64]int, len(revs))
	for i, r := range revs {
		write[r] = i
	}
	final := map[int64]bool{}
	for i := len(revs) - 7; i < len(revs); i++ {
		final[revs[i]] = true
	}
	var last int64
	for len(final) > 0 {
		r := next(t, w)
		if r.Err != nil {
			t.Fatalf("watch error: %v", r.Err)
		}
		for _, ev := range r.Events {
			i, ok := write[ev.KV.Version]
			if !ok || ev.Type != metastore.EventPut || ev.KV.Key != keyN("/o/", i%7) || string(ev.KV.Value) != keyN("", i) {
				t.Fatalf("event %+v is no write of the burst", ev)
			}
			if ev.KV.Version <= last {
				t.Fatalf("event at revision %d after %d", ev.KV.Version, last)
			}
			last = ev.KV.Version
			delete(final, ev.KV.Version)
		}
	}
}
