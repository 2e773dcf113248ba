package kafka

import (
	"iter"
	"maps"
	"math"
	"slices"
)

// A ValueTable is a Table that holds its values in place instead of
// pointers to them: one allocation per topic rather than per partition,
// and a look-up reads the value where it lies. The controller's context
// (a LeaderAndIsr and a state per partition) and a follower fetcher's
// partitions keep their tables this way. Each topic's values are a
// Partitions.
//
// Evidence, from the copies it replaces: the controller's (commit 812313b,
// with state chunks) samsa-failover-bench -mode crash, 100k partitions,
// 29.7 -> 12.8 µs per led partition; the fetcher's (97737c3)
// BenchmarkAddPartitions ~100 -> 21 ms, 68495 -> 4665 allocs/op and
// BenchmarkFetchRounds ~105 -> 25 ms, 51105 -> 1727 allocs/op; the metadata
// cache's (ed973e7) BenchmarkUpdateMetadataApply/apply 21 -> 12-16 ms,
// 100734 -> 334 allocs/op. Sharing one implementation cost the cache one
// allocation per topic more (the presence slice) and the controller one
// small allocation per topic walk (partTable.topic); the fetcher, which now
// reserves each topic's run of partitions, allocates less than its copy
// did (BenchmarkAddPartitions 4665 -> 2132, BenchmarkFetchRounds 1727 ->
// 752 allocs/op), in the same time.
//
// A ValueTable remembers the topic it found last, so that a run of
// look-ups of one topic's partitions hashes its name once: it is not safe
// for concurrent use, even for look-ups. The zero value is an empty table.
type ValueTable[V any] struct {
	topics map[string]*Partitions[V]
	n      int
	// The topic last found (last nil: none).
	lastName string
	last     *Partitions[V]
}

// Len is the number of partitions with a value.
func (t *ValueTable[V]) Len() int { return t.n }

// Topics is the number of topics kept.
func (t *ValueTable[V]) Topics() int { return len(t.topics) }

// Topic returns the values of one topic, nil if it has none. It is valid
// until the topic is forgotten (its last value deleted, DeleteTopic).
func (t *ValueTable[V]) Topic(name string) *Partitions[V] {
	if t.last != nil && name == t.lastName {
		return t.last
	}
	tt := t.topics[name]
	if tt != nil {
		t.lastName, t.last = name, tt
	}
	return tt
}

// topicOrNew returns name's values, adding the topic if it has none.
func (t *ValueTable[V]) topicOrNew(name string) *Partitions[V] {
	if tt := t.Topic(name); tt != nil {
		return tt
	}
	if t.topics == nil {
		t.topics = map[string]*Partitions[V]{}
	}
	tt := &Partitions[V]{}
	t.topics[name] = tt
	t.lastName, t.last = name, tt
	return tt
}

// Get returns the value of (topic, p) and whether it has one.
func (t *ValueTable[V]) Get(topic string, p int32) (V, bool) {
	if r := t.Ref(topic, p); r != nil {
		return *r, true
	}
	var zero V
	return zero, false
}

// Ref returns the value of (topic, p) in place, nil if it has none: for
// reading a large value without copying it. It is valid until the table
// next changes, and must not be written through.
func (t *ValueTable[V]) Ref(topic string, p int32) *V {
	tt := t.last
	if tt == nil || topic != t.lastName {
		if tt = t.topics[topic]; tt == nil {
			return nil
		}
		t.lastName, t.last = topic, tt
	}
	return tt.Ref(p)
}

// Set makes v the value of (topic, p).
func (t *ValueTable[V]) Set(topic string, p int32, v V) {
	if t.topicOrNew(topic).set(p, v, false) {
		t.n++
	}
}

// SetDense is Set keeping p (when not negative) among the topic's values
// at their number, however far past the others it is: for owners whose
// partition numbers are known to run from 0 up, and who read them with
// Partitions.Dense.
func (t *ValueTable[V]) SetDense(topic string, p int32, v V) {
	if t.topicOrNew(topic).set(p, v, true) {
		t.n++
	}
}

// Reserve makes room for topic's partitions numbered below n, so that
// setting them costs no regrowth. A topic it adds stays, empty, until it
// gets a value and loses its last.
func (t *ValueTable[V]) Reserve(topic string, n int) { t.topicOrNew(topic).Reserve(n) }

// Delete removes (topic, p) and returns its value and whether it had one.
// A topic left without values is forgotten.
func (t *ValueTable[V]) Delete(topic string, p int32) (V, bool) {
	tt := t.Topic(topic)
	v, ok := tt.Delete(p)
	if ok {
		t.n--
		if tt.n == 0 {
			t.forget(topic)
		}
	}
	return v, ok
}

// DeleteTopic forgets every partition of topic.
func (t *ValueTable[V]) DeleteTopic(topic string) {
	if tt := t.topics[topic]; tt != nil {
		t.n -= tt.n
		t.forget(topic)
	}
}

func (t *ValueTable[V]) forget(topic string) {
	delete(t.topics, topic)
	if t.lastName == topic {
		t.lastName, t.last = "", nil
	}
}

// All yields every partition and its value, topic by topic in no
// particular order, each topic's in partition order. The table must not
// change during the iteration.
func (t *ValueTable[V]) All() iter.Seq2[TopicPartition, V] {
	return func(yield func(TopicPartition, V) bool) {
		for name, tt := range t.topics {
			for p, v := range tt.All() {
				if !yield(TopicPartition{Topic: name, Partition: p}, v) {
					return
				}
			}
		}
	}
}

// ByTopic yields every topic kept and its values, in no particular order.
// The table must not change during the iteration.
func (t *ValueTable[V]) ByTopic() iter.Seq2[string, *Partitions[V]] { return maps.All(t.topics) }

// Partitions holds one topic's values at their partition number, in a
// slice: partitions are numbered from 0 up and usually all present. A
// number far past the others (more than denseSlack past twice the slice's
// length, and past its capacity), or negative, is kept aside in a small
// map, so that one odd number cannot make a huge, mostly empty slice; when
// the slice grows over a number kept aside, its value moves into it. A
// partition is in one place only.
//
// The zero value is empty; a nil *Partitions is empty for reading.
type Partitions[V any] struct {
	vals []V
	has  []bool // as long as vals: whether vals[p] is a value
	// aside holds the numbers outside vals (negative, or at least
	// len(vals)); asideMin is at most the least non-negative one
	// (math.MaxInt32: none).
	aside    map[int32]*V
	asideMin int32
	n        int
	shared   bool // vals was handed out by Sorted: copied before a write
}

// Len is the number of values; 0 for a nil *Partitions.
func (tt *Partitions[V]) Len() int {
	if tt == nil {
		return 0
	}
	return tt.n
}

// Get returns partition p's value and whether it has one.
func (tt *Partitions[V]) Get(p int32) (V, bool) {
	if r := tt.Ref(p); r != nil {
		return *r, true
	}
	var zero V
	return zero, false
}

// Ref returns partition p's value in place, nil if it has none. It is
// valid until the next change, and must not be written through.
func (tt *Partitions[V]) Ref(p int32) *V {
	if tt == nil {
		return nil
	}
	if p >= 0 && int(p) < len(tt.has) {
		if tt.has[p] {
			return &tt.vals[p]
		}
		return nil
	}
	if tt.aside == nil {
		return nil
	}
	return tt.aside[p]
}

// Dense returns the values kept at their number, for partitions 0 to
// len(vals)-1; has[p] tells whether vals[p] is one. Partitions set with
// ValueTable.SetDense are all there. The slices are valid until the next
// change and must not be modified.
func (tt *Partitions[V]) Dense() (vals []V, has []bool) {
	if tt == nil {
		return nil, nil
	}
	return tt.vals, tt.has
}

// Set makes v partition p's value.
func (tt *Partitions[V]) Set(p int32, v V) { tt.set(p, v, false) }

// set is Set, always growing the slice to p when dense (and p is not
// negative); it reports whether p had no value.
func (tt *Partitions[V]) set(p int32, v V, dense bool) (added bool) {
	if tt.shared {
		tt.vals, tt.shared = slices.Clone(tt.vals), false
	}
	if p >= 0 && int(p) >= len(tt.vals) &&
		(dense || int(p) < cap(tt.vals) || int64(p) <= int64(2*len(tt.vals)+denseSlack)) {
		tt.extend(int(p) + 1)
	}
	if p >= 0 && int(p) < len(tt.vals) {
		added = !tt.has[p]
		tt.vals[p], tt.has[p] = v, true
	} else {
		if tt.aside == nil {
			tt.aside, tt.asideMin = map[int32]*V{}, math.MaxInt32
		}
		if r := tt.aside[p]; r != nil {
			*r = v
		} else {
			added = true
			r = new(V) // not &v: v would escape on every call
			*r = v
			tt.aside[p] = r
			if p >= 0 {
				tt.asideMin = min(tt.asideMin, p)
			}
		}
	}
	if added {
		tt.n++
	}
	return added
}

// extend lengthens the slice to n, moving in the values kept aside that
// it now covers. Past their old length both slices were never written, or
// cleared when their values were deleted: the new places are empty.
func (tt *Partitions[V]) extend(n int) {
	if n > cap(tt.vals) || n > cap(tt.has) {
		tt.grow(n)
	}
	tt.vals, tt.has = tt.vals[:n], tt.has[:n]
	if len(tt.aside) > 0 && int(tt.asideMin) < n {
		tt.moveIn(n)
	}
}

// grow gives both slices room for n, as append grows (amortised), the
// presence slice as much as the values' (one growth for both).
func (tt *Partitions[V]) grow(n int) {
	vals := tt.vals
	if tt.shared { // the new array below is the table's own
		vals, tt.shared = slices.Clip(vals), false
	}
	vals = slices.Grow(vals, n-len(vals))
	has := make([]bool, len(tt.has), cap(vals))
	copy(has, tt.has)
	tt.vals, tt.has = vals, has
}

// moveIn moves the values kept aside below n into the slice (extended to
// n), and recomputes asideMin.
func (tt *Partitions[V]) moveIn(n int) {
	tt.asideMin = math.MaxInt32
	for p, r := range tt.aside {
		switch {
		case p >= 0 && int(p) < n:
			tt.vals[p], tt.has[p] = *r, true
			delete(tt.aside, p)
		case p >= 0:
			tt.asideMin = min(tt.asideMin, p)
		}
	}
}

// Reserve makes room for the partitions numbered below n, so that setting
// them costs no regrowth and keeps them at their number.
func (tt *Partitions[V]) Reserve(n int) {
	if n > cap(tt.vals) || n > cap(tt.has) {
		tt.grow(n)
	}
}

// Delete removes partition p and returns its value and whether it had one.
func (tt *Partitions[V]) Delete(p int32) (V, bool) {
	var zero V
	if tt == nil {
		return zero, false
	}
	if p >= 0 && int(p) < len(tt.has) {
		if !tt.has[p] {
			return zero, false
		}
		if tt.shared {
			tt.vals, tt.shared = slices.Clone(tt.vals), false
		}
		v := tt.vals[p]
		tt.vals[p], tt.has[p] = zero, false
		tt.n--
		return v, true
	}
	r := tt.aside[p]
	if r == nil {
		return zero, false
	}
	delete(tt.aside, p)
	tt.n--
	return *r, true
}

// All yields every partition and its value in partition order. The
// partitions must not change during the iteration.
func (tt *Partitions[V]) All() iter.Seq2[int32, V] {
	return func(yield func(int32, V) bool) {
		if tt == nil {
			return
		}
		var aside []int32
		if len(tt.aside) > 0 {
			aside = slices.Sorted(maps.Keys(tt.aside))
		}
		i := 0
		for ; i < len(aside) && aside[i] < 0; i++ {
			if !yield(aside[i], *tt.aside[aside[i]]) {
				return
			}
		}
		for p, ok := range tt.has {
			if ok && !yield(int32(p), tt.vals[p]) {
				return
			}
		}
		for ; i < len(aside); i++ {
			if !yield(aside[i], *tt.aside[aside[i]]) {
				return
			}
		}
	}
}

// Sorted returns the values in partition order. When partitions 0 to
// Len()-1 all have one, that is the slice they are kept in, handed out
// until the next change (which copies it first), so that a caller may keep
// it; it must not be modified.
func (tt *Partitions[V]) Sorted() []V {
	if tt == nil {
		return nil
	}
	if len(tt.aside) == 0 && tt.n == len(tt.vals) {
		tt.shared = true
		return tt.vals[:tt.n:tt.n]
	}
	out := make([]V, 0, tt.n)
	for _, v := range tt.All() {
		out = append(out, v)
	}
	return out
}
