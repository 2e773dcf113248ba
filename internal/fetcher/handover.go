// handover: the changes of one AddPartitions or RemovePartitions call, grouped
// by fetcher, so that each fetcher takes its lock once per call rather than
// once per partition (a LeaderAndIsr moves thousands of partitions while
// the fetchers' goroutines hold the same locks to build their requests).
package fetcher

import (
	"slices"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

type leaving struct {
	from fetcherKey
	tps  []kafka.TopicPartition
}

type joining struct {
	to  fetcherKey
	idx []int32 // in the call's targets
	n   int     // targets named for the fetcher (presize)
}

// handover lists, per fetcher in order of first mention, the partitions
// leaving it and the targets joining it (by their index in the call's
// targets, which are not copied). A call names few fetchers (a few per
// leader), so they are found by a linear scan.
type handover struct {
	removes []leaving
	adds    []joining
}

func (b *handover) remove(from fetcherKey, tp kafka.TopicPartition) {
	for i := range b.removes {
		if b.removes[i].from == from {
			b.removes[i].tps = append(b.removes[i].tps, tp)
			return
		}
	}
	b.removes = append(b.removes, leaving{from: from, tps: []kafka.TopicPartition{tp}})
}

// presize sizes the lists of the fetchers of the n targets for all their
// targets, key(i) naming the i-th one's (appending thousands of targets
// one by one costs as much as the rest).
func (b *handover) presize(n int, key func(i int) fetcherKey) {
	for i := range n {
		b.joining(key(i)).n++
	}
	for i := range b.adds {
		b.adds[i].idx = make([]int32, 0, b.adds[i].n)
	}
}

// add lists the i-th target among those joining fetcher to.
func (b *handover) add(to fetcherKey, i int) {
	j := b.joining(to)
	j.idx = append(j.idx, int32(i))
}

func (b *handover) joining(to fetcherKey) *joining {
	for i := range b.adds {
		if b.adds[i].to == to {
			return &b.adds[i]
		}
	}
	b.adds = append(b.adds, joining{to: to})
	return &b.adds[len(b.adds)-1]
}

// lastTargets maps each partition of ts to the index of its last target,
// or is nil when no partition is named twice (the common case: then every
// target applies).
func lastTargets(ts []Target) map[kafka.TopicPartition]int {
	if !mayRepeat(ts) {
		return nil
	}
	seen := make(map[kafka.TopicPartition]int, len(ts))
	dup := false
	for i, t := range ts {
		if _, ok := seen[t.TP]; ok {
			dup = true
		}
		seen[t.TP] = i
	}
	if !dup {
		return nil
	}
	return seen
}

// mayRepeat reports whether ts may name a partition twice. It keeps a
// bitmap of partition numbers per topic, looking a topic up once per run of
// its targets (a LeaderAndIsr lists them topic by topic), so that the
// common answer, no, costs no hashing per target. A partition number out of
// proportion to len(ts) answers yes (the caller then checks exactly).
//
// Evidence: added with the broker's O(changed) LeaderAndIsr (commit
// ea14e28), whose figure covers it with the rest: BenchmarkLeaderAndIsrApply
// 306-330 ms / 570k allocs -> 185-272 ms / 136k; no figure for the bitmap
// alone was recorded.
func mayRepeat(ts []Target) bool {
	if len(ts) < 2 {
		return false
	}
	limit := int64(4*len(ts) + 1024)
	seen := map[string]*[]uint64{}
	var (
		topic string
		bits  *[]uint64
	)
	for i := range ts {
		tp := &ts[i].TP
		if bits == nil || tp.Topic != topic {
			topic = tp.Topic
			if bits = seen[topic]; bits == nil {
				bits = new([]uint64)
				seen[topic] = bits
			}
		}
		p := int64(tp.Partition)
		if p < 0 || p >= limit {
			return true
		}
		w, bit := int(p/64), uint64(1)<<(p%64)
		if w >= len(*bits) { // grown as append grows (never written past len: zero)
			*bits = slices.Grow(*bits, w+1-len(*bits))[:w+1]
		}
		if (*bits)[w]&bit != 0 {
			return true
		}
		(*bits)[w] |= bit
	}
	return false
}
