package kafka

import "iter"

// denseSlack is how far past the dense slice's end a new partition still
// grows it.
const denseSlack = 1024

// A Table keeps one pointer per partition, keyed by topic name and
// partition number: one look-up of the topic's name, then an index. A
// broker holds up to hundreds of thousands of partitions of a few thousand
// topics, created, led and deleted topic by topic; a map keyed by (topic,
// partition) hashes and compares the topic's name for every partition and
// rehashes as it grows, where a topic's table is a slice indexed by the
// partition number.
//
// Partitions are numbered from 0 up and usually all hosted, so each topic
// keeps a dense slice; a number far past the others (more than
// denseSlack past twice the slice's length) goes to a small map instead,
// so that one odd number cannot make a huge, mostly empty slice. A topic
// whose last partition is deleted is forgotten.
//
// Evidence: replica's hosted partitions moved from a map keyed by (topic,
// partition) to per-topic tables (commit ea14e28, with the other changes of
// that commit): BenchmarkLeaderAndIsrApply (100k hosted, all changed)
// 306-330 ms / 570k allocs -> 185-272 ms / 136k, BenchmarkLeaderAndIsrCreate
// (100k new) 690-702 ms / 1.03M -> 409-470 ms / 543k allocs/op.
//
// A Table is not safe for concurrent use; its owner's lock guards it. Reads
// (Get, Len, All, Cursor) may run concurrently with each other.
//
// Table maps (topic, partition) to a *T; nil means absent. The zero value is
// an empty table.
type Table[T any] struct {
	topics map[string]*Topic[T]
	n      int
	// gen changes whenever a topic is added to or removed from topics, so
	// that a cursor knows when the topic it holds may be stale.
	gen uint64
}

// Topic holds one topic's entries.
type Topic[T any] struct {
	dense  []*T
	sparse map[int32]*T
	n      int
}

// Len is the number of entries.
func (t *Table[T]) Len() int { return t.n }

// Topics is the number of topics with at least one entry.
func (t *Table[T]) Topics() int { return len(t.topics) }

// Topic returns the entries of one topic, nil if it has none. The result
// is valid until the table is next modified.
func (t *Table[T]) Topic(name string) *Topic[T] { return t.topics[name] }

// Get returns the entry of (topic, p), nil if absent.
func (t *Table[T]) Get(topic string, p int32) *T { return t.topics[topic].Get(p) }

// Get returns the entry of partition p, nil if absent; a nil *Topic is
// empty.
func (tt *Topic[T]) Get(p int32) *T {
	if tt == nil {
		return nil
	}
	if p >= 0 && int(p) < len(tt.dense) {
		if v := tt.dense[p]; v != nil {
			return v
		}
	}
	return tt.sparse[p]
}

// Len is the number of the topic's entries; 0 for a nil *Topic.
func (tt *Topic[T]) Len() int {
	if tt == nil {
		return 0
	}
	return tt.n
}

// Grow makes room past the end of topic's dense slice for n more entries,
// so that putting the partitions that follow its last costs no regrowth
// (the room is wasted where the numbers put are not those). It is for a
// topic about to get entries: a topic it adds stays, empty, until it gets
// one and loses its last.
func (t *Table[T]) Grow(topic string, n int) {
	tt := t.topics[topic]
	if tt == nil {
		tt = t.topic(topic)
	}
	if len(tt.dense)+n > cap(tt.dense) {
		grown := make([]*T, len(tt.dense), len(tt.dense)+n)
		copy(grown, tt.dense)
		tt.dense = grown
	}
}

func (t *Table[T]) topic(name string) *Topic[T] {
	if t.topics == nil {
		t.topics = map[string]*Topic[T]{}
	}
	tt := &Topic[T]{}
	t.topics[name] = tt
	t.gen++
	return tt
}

// Put stores v (not nil) at (topic, p) and returns the entry it replaced,
// nil if none.
func (t *Table[T]) Put(topic string, p int32, v *T) (old *T) {
	return t.putIn(t.topics[topic], topic, p, v)
}

// putIn is Put, tt being topic's entries (nil if none).
func (t *Table[T]) putIn(tt *Topic[T], topic string, p int32, v *T) (old *T) {
	if tt == nil {
		tt = t.topic(topic)
	}
	if old = tt.put(p, v); old == nil {
		tt.n++
		t.n++
	}
	return old
}

func (tt *Topic[T]) put(p int32, v *T) (old *T) {
	if old = tt.sparse[p]; old != nil { // replaced where it is
		tt.sparse[p] = v
		return old
	}
	switch {
	case p >= 0 && int(p) < len(tt.dense):
	case p >= 0 && int64(p) <= int64(2*len(tt.dense)+denseSlack):
		if int(p) >= cap(tt.dense) {
			grown := make([]*T, p+1, max(int(p)+1, 2*cap(tt.dense)))
			copy(grown, tt.dense)
			tt.dense = grown
		}
		tt.dense = tt.dense[:p+1]
	default:
		if tt.sparse == nil {
			tt.sparse = map[int32]*T{}
		}
		tt.sparse[p] = v
		return nil
	}
	old, tt.dense[p] = tt.dense[p], v
	return old
}

// Delete removes (topic, p) and returns its entry, nil if absent.
func (t *Table[T]) Delete(topic string, p int32) *T {
	return t.deleteIn(t.topics[topic], topic, p)
}

// deleteIn is Delete, tt being topic's entries (nil if none).
func (t *Table[T]) deleteIn(tt *Topic[T], topic string, p int32) *T {
	v := tt.Get(p)
	if v == nil {
		return nil
	}
	if p >= 0 && int(p) < len(tt.dense) && tt.dense[p] == v {
		tt.dense[p] = nil
	} else {
		delete(tt.sparse, p)
	}
	tt.n--
	t.n--
	if tt.n == 0 {
		delete(t.topics, topic)
		t.gen++
	}
	return v
}

// All yields every entry with its topic and partition, topic by topic in
// no particular order, each topic's dense entries by partition number. The
// table must not be modified during the iteration.
func (t *Table[T]) All() iter.Seq2[TopicPartition, *T] {
	return func(yield func(TopicPartition, *T) bool) {
		for name, tt := range t.topics {
			for p, v := range tt.dense {
				if v != nil && !yield(TopicPartition{name, int32(p)}, v) {
					return
				}
			}
			for p, v := range tt.sparse {
				if !yield(TopicPartition{name, p}, v) {
					return
				}
			}
		}
	}
}

// Cursor looks entries up, and puts and deletes them, for a run of keys,
// most of the same topic as the one before: the topic's name is hashed
// once per run. It notices topics added to or removed from the table since
// its last use, however made, so it stays valid as long as the table; like
// the table, it needs its owner's lock (for reading to Get, for writing to
// Put or Delete), and it is not safe for concurrent use itself.
type Cursor[T any] struct {
	t     *Table[T]
	name  string
	tt    *Topic[T]
	gen   uint64
	found bool
}

// Cursor returns a cursor on t.
func (t *Table[T]) Cursor() Cursor[T] { return Cursor[T]{t: t} }

// topic returns the entries of name, nil if none.
func (c *Cursor[T]) topic(name string) *Topic[T] {
	if !c.found || c.gen != c.t.gen || name != c.name {
		c.name, c.tt, c.gen, c.found = name, c.t.topics[name], c.t.gen, true
	}
	return c.tt
}

// Get is Table.Get.
func (c *Cursor[T]) Get(topic string, p int32) *T { return c.topic(topic).Get(p) }

// Put is Table.Put.
func (c *Cursor[T]) Put(topic string, p int32, v *T) (old *T) {
	return c.t.putIn(c.topic(topic), topic, p, v)
}

// Delete is Table.Delete.
func (c *Cursor[T]) Delete(topic string, p int32) *T {
	return c.t.deleteIn(c.topic(topic), topic, p)
}
