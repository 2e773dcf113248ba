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
	v, _ := t.t.Get(tp.Topic, tp.Partition)
	return v
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
