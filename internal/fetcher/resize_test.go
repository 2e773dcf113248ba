package fetcher

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// num.replica.fetchers changed at run time (Kafka's resizeThreadPool): from
// 1 to 3 fetchers, the partitions spread over three fetchers of the
// leader, each on a connection and in a fetch session of its own (client
// ids broker-3-fetcher-0..2), by getFetcherId; back to 1, the fetchers
// left empty stop. Throughout, nothing is truncated or asked about again
// (OffsetForLeaderEpoch), and the followers stay byte-identical to the
// leader as it grows.
func TestResizeRedistributesWithoutTruncating(t *testing.T) {
	const parts = 6
	leaders := map[kafka.TopicPartition]*fakeLog{}
	followers := make([]*fakeLog, parts)
	var targets []Target
	for i := range int32(parts) {
		l := &fakeLog{}
		l.write(1, "a")
		l.write(1, "b", "c")
		l.setHW(3)
		leaders[tpN(i)] = l
		followers[i] = &fakeLog{}
		followers[i].write(1, "a") // a prefix: truncation asks the leader about epoch 1
		targets = append(targets, target(tpN(i), 1, 1, followers[i]))
	}
	h := newFakeLeader(1, leaders)
	h.sessions = true
	book := serveAsBroker1(t, h)
	m := newTestManager(t, book, &syncBuffer{}, 0)
	allCaughtUp := func() bool {
		for i := range int32(parts) {
			if !caughtUp(followers[i], leaders[tpN(i)]) {
				return false
			}
		}
		return true
	}
	grow := func(v string) {
		for _, l := range leaders {
			l.write(1, v)
			_, _, leo := l.state()
			l.setHW(leo)
		}
		h.notify()
	}

	m.AddPartitions(targets)
	waitFor(t, "caught up with one fetcher", allCaughtUp)
	asked, _, _, _ := h.stats()
	if len(asked) != parts {
		t.Fatalf("asked about epochs %v, want once per partition", asked)
	}

	m.Resize(3)
	if got, want := byFetcherID(m.fetchedBy()), map[int32][]int32{0: {1, 4}, 1: {2, 5}, 2: {0, 3}}; !maps.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("after Resize(3): %v, want %v", got, want)
	}
	m.mu.Lock()
	old := m.fetchers[fetcherKey{1, 1}]
	m.mu.Unlock()
	grow("d")
	waitFor(t, "caught up with three fetchers", allCaughtUp)
	waitFor(t, "three fetch connections", func() bool {
		conns := h.clientConns()
		for id := range 3 {
			if conns[fmt.Sprintf("broker-%d-fetcher-%d", followerID, id)] == nil {
				return false
			}
		}
		return len(conns) == 3 && conns["broker-3-fetcher-0"] != conns["broker-3-fetcher-1"] &&
			conns["broker-3-fetcher-1"] != conns["broker-3-fetcher-2"] && conns["broker-3-fetcher-0"] != conns["broker-3-fetcher-2"]
	})

	m.Resize(1)
	if got, want := byFetcherID(m.fetchedBy()), map[int32][]int32{0: {0, 1, 2, 3, 4, 5}}; !maps.EqualFunc(got, want, slices.Equal) || m.fetcherCount() != 1 {
		t.Fatalf("after Resize(1): %v and %d fetchers, want %v and 1", got, m.fetcherCount(), want)
	}
	waitFor(t, "emptied fetcher goroutine gone", func() bool {
		select {
		case <-old.done:
			return true
		default:
			return false
		}
	})
	grow("e")
	waitFor(t, "caught up with one fetcher again", allCaughtUp)

	if asked, _, _, _ := h.stats(); len(asked) != parts {
		t.Errorf("asked about epochs %v after resizing, want no new question", asked)
	}
	for i, f := range followers {
		if truncs, resets, _, _ := f.stats(); len(resets) != 0 || slices.ContainsFunc(truncs, func(o int64) bool { return o != 1 }) {
			t.Errorf("follower %d: truncations %v, resets %v; want only the first, to 1", i, truncs, resets)
		}
	}
}

// byFetcherID lists the partition numbers each fetcher id holds (one leader).
func byFetcherID(in map[fetcherKey][]kafka.TopicPartition) map[int32][]int32 {
	out := map[int32][]int32{}
	for key, tps := range in {
		for _, tp := range tps {
			out[key.id] = append(out[key.id], tp.Partition)
		}
		slices.Sort(out[key.id])
	}
	return out
}
