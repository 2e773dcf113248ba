package fetcher

import (
	"iter"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// table maps partitions to values, the zero V meaning none: a
// kafka.ValueTable keyed by kafka.TopicPartition. A LeaderAndIsr, a Fetch
// request and its response list thousands of partitions, topic after
// topic: the table finds the topic last looked up without hashing its name
// again, then indexes its slice. It is not safe for concurrent use, even
// for look-ups.
type table[V comparable] struct {
	t kafka.ValueTable[V]
}

// get returns tp's value, zero if none.
func (t *table[V]) get(tp kafka.TopicPartition) V {
	if r := t.t.Ref(tp.Topic, tp.Partition); r != nil {
		return *r
	}
	var zero V
	return zero
}

// set makes v (not zero) tp's value.
func (t *table[V]) set(tp kafka.TopicPartition, v V) { t.t.Set(tp.Topic, tp.Partition, v) }

// del removes tp and returns its value (zero if none).
func (t *table[V]) del(tp kafka.TopicPartition) V {
	v, _ := t.t.Delete(tp.Topic, tp.Partition)
	return v
}

// len is the number of partitions with a value.
func (t *table[V]) len() int { return t.t.Len() }

// all yields every partition and its value, topic by topic, each topic's
// in partition order. The table must not change meanwhile.
func (t *table[V]) all() iter.Seq2[kafka.TopicPartition, V] { return t.t.All() }

// reserveRuns makes room for the partitions tp(0) ... tp(n-1), run of one
// topic by run (a LeaderAndIsr and a fetch list them topic by topic), so
// that a run of thousands grows its topic's slices once instead of once
// per doubling; a run whose numbers are out of proportion to its length is
// left to grow as it is set. The caller sets every partition it names
// (a negative number names none): a topic given room and no partition
// would stay in the table, empty.
func (t *table[V]) reserveRuns(n int, tp func(i int) kafka.TopicPartition) {
	for i := 0; i < n; {
		topic, hi, j := tp(i).Topic, int32(-1), i
		for ; j < n; j++ {
			k := tp(j)
			if k.Topic != topic {
				break
			}
			hi = max(hi, k.Partition)
		}
		if hi >= 0 && int64(hi) < int64(4*(j-i)+1024) {
			t.t.Reserve(topic, int(hi)+1)
		}
		i = j
	}
}
