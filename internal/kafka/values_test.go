package kafka

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// The value table against a map keyed by (topic, partition), through random
// sets (plain and dense), replacements, deletes, reservations and topic
// deletions of dense, far (kept aside), negative and absent partition
// numbers, while the table remembers the topic it found last and topics
// come and go under it; every step checks Get, Ref, Len and the topics'
// Len, and that a topic without values is forgotten; each round checks
// that All and every topic's All and Sorted list each value once, in
// partition order, and that Dense holds every SetDense value.
func TestValueTableMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var tab ValueTable[int]
	ref := map[TopicPartition]int{}
	dense := map[TopicPartition]bool{} // set with SetDense since last deleted
	topics := []string{"a", "b", "c-1"}
	number := func() int32 {
		switch rng.IntN(10) {
		case 0:
			return int32(rng.IntN(1 << 20)) // far: aside, unless the slice grows over it
		case 1:
			return -1 - int32(rng.IntN(3))
		default:
			return int32(rng.IntN(3000))
		}
	}
	step := 0
	for round := range 20 {
		for range 500 {
			step++
			k := TopicPartition{topics[rng.IntN(len(topics))], number()}
			switch op := rng.IntN(20); {
			case op == 0:
				tab.DeleteTopic(k.Topic)
				maps.DeleteFunc(ref, func(tp TopicPartition, _ int) bool { return tp.Topic == k.Topic })
				maps.DeleteFunc(dense, func(tp TopicPartition, _ bool) bool { return tp.Topic == k.Topic })
			case op == 1:
				tab.Reserve(k.Topic, rng.IntN(4000))
				if tab.Topic(k.Topic) == nil {
					t.Fatalf("Reserve(%s) kept no topic", k.Topic)
				}
				if tab.Topic(k.Topic).Len() == 0 { // the check below would find it kept
					tab.DeleteTopic(k.Topic)
				}
			case op < 8:
				got, had := tab.Delete(k.Topic, k.Partition)
				if want, ok := ref[k]; got != want || had != ok {
					t.Fatalf("Delete(%v) = %d %v, want %d %v", k, got, had, want, ok)
				}
				delete(ref, k)
				delete(dense, k)
			case op < 10 && k.Partition >= 0 && k.Partition < 1<<16:
				tab.SetDense(k.Topic, k.Partition, step)
				ref[k], dense[k] = step, true
			default:
				tab.Set(k.Topic, k.Partition, step)
				ref[k] = step
			}
			want, ok := ref[k]
			if got, has := tab.Get(k.Topic, k.Partition); got != want || has != ok {
				t.Fatalf("Get(%v) = %d %v, want %d %v", k, got, has, want, ok)
			}
			if r := tab.Ref(k.Topic, k.Partition); (r != nil) != ok || r != nil && *r != want {
				t.Fatalf("Ref(%v) = %v, want %d %v", k, r, want, ok)
			}
			checkValueCounts(t, &tab, ref, topics)
		}
		checkValueAll(t, &tab, ref, dense, round)
	}
}

func checkValueCounts(t *testing.T, tab *ValueTable[int], ref map[TopicPartition]int, topics []string) {
	t.Helper()
	if tab.Len() != len(ref) {
		t.Fatalf("Len = %d, want %d", tab.Len(), len(ref))
	}
	for _, name := range topics {
		n := 0
		for k := range ref {
			if k.Topic == name {
				n++
			}
		}
		if got := tab.Topic(name).Len(); got != n {
			t.Fatalf("topic %s: Len = %d, want %d", name, got, n)
		}
		if _, kept := tab.topics[name]; kept != (n > 0) {
			t.Fatalf("topic %s with %d values kept: %v", name, n, kept)
		}
	}
}

func checkValueAll(t *testing.T, tab *ValueTable[int], ref map[TopicPartition]int, dense map[TopicPartition]bool, round int) {
	t.Helper()
	got := map[TopicPartition]int{}
	last := map[string]int32{}
	for k, v := range tab.All() {
		if _, dup := got[k]; dup {
			t.Fatalf("round %d: All yielded %v twice", round, k)
		}
		if prev, ok := last[k.Topic]; ok && k.Partition <= prev {
			t.Fatalf("round %d: All yielded %v after partition %d", round, k, prev)
		}
		got[k], last[k.Topic] = v, k.Partition
	}
	if !maps.Equal(got, ref) {
		t.Fatalf("round %d: All yielded %d values, want %d (or different ones)", round, len(got), len(ref))
	}
	topics := 0
	for name, tt := range tab.ByTopic() {
		topics++
		var want []int
		for _, v := range tt.All() {
			want = append(want, v)
		}
		if sorted := tt.Sorted(); !slices.Equal(sorted, want) {
			t.Fatalf("round %d: topic %s: Sorted = %v, want %v", round, name, sorted, want)
		}
		vals, has := tt.Dense()
		for k := range dense {
			if k.Topic == name && (int(k.Partition) >= len(has) || !has[k.Partition] || vals[k.Partition] != ref[k]) {
				t.Fatalf("round %d: %v set with SetDense is not in Dense", round, k)
			}
		}
	}
	if topics != tab.Topics() {
		t.Fatalf("round %d: ByTopic yielded %d topics, Topics = %d", round, topics, tab.Topics())
	}
}

// A far partition number is kept aside; once the slice grows over it, its
// value moves in and is found, replaced and deleted there.
func TestPartitionsAsideThenDense(t *testing.T) {
	var tt Partitions[int]
	far := int32(5000)
	tt.Set(far, 1)
	if len(tt.vals) != 0 || tt.aside[far] == nil {
		t.Fatal("far partition not kept aside")
	}
	for p := range far + 10 { // the slice grows over far
		if p != far {
			tt.Set(p, 2)
		}
	}
	if len(tt.vals) <= int(far) || len(tt.aside) != 0 || !tt.has[far] || tt.vals[far] != 1 {
		t.Fatalf("far partition not moved into the slice of %d", len(tt.vals))
	}
	if tt.Set(far, 3); tt.Len() != int(far)+10 {
		t.Fatal("moved partition counted twice")
	}
	if v, ok := tt.Delete(far); !ok || v != 3 || tt.Len() != int(far)+9 {
		t.Fatal("moved partition not deleted")
	}
}

// Sorted hands out the slice itself when it has no hole; a later change
// copies it first, so what was handed out stays as it was.
func TestPartitionsSortedShared(t *testing.T) {
	var tt Partitions[int]
	tt.Reserve(3)
	for p := range int32(3) {
		tt.Set(p, int(p))
	}
	shared := tt.Sorted()
	if &shared[0] != &tt.vals[0] {
		t.Fatal("Sorted copied a slice without holes")
	}
	tt.Set(1, 10)
	tt.Delete(2)
	tt.Set(3, 30)
	if !slices.Equal(shared, []int{0, 1, 2}) {
		t.Fatalf("handed-out slice changed: %v", shared)
	}
	if got := tt.Sorted(); !slices.Equal(got, []int{0, 10, 30}) {
		t.Fatalf("Sorted = %v", got)
	}
	shared = tt.Sorted() // a hole: a copy
	tt.Set(2, 20)
	if !slices.Equal(shared, []int{0, 10, 30}) {
		t.Fatalf("copy changed: %v", shared)
	}
}
