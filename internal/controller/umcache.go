package controller

// A ready-made UpdateMetadata body per topic, kept in step with every
// partition-state change in O(1), so that a failover at a million
// partitions stamps its epoch on it and sends it instead of rebuilding it.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/metadata"
)

type umTopic struct {
	parts []kmsg.UpdateMetadataRequestTopicPartition // indexed by partition id
	has   []bool                                     // partition has a state
}

func (t *umTopic) grow(n int) {
	if n <= len(t.parts) {
		return
	}
	t.parts = slices.Grow(t.parts, n-len(t.parts))
	t.has = slices.Grow(t.has, n-len(t.has))
	for len(t.parts) < n {
		p := kmsg.NewUpdateMetadataRequestTopicPartition()
		p.Partition = int32(len(t.parts))
		t.parts = append(t.parts, p)
		t.has = append(t.has, false)
	}
}

// setState records a partition's state in the context and the cache.
func (c *Context) setState(tp TP, vs metadata.LeaderAndIsr) {
	c.states.set(tp, vs)
	t := c.umTopic(tp.Topic)
	t.grow(int(tp.Partition) + 1)
	p := &t.parts[tp.Partition]
	p.ControllerEpoch, p.Leader, p.LeaderEpoch = vs.ControllerEpoch, vs.Leader, vs.LeaderEpoch
	p.ISR, p.ZKVersion = vs.ISR, vs.PartitionEpoch
	p.Replicas = c.replicas(tp)
	t.has[tp.Partition] = true
}

func (c *Context) delState(tp TP) {
	c.states.del(tp)
	if t := c.um[tp.Topic]; t != nil && int(tp.Partition) < len(t.has) {
		t.has[tp.Partition] = false
	}
}

// setTopic records a topic's assignment.
func (c *Context) setTopic(name string, t *topicInfo) {
	if old := c.topics[name]; old != nil && old.id != t.id {
		delete(c.byID, old.id)
	}
	c.topics[name] = t
	c.byID[t.id] = name
	c.refreshReplicas(name)
}

// refreshReplicas re-reads a topic's replica lists into the cache.
func (c *Context) refreshReplicas(name string) {
	t, ti := c.umTopic(name), c.topics[name]
	t.grow(len(ti.replicas))
	for p, rs := range ti.replicas {
		t.parts[p].Replicas = rs
	}
}

// delTopic forgets a topic: its assignment, states and state machines.
func (c *Context) delTopic(name string) {
	for _, id := range c.topicChunks(name) {
		delete(c.chunkVer, id)
	}
	for tp := range c.legacy {
		if tp.Topic == name {
			delete(c.legacy, tp)
		}
	}
	if t := c.topics[name]; t != nil && c.byID[t.id] == name {
		delete(c.byID, t.id)
	}
	delete(c.topics, name)
	delete(c.um, name)
	if c.lastUMName == name {
		c.lastUMName, c.lastUM = "", nil
	}
	c.states.dropTopic(name)
	c.partState.dropTopic(name)
	c.replicaSt.parts.dropTopic(name)
}

func (c *Context) umTopic(name string) *umTopic {
	if c.lastUM != nil && c.lastUMName == name {
		return c.lastUM
	}
	t := c.um[name]
	if t == nil {
		t = &umTopic{}
		c.um[name] = t
	}
	c.lastUMName, c.lastUM = name, t
	return t
}

// fullUpdateMetadata is an UpdateMetadata with every partition that has a
// state, offline replicas computed against the live brokers. The request
// owns its partition entries (the cache keeps changing while senders
// encode); replica and ISR lists are shared, never modified in place.
func (c *Controller) fullUpdateMetadata() *kmsg.UpdateMetadataRequest {
	cx := c.ctx
	req := c.updateMetadataRequest(nil, nil)
	names := make([]string, 0, len(cx.um))
	for name := range cx.um {
		if cx.topics[name] != nil {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		t := cx.um[name]
		ts := kmsg.NewUpdateMetadataRequestTopicState()
		ts.Topic, ts.TopicID = name, cx.topics[name].id
		ts.PartitionStates = make([]kmsg.UpdateMetadataRequestTopicPartition, 0, len(t.parts))
		for i := range t.parts {
			if !t.has[i] {
				continue
			}
			p := t.parts[i]
			p.OfflineReplicas = nil
			for _, r := range p.Replicas {
				if !cx.isLive(r) {
					p.OfflineReplicas = append(p.OfflineReplicas, r)
				}
			}
			ts.PartitionStates = append(ts.PartitionStates, p)
		}
		req.TopicStates = append(req.TopicStates, ts)
	}
	return req
}
