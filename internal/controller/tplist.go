package controller

// tpList collects partitions, each with a value, for a request batch. The
// state machines add partitions topic by topic, so entries are kept per
// topic as (partition, value) pairs of a few bytes, with the last topic
// remembered; each lists them in topic then partition order, without
// comparing topic names per entry.

import (
	"cmp"
	"slices"
)

type tpList[V any] struct {
	topics   map[string]*[]tpVal[V]
	lastName string
	last     *[]tpVal[V]
	n        int
}

type tpVal[V any] struct {
	p int32
	v V
}

func (l *tpList[V]) add(tp TP, v V) {
	if l.last == nil || l.lastName != tp.Topic {
		if l.topics == nil {
			l.topics = map[string]*[]tpVal[V]{}
		}
		s := l.topics[tp.Topic]
		if s == nil {
			s = new([]tpVal[V])
			l.topics[tp.Topic] = s
		}
		l.lastName, l.last = tp.Topic, s
	}
	*l.last = append(*l.last, tpVal[V]{tp.Partition, v})
	l.n++
}

// len counts entries, a partition added twice counting twice.
func (l *tpList[V]) len() int { return l.n }

func (l *tpList[V]) reset() { *l = tpList[V]{} }

// each calls fn for every partition, in topic then partition order; a
// partition added more than once comes once, its values folded with merge.
func (l *tpList[V]) each(merge func(a, b V) V, fn func(tp TP, v V)) {
	names := make([]string, 0, len(l.topics))
	for name := range l.topics {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		vals := l.sorted(name)
		for i := 0; i < len(vals); i++ {
			v := vals[i].v
			for i+1 < len(vals) && vals[i+1].p == vals[i].p {
				i++
				v = merge(v, vals[i].v)
			}
			fn(TP{Topic: name, Partition: vals[i].p}, v)
		}
	}
}

// sorted is topic's entries sorted by partition.
func (l *tpList[V]) sorted(topic string) []tpVal[V] {
	vals := *l.topics[topic]
	sortRuns(vals, func(a, b tpVal[V]) int { return cmp.Compare(a.p, b.p) })
	return vals
}

// sameAs says whether l and o hold the same entries.
func (l *tpList[V]) sameAs(o *tpList[V], eq func(a, b V) bool) bool {
	if l.n != o.n || len(l.topics) != len(o.topics) {
		return false
	}
	for name := range l.topics {
		if o.topics[name] == nil {
			return false
		}
		if !slices.EqualFunc(l.sorted(name), o.sorted(name), func(a, b tpVal[V]) bool { return a.p == b.p && eq(a.v, b.v) }) {
			return false
		}
	}
	return true
}

// tps lists the distinct partitions in order.
func (l *tpList[V]) tps() []TP {
	out := make([]TP, 0, l.n)
	l.each(func(a, _ V) V { return a }, func(tp TP, _ V) { out = append(out, tp) })
	return out
}

func or(a, b bool) bool { return a || b }
