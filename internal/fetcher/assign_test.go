package fetcher

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// Java's String.hashCode, with values Java gives (the classic ones:
// "polygenelubricants" hashes to Integer.MIN_VALUE, "Aa" and "BB" collide)
// and a character outside the BMP, hashed as its two UTF-16 code units.
func TestJavaStringHash(t *testing.T) {
	cases := []struct {
		s    string
		want int32
	}{
		{"", 0},
		{"t", 116},
		{"foo", 101574},
		{"hello", 99162322},
		{"Hello World", -862545276},
		{"polygenelubricants", math.MinInt32},
		{"Aa", 2112},
		{"BB", 2112},
		{"\U0001F600", 0xD83D*31 + 0xDE00},
		{"events", -1291329255},
	}
	for _, c := range cases {
		if got := javaStringHash(c.s); got != c.want {
			t.Errorf("javaStringHash(%q) = %d, want %d", c.s, got, c.want)
		}
	}
}

// Kafka's getFetcherId: abs(31*hash + partition) % n, int32 arithmetic
// wrapping, Utils.abs(Integer.MIN_VALUE) = 0.
func TestFetcherID(t *testing.T) {
	cases := []struct {
		topic string
		n     int32
		want  []int32 // for partitions 0, 1, ...
	}{
		{"foo", 1, []int32{0, 0, 0}},
		{"foo", 3, []int32{0, 1, 2, 0}},
		{"t", 3, []int32{2, 0, 1, 2, 0, 1}},
		{"Hello World", 3, []int32{0, 2, 1, 0}}, // 31*hash is negative
		{"polygenelubricants", 3, []int32{0}},   // 31*hash wraps to MinInt32
		{"events", 3, []int32{0, 2, 1, 0, 2, 1}},
	}
	for _, c := range cases {
		var got []int32
		ids := fetcherIDs{n: c.n}
		for p := range int32(len(c.want)) {
			id := fetcherID(javaStringHash(c.topic), p, c.n)
			if cached := ids.of(kafka.TopicPartition{Topic: c.topic, Partition: p}); cached != id {
				t.Errorf("%s-%d: fetcherIDs.of %d, fetcherID %d", c.topic, p, cached, id)
			}
			got = append(got, id)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s with %d fetchers: ids %v, want %v", c.topic, c.n, got, c.want)
		}
	}
}

// Only the partitions whose id changes move, to the fetcher of the same
// leader with their new id.
func TestRedistribute(t *testing.T) {
	at := func(leader, id int32) fetcherKey { return fetcherKey{leader, id} }
	parts := []struct {
		tp kafka.TopicPartition
		in fetcherKey
	}{
		{tpN(0), at(1, 0)}, {tpN(1), at(1, 0)}, {tpN(2), at(2, 0)},
		{tpN(3), at(2, 0)}, {tpN(4), at(1, 0)}, {tpN(5), at(2, 0)},
	}
	seq := func(yield func(kafka.TopicPartition, fetcherKey) bool) {
		for _, p := range parts {
			if !yield(p.tp, p.in) {
				return
			}
		}
	}
	if got := redistribute(seq, 1); len(got) != 0 {
		t.Fatalf("same size moved %v", got)
	}
	// "t": partitions 0..5 have ids 2 0 1 2 0 1 among 3.
	want := []move{
		{tpN(0), at(1, 0), at(1, 2)}, {tpN(2), at(2, 0), at(2, 1)},
		{tpN(3), at(2, 0), at(2, 2)}, {tpN(5), at(2, 0), at(2, 1)},
	}
	if got := redistribute(seq, 3); !slices.Equal(got, want) {
		t.Fatalf("to 3 fetchers: %v, want %v", got, want)
	}
	for i := range parts {
		parts[i].in.id = fetcherID(javaStringHash("t"), parts[i].tp.Partition, 3)
	}
	want = []move{
		{tpN(0), at(1, 2), at(1, 0)}, {tpN(2), at(2, 1), at(2, 0)},
		{tpN(3), at(2, 2), at(2, 0)}, {tpN(5), at(2, 1), at(2, 0)},
	}
	if got := redistribute(seq, 1); !slices.Equal(got, want) {
		t.Fatalf("back to 1 fetcher: %v, want %v", got, want)
	}
}

// A partition handed from one fetcher to another keeps its fetch state:
// its target and phase, the epoch a Truncating one asks next, the rest of
// a backoff; the fetcher it left forgets it in its session.
func TestTakeAndAdoptKeepFetchState(t *testing.T) {
	cfg := Config{NodeID: followerID}.withDefaults()
	from, to := newFetcher(cfg, fetcherKey{1, 0}), newFetcher(cfg, fetcherKey{1, 1})
	for i := range int32(4) {
		from.add(target(tpN(i), 1, 7, &fakeLog{}))
	}
	now := time.Now()
	from.mu.Lock()
	from.setFetching(tpN(0), from.parts.get(tpN(0)))
	from.parts.get(tpN(1)).askEpoch = 5 // Truncating, asking about epoch 5 next
	from.setFetching(tpN(2), from.parts.get(tpN(2)))
	from.delay(tpN(2), from.parts.get(tpN(2)), now, time.Hour)
	from.fence(tpN(3), from.parts.get(tpN(3)))
	from.clearChanges()
	from.mu.Unlock()

	var states []partState
	from.takeAll([]kafka.TopicPartition{tpN(0), tpN(1), tpN(2), tpN(3), tpN(9)}, &states)
	if len(states) != 4 || from.parts.len() != 0 || len(from.forgot) != 4 {
		t.Fatalf("took %d states, %d left, %d forgotten; want 4, 0, 4", len(states), from.parts.len(), len(from.forgot))
	}
	to.adoptAll(states)

	to.mu.Lock()
	defer to.mu.Unlock()
	want := []struct {
		phase    phase
		askEpoch int32
		delayed  bool
	}{{fetching, -1, false}, {truncating, 5, false}, {fetching, -1, true}, {fenced, -1, false}}
	for i, w := range want {
		ps := to.parts.get(tpN(int32(i)))
		if ps == nil || ps.target.LeaderEpoch != 7 || ps.phase != w.phase || ps.askEpoch != w.askEpoch || ps.delayed != w.delayed {
			t.Fatalf("partition %d adopted as %+v, want %+v at leader epoch 7", i, ps, w)
		}
		if ps.inTruncs != (w.phase == truncating) {
			t.Errorf("partition %d listed as truncating: %v", i, ps.inTruncs)
		}
	}
	if d := to.parts.get(tpN(2)).delayUntil; !d.After(now.Add(59 * time.Minute)) {
		t.Errorf("backoff shortened to %v", d.Sub(now))
	}
	if to.fetchable(to.parts.get(tpN(2))) || !to.fetchable(to.parts.get(tpN(0))) {
		t.Errorf("fetchable: partition 0 %v, backed-off partition 2 %v", to.fetchable(to.parts.get(tpN(0))), to.fetchable(to.parts.get(tpN(2))))
	}
}
