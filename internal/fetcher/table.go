// table: a map from partitions to values, kept topic by topic, each topic's
// values in a slice at their partition number. A LeaderAndIsr, a Fetch
// request and its response list thousands of partitions, topic after topic:
// a look-up of the topic last looked up finds its row without hashing the
// name again, and then indexes it, where a map keyed by (topic, partition)
// hashes and compares the name for every partition. Partition numbers far
// past a row's others (a dense slice for them would be mostly empty) are
// kept in a map of the row; a partition is in one place only.
package fetcher

import (
	"iter"
	"maps"
	"slices"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// table maps partitions to values; the zero V means none. It is not safe
// for concurrent use, even for look-ups (they remember the row found).
type table[V comparable] struct {
	rows map[string]*row[V]
	n    int
	// The row of the topic last looked up (nil: none, or not present).
	lastTopic string
	last      *row[V]
}

type row[V comparable] struct {
	vals   []V // at their number
	sparse map[int32]V
	n      int
}

// denseSlack is how far past a row's end a new partition still grows it
// (partitions are numbered from 0 up).
const denseSlack = 1024

// row returns topic's row, creating it if create.
func (t *table[V]) row(topic string, create bool) *row[V] {
	if t.last != nil && topic == t.lastTopic {
		return t.last
	}
	r := t.rows[topic]
	if r == nil && create {
		if t.rows == nil {
			t.rows = map[string]*row[V]{}
		}
		r = &row[V]{}
		t.rows[topic] = r
	}
	if r != nil {
		t.lastTopic, t.last = topic, r
	}
	return r
}

// get returns tp's value, zero if none.
func (t *table[V]) get(tp kafka.TopicPartition) V {
	var zero V
	r := t.row(tp.Topic, false)
	if r == nil {
		return zero
	}
	if p := tp.Partition; p >= 0 && int(p) < len(r.vals) && r.vals[p] != zero {
		return r.vals[p]
	}
	return r.sparse[tp.Partition]
}

// set makes v (not zero) tp's value.
func (t *table[V]) set(tp kafka.TopicPartition, v V) {
	r := t.row(tp.Topic, true)
	p := tp.Partition
	var zero V
	if _, ok := r.sparse[p]; ok {
		r.sparse[p] = v
		return
	}
	switch {
	case p >= 0 && int(p) < len(r.vals):
	case p >= 0 && int64(p) <= int64(2*len(r.vals)+denseSlack):
		r.vals = slices.Grow(r.vals, int(p)+1-len(r.vals))[:p+1] // zeroed: never written past len
	default:
		if r.sparse == nil {
			r.sparse = map[int32]V{}
		}
		r.sparse[p] = v
		r.n++
		t.n++
		return
	}
	if r.vals[p] == zero {
		r.n++
		t.n++
	}
	r.vals[p] = v
}

// del removes tp and returns its value (zero if none).
func (t *table[V]) del(tp kafka.TopicPartition) V {
	var zero V
	r := t.row(tp.Topic, false)
	if r == nil {
		return zero
	}
	p := tp.Partition
	var v V
	if p >= 0 && int(p) < len(r.vals) && r.vals[p] != zero {
		v, r.vals[p] = r.vals[p], zero
	} else if sv, ok := r.sparse[p]; ok {
		v = sv
		delete(r.sparse, p)
	} else {
		return zero
	}
	r.n--
	t.n--
	if r.n == 0 {
		delete(t.rows, tp.Topic)
		t.last = nil
	}
	return v
}

// len is the number of partitions with a value.
func (t *table[V]) len() int { return t.n }

// all yields every partition and its value, topic by topic, each topic's
// in partition order. The table must not change meanwhile.
func (t *table[V]) all() iter.Seq2[kafka.TopicPartition, V] {
	return func(yield func(kafka.TopicPartition, V) bool) {
		var zero V
		for topic, r := range t.rows {
			for p, v := range r.vals {
				if v != zero && !yield(kafka.TopicPartition{Topic: topic, Partition: int32(p)}, v) {
					return
				}
			}
			for _, p := range slices.Sorted(maps.Keys(r.sparse)) {
				if !yield(kafka.TopicPartition{Topic: topic, Partition: p}, r.sparse[p]) {
					return
				}
			}
		}
	}
}
