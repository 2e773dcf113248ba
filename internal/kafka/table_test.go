package kafka

import (
	"math/rand/v2"
	"testing"
)

// The table against a map keyed by (topic, partition), through random puts,
// replacements and deletes of dense, far (sparse), negative and absent
// partition numbers; every step checks Get, Len, the topics' Len, and that a
// topic without entries is forgotten; All and Cursor are checked at the end
// of each round. Half the steps go through one cursor that lives through
// the whole test, while topics come and go under it.
func TestTableMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var tab Table[int]
	cur := tab.Cursor()
	ref := map[TopicPartition]*int{}
	topics := []string{"a", "b", "c-1"}
	number := func() int32 {
		switch rng.IntN(10) {
		case 0:
			return int32(rng.IntN(1 << 20)) // far: sparse
		case 1:
			return -1 - int32(rng.IntN(3))
		default:
			return int32(rng.IntN(3000))
		}
	}
	for round := range 20 {
		for range 500 {
			k := TopicPartition{topics[rng.IntN(len(topics))], number()}
			put, del, get := tab.Put, tab.Delete, tab.Get
			if rng.IntN(2) == 0 {
				put, del, get = cur.Put, cur.Delete, cur.Get
			}
			if rng.IntN(3) == 0 {
				if got, want := del(k.Topic, k.Partition), ref[k]; got != want {
					t.Fatalf("Delete(%v) = %p, want %p", k, got, want)
				}
				delete(ref, k)
			} else {
				v := new(int)
				if got, want := put(k.Topic, k.Partition, v), ref[k]; got != want {
					t.Fatalf("Put(%v) replaced %p, want %p", k, got, want)
				}
				ref[k] = v
			}
			if got := get(k.Topic, k.Partition); got != ref[k] {
				t.Fatalf("Get(%v) = %p, want %p", k, got, ref[k])
			}
			checkCounts(t, &tab, ref, topics)
		}
		checkAll(t, &tab, ref)
		checkCursor(t, &tab, ref, topics, round)
	}
}

func checkCounts(t *testing.T, tab *Table[int], ref map[TopicPartition]*int, topics []string) {
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
			t.Fatalf("topic %s with %d entries kept: %v", name, n, kept)
		}
	}
}

func checkAll(t *testing.T, tab *Table[int], ref map[TopicPartition]*int) {
	t.Helper()
	seen := map[TopicPartition]bool{}
	for k, v := range tab.All() {
		if seen[k] || ref[k] != v {
			t.Fatalf("All yielded %v = %p (seen before: %v), want %p", k, v, seen[k], ref[k])
		}
		seen[k] = true
	}
	if len(seen) != len(ref) {
		t.Fatalf("All yielded %d entries, want %d", len(seen), len(ref))
	}
}

// checkCursor looks every key of ref up, and as many absent ones, in runs
// by topic and interleaved.
func checkCursor(t *testing.T, tab *Table[int], ref map[TopicPartition]*int, topics []string, round int) {
	t.Helper()
	c := tab.Cursor()
	for _, name := range topics {
		for p := int32(-3); p < 3100; p++ {
			if got := c.Get(name, p); got != ref[TopicPartition{name, p}] {
				t.Fatalf("round %d: Cursor.Get(%s, %d) = %p, want %p", round, name, p, got, ref[TopicPartition{name, p}])
			}
		}
	}
	for k, v := range ref {
		if got := c.Get(k.Topic, k.Partition); got != v {
			t.Fatalf("round %d: Cursor.Get(%v) = %p, want %p", round, k, got, v)
		}
		if got := c.Get("absent", k.Partition); got != nil {
			t.Fatalf("Cursor.Get(absent, %d) = %p", k.Partition, got)
		}
	}
}

// A far partition number lands in the sparse map; once the dense slice
// grows past it, it is still found, replaced and deleted where it is.
func TestSparseThenDense(t *testing.T) {
	var tab Table[int]
	far, v := int32(5000), new(int)
	tab.Put("t", far, v)
	if len(tab.topics["t"].dense) != 0 || tab.topics["t"].sparse[far] != v {
		t.Fatal("far partition not in the sparse map")
	}
	for p := range far + 10 { // the dense slice grows over far
		if p != far {
			tab.Put("t", p, new(int))
		}
	}
	if len(tab.topics["t"].dense) <= int(far) {
		t.Fatalf("dense slice of %d does not cover %d", len(tab.topics["t"].dense), far)
	}
	w := new(int)
	if tab.Get("t", far) != v || tab.Put("t", far, w) != v || tab.Get("t", far) != w || tab.Len() != int(far)+10 {
		t.Fatal("sparse entry under the dense slice lost or counted twice")
	}
	if tab.Delete("t", far) != w || tab.Get("t", far) != nil || tab.Len() != int(far)+9 {
		t.Fatal("sparse entry under the dense slice not deleted")
	}
}

// Grow makes room for the partitions that follow the dense slice's end:
// putting them does not move the slice; entries put before are kept.
func TestGrow(t *testing.T) {
	var tab Table[int]
	v := new(int)
	tab.Put("t", 0, v)
	tab.Grow("t", 100)
	dense := tab.topics["t"].dense
	for p := int32(1); p <= 100; p++ {
		tab.Put("t", p, new(int))
	}
	if &tab.topics["t"].dense[0] != &dense[:1][0] || tab.Get("t", 0) != v || tab.Len() != 101 {
		t.Fatal("dense slice moved or entry lost")
	}
	tab.Grow("u", 10) // a new topic, filled after
	tab.Put("u", 3, v)
	if tab.Get("u", 3) != v || tab.Delete("u", 3) != v || tab.Topic("u") != nil {
		t.Fatal("grown topic not filled or not forgotten once empty")
	}
}

// A cursor holding a topic that the table then forgets and makes anew (its
// last entry deleted, another put) finds the new topic: its reads see the
// new entries and its writes land in the table.
func TestCursorSeesTopicRemade(t *testing.T) {
	var tab Table[int]
	c := tab.Cursor()
	v, w, x := new(int), new(int), new(int)
	c.Put("a", 0, v)
	if tab.Delete("a", 0) != v || tab.Topic("a") != nil {
		t.Fatal("topic not forgotten")
	}
	tab.Put("a", 1, w)
	if c.Get("a", 0) != nil || c.Get("a", 1) != w {
		t.Fatal("cursor reads the forgotten topic")
	}
	c.Put("a", 2, x)
	if tab.Get("a", 2) != x || tab.Len() != 2 || tab.Topic("a").Len() != 2 {
		t.Fatal("cursor's put lost")
	}
	if c.Delete("a", 1) != w || c.Delete("a", 2) != x || tab.Len() != 0 || tab.Topic("a") != nil {
		t.Fatal("cursor's deletes do not forget the topic")
	}
	c.Put("a", 3, v) // into a topic made by the cursor itself
	if tab.Get("a", 3) != v || tab.Topics() != 1 {
		t.Fatal("cursor's put into a new topic lost")
	}
}
