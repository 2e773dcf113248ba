package fetcher

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// fetched lists, per source broker, the partitions its fetchers hold.
func (m *Manager) fetched() map[int32][]int32 {
	out := map[int32][]int32{}
	for key, tps := range m.fetchedBy() {
		for _, tp := range tps {
			out[key.leader] = append(out[key.leader], tp.Partition)
		}
		slices.Sort(out[key.leader])
	}
	return out
}

// fetchedBy lists, per fetcher, the partitions it holds.
func (m *Manager) fetchedBy() map[fetcherKey][]kafka.TopicPartition {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[fetcherKey][]kafka.TopicPartition{}
	for key, f := range m.fetchers {
		f.mu.Lock()
		for tp := range f.parts.all() {
			out[key] = append(out[key], tp)
		}
		f.mu.Unlock()
	}
	return out
}

// One AddPartitions call hands each fetcher its share at once: partitions
// leave their old fetcher before joining the new one, a partition named
// twice takes its last target, and a fetcher left without partitions stops.
func TestAddPartitionsHandsOverPerFetcher(t *testing.T) {
	// No leader address: the fetchers only back off, never fetch.
	m := NewManager(Config{NodeID: followerID, Backoff: time.Hour})
	t.Cleanup(m.Close)
	logs := []*fakeLog{{}, {}, {}}
	m.AddPartitions([]Target{target(tpN(0), 1, 1, logs[0]), target(tpN(1), 1, 1, logs[1]), target(tpN(0), 2, 1, logs[0])})
	if got, want := m.fetched(), map[int32][]int32{1: {1}, 2: {0}}; !maps.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("after the first call: %v, want %v", got, want)
	}
	m.AddPartitions([]Target{target(tpN(1), 2, 2, logs[1]), target(tpN(2), 2, 1, logs[2]), target(tpN(0), -1, 2, logs[0])})
	if got, want := m.fetched(), map[int32][]int32{2: {1, 2}}; !maps.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("after moving 1 and dropping 0 (no leader): %v, want %v", got, want)
	}
	m.RemovePartitions([]kafka.TopicPartition{tpN(1), tpN(2), tpN(2)})
	if got := m.fetched(); len(got) != 0 || m.fetcherCount() != 0 {
		t.Fatalf("after removing every partition: %v, %d fetchers", got, m.fetcherCount())
	}
}

// mayRepeat finds every partition named twice, in a run of its topic or
// in two runs, and answers yes, to be checked exactly, for partition
// numbers it does not keep a bitmap for.
func TestMayRepeat(t *testing.T) {
	tgt := func(topic string, p int32) Target {
		return Target{TP: kafka.TopicPartition{Topic: topic, Partition: p}}
	}
	var many []Target
	for p := range int32(1000) {
		many = append(many, tgt("a", p), tgt("b", 999-p))
	}
	cases := []struct {
		name string
		ts   []Target
		want bool
	}{
		{"none", nil, false},
		{"distinct, interleaved topics", many, false},
		{"same number, other topics", []Target{tgt("a", 0), tgt("b", 0), tgt("c", 0)}, false},
		{"twice in a run", []Target{tgt("a", 0), tgt("a", 130), tgt("a", 130)}, true},
		{"twice in two runs", []Target{tgt("a", 70), tgt("b", 0), tgt("a", 70)}, true},
		{"repeated at the end", append(slices.Clone(many), tgt("b", 640)), true},
		{"negative number", []Target{tgt("a", -1), tgt("a", 0)}, true},
		{"huge number", []Target{tgt("a", 1<<30), tgt("a", 0)}, true},
	}
	for _, c := range cases {
		if got := mayRepeat(c.ts); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		if exact := lastTargets(c.ts); c.want != (exact != nil) && c.name != "negative number" && c.name != "huge number" {
			t.Errorf("%s: lastTargets %v", c.name, exact)
		}
	}
}
