package controller

// Dense per-topic tables. A controller of 100k partitions looks partition
// replicas and broker liveness up several times per partition in every
// broker failure; a map per topic keyed by partition id and a map of live
// brokers spent most of that time hashing. A topic's replica lists are a
// slice indexed by partition id, and broker sets are bitmaps.
//
// Evidence: BenchmarkBrokerFailure's profile, topped by
// runtime.mapaccess1_fast32 before these tables (ecac6ba, which recorded
// no before/after figure). With state chunks, the dense context they
// completed took cmd/samsa-failover-bench -mode crash at 100k partitions
// from 29.7 to 12.8 µs per led partition (812313b).

import "github.com/samsa-kafka/samsa/internal/metadata"

// topicInfo is a topic as the controller knows it.
type topicInfo struct {
	name string
	id   metadata.TopicID
	// replicas are each partition's replicas, indexed by partition id; nil
	// where there is no such partition.
	replicas [][]int32
	version  int64 // of the assignment key
	// Reassignments in progress (reassignment.go): each partition's adding
	// and removing replicas; no entry when it is not being reassigned.
	adding, removing map[int32][]int32
}

// newTopicInfo is a topic from its assignment document.
func newTopicInfo(a metadata.DenseAssignment, version int64) *topicInfo {
	return &topicInfo{id: a.TopicID, replicas: a.Replicas, version: version, adding: a.AddingReplicas, removing: a.RemovingReplicas}
}

// addPartitions records the partitions of topic name's assignment a that
// the context does not know yet (a new topic: all of them; the others'
// replicas change by reassignment only) and appends them to fresh.
func (c *Context) addPartitions(fresh []TP, name string, a metadata.DenseAssignment, version int64) []TP {
	t := c.topic(name)
	if t == nil {
		t = &topicInfo{id: a.TopicID, replicas: make([][]int32, 0, len(a.Replicas))}
		c.setTopic(name, t)
	}
	n := len(a.Replicas)
	c.states.reserve(name, n)
	c.partState.reserve(name, n)
	c.replicaSt.parts.reserve(name, n)
	t.version = version
	for p, rs := range a.Replicas {
		if rs != nil && !t.has(int32(p)) {
			t.setReplicas(int32(p), rs)
			fresh = append(fresh, TP{Topic: name, Partition: int32(p)})
		}
	}
	return fresh
}

// replicasOf is partition p's replicas, nil when there is no such partition.
func (t *topicInfo) replicasOf(p int32) []int32 {
	if p < 0 || int(p) >= len(t.replicas) {
		return nil
	}
	return t.replicas[p]
}

func (t *topicInfo) has(p int32) bool { return t.replicasOf(p) != nil }

// setReplicas records partition p with replicas rs; a negative id is no
// partition and is ignored.
func (t *topicInfo) setReplicas(p int32, rs []int32) {
	if p < 0 {
		return
	}
	if rs == nil {
		rs = []int32{} // present, if empty
	}
	for int(p) >= len(t.replicas) {
		t.replicas = append(t.replicas, nil)
	}
	t.replicas[p] = rs
}

// end is one past the highest partition id.
func (t *topicInfo) end() int32 { return int32(len(t.replicas)) }

// brokerSet is a set of broker ids: a bitmap for the usual small ids, a
// map for the rest. isLive is asked per replica of every partition a
// broker failure scans, where a map of live brokers hashed each time
// (ecac6ba: BenchmarkBrokerFailure's profile; no separate figure). A
// LeaderAndIsr's leaders are one too (batch.go, 9a92a15).
type brokerSet struct {
	bits []uint64
	big  map[int32]bool
}

// maxDenseBroker bounds the bitmap (8 KiB).
const maxDenseBroker = 1 << 16

func (s *brokerSet) has(id int32) bool {
	if id >= 0 && int(id>>6) < len(s.bits) {
		return s.bits[id>>6]&(1<<(id&63)) != 0
	}
	return s.big[id]
}

func (s *brokerSet) add(id int32) {
	if id < 0 || id >= maxDenseBroker {
		if s.big == nil {
			s.big = map[int32]bool{}
		}
		s.big[id] = true
		return
	}
	for int(id>>6) >= len(s.bits) {
		s.bits = append(s.bits, 0)
	}
	s.bits[id>>6] |= 1 << (id & 63)
}

func (s *brokerSet) remove(id int32) {
	if id >= 0 && int(id>>6) < len(s.bits) {
		s.bits[id>>6] &^= 1 << (id & 63)
		return
	}
	delete(s.big, id)
}

func (s *brokerSet) empty() bool {
	for _, w := range s.bits {
		if w != 0 {
			return false
		}
	}
	return len(s.big) == 0
}

// setOf is the set of ids.
func setOf(ids []int32) brokerSet {
	var s brokerSet
	for _, id := range ids {
		s.add(id)
	}
	return s
}

// setState records a partition's state.
func (c *Context) setState(tp TP, vs metadata.LeaderAndIsr) { c.states.set(tp, vs) }

func (c *Context) delState(tp TP) { c.states.del(tp) }

// setTopic records a topic's assignment.
func (c *Context) setTopic(name string, t *topicInfo) {
	if old := c.topics[name]; old != nil && old.id != t.id {
		delete(c.byID, old.id)
	}
	t.name = name
	c.topics[name], c.lastTopic = t, nil
	c.byID[t.id] = name
}

// delTopic forgets a topic: its assignment, states and state machines.
func (c *Context) delTopic(name string) {
	c.pending.dropTopic(name)
	for _, id := range c.topicChunks(name) {
		delete(c.chunkVer, id)
	}
	if t := c.topics[name]; t != nil && c.byID[t.id] == name {
		delete(c.byID, t.id)
	}
	delete(c.topics, name)
	c.lastTopic = nil
	c.states.dropTopic(name)
	c.partState.dropTopic(name)
	c.replicaSt.parts.dropTopic(name)
}
