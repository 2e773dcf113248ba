package fetcher

import (
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// The table answers as a map would through random sets and deletions of
// partitions of a few topics, numbered densely, negative or far apart (kept
// aside), with topics emptied and brought back while the table remembers
// the last row it found; all lists each partition once, a topic's in
// partition order.
func TestTableMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	topics := []string{"a", "b", "c"}
	numbers := []int32{-1, 1 << 30, 5000, 2048, 700}
	var tb table[int]
	ref := map[kafka.TopicPartition]int{}
	for step := range 20000 {
		p := int32(rng.IntN(6))
		if rng.IntN(10) == 0 {
			p = numbers[rng.IntN(len(numbers))]
		}
		tp := kafka.TopicPartition{Topic: topics[rng.IntN(len(topics))], Partition: p}
		switch rng.IntN(3) {
		case 0:
			if got, want := tb.del(tp), ref[tp]; got != want {
				t.Fatalf("step %d: del(%v) = %d, want %d", step, tp, got, want)
			}
			delete(ref, tp)
		case 1:
			tb.set(tp, step+1)
			ref[tp] = step + 1
		default:
			if got, want := tb.get(tp), ref[tp]; got != want {
				t.Fatalf("step %d: get(%v) = %d, want %d", step, tp, got, want)
			}
		}
		if tb.len() != len(ref) {
			t.Fatalf("step %d: len %d, want %d", step, tb.len(), len(ref))
		}
	}
	got := map[kafka.TopicPartition]int{}
	last := map[string]int32{}
	for tp, v := range tb.all() {
		if _, dup := got[tp]; dup {
			t.Fatalf("all lists %v twice", tp)
		}
		got[tp] = v
		if prev, ok := last[tp.Topic]; ok && tp.Partition < prev && tp.Partition >= 0 && prev < 6 {
			t.Fatalf("all lists %s's partition %d after %d", tp.Topic, tp.Partition, prev)
		}
		last[tp.Topic] = tp.Partition
	}
	if !maps.Equal(got, ref) {
		t.Fatalf("all: %v, want %v", got, ref)
	}
}
