package controller

import (
	"cmp"
	"slices"
	"sort"
	"strings"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/metadata"
)

// TP names a partition.
type TP = kafka.TopicPartition

// Context is the controller's cache of the cluster (Kafka's
// ControllerContext). It is only touched by the event loop.
type Context struct {
	epoch       int32
	fence       metadata.Fence
	liveBrokers map[int32]metadata.Broker   // brokers the controller has acted on
	live        brokerSet                   // their ids (addLive, removeLive, resetLive)
	registered  map[int32]metadata.Broker   // /brokers/ids as last seen
	topics      map[string]*topicInfo       // setTopic, delTopic
	lastTopic   *topicInfo                  // topic's last lookup
	byID        map[metadata.TopicID]string // topic names by id (setTopic/delTopic)
	states      partTable[metadata.LeaderAndIsr]
	chunkVer    map[chunkID]int64 // version of each state chunk (chunks.go)
	// Chunks a warm standby has been sent and not decoded (warmchunks.go).
	pending   pendingChunks
	partState partTable[PartitionState]
	replicaSt replicaTable
}

type replicaKey struct {
	tp     TP
	broker int32
}

func newContext() *Context {
	return &Context{
		liveBrokers: map[int32]metadata.Broker{},
		registered:  map[int32]metadata.Broker{},
		topics:      map[string]*topicInfo{},
		byID:        map[metadata.TopicID]string{},
		states:      newPartTable[metadata.LeaderAndIsr](),
		chunkVer:    map[chunkID]int64{},
		partState:   newPartTable[PartitionState](),
		replicaSt:   newReplicaTable(),
	}
}

func (c *Context) isLive(id int32) bool { return c.live.has(id) }

func (c *Context) addLive(b metadata.Broker) {
	c.liveBrokers[b.ID] = b
	c.live.add(b.ID)
}

func (c *Context) removeLive(id int32) {
	delete(c.liveBrokers, id)
	c.live.remove(id)
}

// resetLive makes the registered brokers the live ones.
func (c *Context) resetLive() {
	c.liveBrokers, c.live = map[int32]metadata.Broker{}, brokerSet{}
	for id, b := range c.registered {
		c.liveBrokers[id] = b
		c.live.add(id)
	}
}

func (c *Context) replicas(tp TP) []int32 {
	if t := c.topic(tp.Topic); t != nil {
		return t.replicasOf(tp.Partition)
	}
	return nil
}

// topic is the named topic, nil if unknown. The state machines walk
// partitions topic by topic: the last topic is remembered, so that a walk
// hashes its name once. Evidence: replicas(tp) hashed the topic name on
// every call, several per partition of an election (10ab87e; measured in
// BenchmarkBrokerFailure's profile, no before/after figure recorded).
func (c *Context) topic(name string) *topicInfo {
	if t := c.lastTopic; t != nil && t.name == name {
		return t
	}
	t := c.topics[name]
	if t != nil {
		c.lastTopic = t
	}
	return t
}

func (c *Context) registeredList() []metadata.Broker {
	out := make([]metadata.Broker, 0, len(c.registered))
	for _, b := range c.registered {
		out = append(out, b)
	}
	return out
}

func (c *Context) liveBrokerIDs() []int32 {
	ids := make([]int32, 0, len(c.liveBrokers))
	for id := range c.liveBrokers {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// topicNames is every topic's name, sorted.
func (c *Context) topicNames() []string {
	names := make([]string, 0, len(c.topics))
	for name := range c.topics {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// allPartitions lists every partition, in topic then partition order.
func (c *Context) allPartitions() []TP {
	var out []TP
	for _, name := range c.topicNames() {
		out = c.appendPartitions(out, name, func([]int32) bool { return true })
	}
	return out
}

// appendPartitions appends topic's partitions whose replicas pass keep, in
// partition order.
func (c *Context) appendPartitions(out []TP, topic string, keep func(replicas []int32) bool) []TP {
	t := c.topics[topic]
	if t == nil {
		return out
	}
	for p, rs := range t.replicas {
		if rs != nil && keep(rs) {
			out = append(out, TP{Topic: topic, Partition: int32(p)})
		}
	}
	return out
}

func (c *Context) partitionsOf(topic string) []TP {
	return c.appendPartitions(nil, topic, func([]int32) bool { return true })
}

// partitionsOnBroker lists partitions with a replica on broker id.
func (c *Context) partitionsOnBroker(id int32) []TP {
	var out []TP
	for _, name := range c.topicNames() {
		out = c.appendPartitions(out, name, func(rs []int32) bool { return slices.Contains(rs, id) })
	}
	return out
}

// sortTPs sorts partitions by topic, then partition. The state machines
// mostly produce them in order already, which is checked first.
func sortTPs(tps []TP) { sortRuns(tps, cmpTP) }

// cmpTP orders partitions by topic, then partition.
func cmpTP(a, b TP) int {
	if c := strings.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return cmp.Compare(a.Partition, b.Partition)
}

// sortRuns sorts s by cmp. The state machines append partitions in sorted
// runs (one per phase of an event), so a few runs are merged in linear
// passes; anything else is sorted outright. Evidence: none recorded
// (7d2e3d6 merged runs instead of sorting, with BenchmarkBrokerFailure
// added in the same commit but no figure); TestSortRuns holds it to
// slices.SortFunc.
func sortRuns[T any](s []T, cmp func(a, b T) int) {
	const maxRuns = 8
	starts := []int{0}
	for i := 1; i < len(s); i++ {
		if cmp(s[i-1], s[i]) > 0 {
			if starts = append(starts, i); len(starts) > maxRuns {
				slices.SortFunc(s, cmp)
				return
			}
		}
	}
	if len(starts) == 1 {
		return
	}
	buf := make([]T, len(s))
	src, dst := s, buf
	for len(starts) > 1 {
		var next []int
		for r := 0; r < len(starts); r += 2 {
			lo := starts[r]
			mid, hi := len(s), len(s)
			if r+1 < len(starts) {
				mid = starts[r+1]
			}
			if r+2 < len(starts) {
				hi = starts[r+2]
			}
			next = append(next, lo)
			i, j, k := lo, mid, lo
			for i < mid && j < hi {
				if cmp(src[j], src[i]) < 0 {
					dst[k], j = src[j], j+1
				} else {
					dst[k], i = src[i], i+1
				}
				k++
			}
			k += copy(dst[k:], src[i:mid])
			copy(dst[k:], src[j:hi])
		}
		starts, src, dst = next, dst, src
	}
	if &src[0] != &s[0] {
		copy(s, src)
	}
}
