package controller

// Per-partition tables of the context. A controller of 100k partitions
// looks partitions up hundreds of thousands of times per broker failure;
// maps keyed by (topic, partition) spent most of that time hashing topic
// names and missing caches. The tables are kafka.ValueTables: one dense
// slice per topic, indexed by partition id, and the last topic looked up
// remembered, so a walk over a topic's partitions hashes its name once.
// partTable keeps the controller's names for its methods.
//
// Evidence, from the commits that added each:
//   - dense per-topic tables instead of maps, with the state chunks:
//     BenchmarkBrokerCrash 29.7 -> 12.8 µs per led partition (812313b);
//   - ref (reading a state in place instead of copying it out): at 100k
//     partitions the election phase 15.0 -> 14.4 ms and the ISR-removal
//     phase 23.5 -> 22.0 ms (6de2514);
//   - the replica-state slabs (replicaTable), with lists.go: 183k -> 17k
//     allocations per broker failure (3e3c172);
//   - eachTopic: no figure was recorded (d7e50e0);
//   - sharing kafka.ValueTable costs one small allocation per topic walk
//     (topic's partSlice): BenchmarkBrokerFailure +1,400 allocs/op,
//     +0.08% bytes, time within noise (issue 15).

import (
	"slices"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// partTable maps partitions to values of type V. Its values are set with
// SetDense, so that a topic's partSlice holds them all.
type partTable[V any] struct {
	t kafka.ValueTable[V]
}

// partSlice is one topic's values, at their partition number: v[p] is p's
// value where has[p].
type partSlice[V any] struct {
	v   []V
	has []bool
}

func newPartTable[V any]() partTable[V] { return partTable[V]{} }

// topic returns the values of topic name, nil when it has none. It is
// valid until the table changes.
func (t *partTable[V]) topic(name string) *partSlice[V] {
	tt := t.t.Topic(name)
	if tt == nil {
		return nil
	}
	v, has := tt.Dense()
	return &partSlice[V]{v, has}
}

// get is tp's value and whether it has one.
func (t *partTable[V]) get(tp TP) (V, bool) { return t.t.Get(tp.Topic, tp.Partition) }

// get is partition p's value and whether it has one; a nil slice has none.
func (s *partSlice[V]) get(p int32) (V, bool) {
	if s == nil || p < 0 || int(p) >= len(s.has) || !s.has[p] {
		var zero V
		return zero, false
	}
	return s.v[p], true
}

// ref is tp's value in place, nil when it has none: for reading a large
// value in a hot loop without copying it out (a returned struct spilled
// and reloaded showed in the broker-failure profile). It is valid until
// the table changes.
func (t *partTable[V]) ref(tp TP) *V { return t.t.Ref(tp.Topic, tp.Partition) }

// at is tp's value, the zero value when it has none.
func (t *partTable[V]) at(tp TP) V {
	v, _ := t.get(tp)
	return v
}

func (t *partTable[V]) set(tp TP, v V) { t.t.SetDense(tp.Topic, tp.Partition, v) }

// reserve makes room for n partitions of topic name (a new topic: its
// values are then set without growing).
func (t *partTable[V]) reserve(name string, n int) { t.t.Reserve(name, n) }

func (t *partTable[V]) del(tp TP) { t.t.Delete(tp.Topic, tp.Partition) }

func (t *partTable[V]) len() int { return t.t.Len() }

// each calls fn for every partition with a value, in topic then partition
// order.
func (t *partTable[V]) each(fn func(tp TP, v V)) {
	t.eachTopic(func(name string, s *partSlice[V]) {
		for p, ok := range s.has {
			if ok {
				fn(TP{Topic: name, Partition: int32(p)}, s.v[p])
			}
		}
	})
}

// eachTopic calls fn with every topic's slice, in topic order.
func (t *partTable[V]) eachTopic(fn func(name string, s *partSlice[V])) {
	names := make([]string, 0, t.t.Topics())
	for name := range t.t.ByTopic() {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		fn(name, t.topic(name))
	}
}

// dropTopic forgets every partition of topic.
func (t *partTable[V]) dropTopic(name string) { t.t.DeleteTopic(name) }

// replicaTable holds each replica's state: per partition, a short list of
// (broker, state) in the order set. The lists are cut from shared slabs
// with room for replicaRoom entries, so that a partition's replicas taking
// their first states cost no allocation each.
type replicaTable struct {
	parts partTable[[]replicaEntry]
	slab  []replicaEntry
}

type replicaEntry struct {
	broker int32
	state  ReplicaState
}

// replicaRoom is the room of a partition's list (a replication factor of
// up to 4, or a reassignment of RF 3 adding one); a longer list grows out
// of the slab by itself.
const replicaRoom = 4

func newReplicaTable() replicaTable { return replicaTable{parts: newPartTable[[]replicaEntry]()} }

// at is k's state, NonExistentReplica when it has none.
func (t *replicaTable) at(k replicaKey) ReplicaState {
	rs, _ := t.parts.get(k.tp)
	for _, e := range rs {
		if e.broker == k.broker {
			return e.state
		}
	}
	return NonExistentReplica
}

func (t *replicaTable) set(k replicaKey, s ReplicaState) { t.swap(k, s) }

// swap sets k's state and returns the one it had.
func (t *replicaTable) swap(k replicaKey, s ReplicaState) ReplicaState {
	rs, _ := t.parts.get(k.tp)
	for i := range rs {
		if rs[i].broker == k.broker {
			prev := rs[i].state
			rs[i].state = s
			return prev
		}
	}
	if rs == nil {
		if len(t.slab) < replicaRoom {
			t.slab = make([]replicaEntry, 256*replicaRoom)
		}
		rs, t.slab = t.slab[:0:replicaRoom], t.slab[replicaRoom:]
	}
	t.parts.set(k.tp, append(rs, replicaEntry{k.broker, s}))
	return NonExistentReplica
}

func (t *replicaTable) del(k replicaKey) {
	rs, ok := t.parts.get(k.tp)
	if !ok {
		return
	}
	rs = slices.DeleteFunc(rs, func(e replicaEntry) bool { return e.broker == k.broker })
	if len(rs) == 0 {
		t.parts.del(k.tp)
		return
	}
	t.parts.set(k.tp, rs)
}
