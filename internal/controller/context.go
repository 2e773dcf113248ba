package controller

import (
	"cmp"
	"slices"
	"sort"
	"strings"

	"github.com/samsa-kafka/samsa/internal/metadata"
)

// TP names a partition.
type TP = metadata.TopicPartition

// topicInfo is a topic as the controller knows it.
type topicInfo struct {
	id         metadata.TopicID
	assignment map[int32][]int32
	version    int64 // of the assignment key
	// Reassignments in progress (reassignment.go): each partition's adding
	// and removing replicas; no entry when it is not being reassigned.
	adding, removing map[int32][]int32
}

// Context is the controller's cache of the cluster (Kafka's
// ControllerContext). It is only touched by the event loop.
type Context struct {
	epoch       int32
	fence       metadata.Fence
	liveBrokers map[int32]metadata.Broker // brokers the controller has acted on
	registered  map[int32]metadata.Broker // /brokers/ids as last seen
	topics      map[string]*topicInfo
	byID        map[metadata.TopicID]string // topic names by id (setTopic/delTopic)
	states      map[TP]metadata.VersionedState
	partState   map[TP]PartitionState
	replicaSt   map[replicaKey]ReplicaState
	um          map[string]*umTopic // UpdateMetadata bodies per topic
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
		states:      map[TP]metadata.VersionedState{},
		partState:   map[TP]PartitionState{},
		replicaSt:   map[replicaKey]ReplicaState{},
		um:          map[string]*umTopic{},
	}
}

func (c *Context) isLive(id int32) bool { _, ok := c.liveBrokers[id]; return ok }

func (c *Context) replicas(tp TP) []int32 {
	if t := c.topics[tp.Topic]; t != nil {
		return t.assignment[tp.Partition]
	}
	return nil
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

// allPartitions lists every partition of every topic, sorted.
func (c *Context) allPartitions() []TP {
	var out []TP
	for name, t := range c.topics {
		for p := range t.assignment {
			out = append(out, TP{Topic: name, Partition: p})
		}
	}
	sortTPs(out)
	return out
}

func (c *Context) partitionsOf(topic string) []TP {
	t := c.topics[topic]
	if t == nil {
		return nil
	}
	out := make([]TP, 0, len(t.assignment))
	for p := range t.assignment {
		out = append(out, TP{Topic: topic, Partition: p})
	}
	sortTPs(out)
	return out
}

// partitionsOnBroker lists partitions with a replica on broker id.
func (c *Context) partitionsOnBroker(id int32) []TP {
	var out []TP
	for name, t := range c.topics {
		for p, rs := range t.assignment {
			for _, r := range rs {
				if r == id {
					out = append(out, TP{Topic: name, Partition: p})
					break
				}
			}
		}
	}
	sortTPs(out)
	return out
}

func sortTPs(tps []TP) { slices.SortFunc(tps, cmpTP) }

// cmpTP orders partitions by topic, then partition.
func cmpTP(a, b TP) int {
	if c := strings.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return cmp.Compare(a.Partition, b.Partition)
}
