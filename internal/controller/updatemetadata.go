package controller

// UpdateMetadata bodies, built from the context's states and replica
// lists. A failover at a million partitions builds one with every
// partition (fullUpdateMetadata) from the per-topic slices, without a
// cache of request structs to keep in step with every state change.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/metadata"
)

// updateMetadataRequest tells the metadata of parts (sorted, unique) and
// of the deleted partitions.
func (c *Controller) updateMetadataRequest(parts []TP, deleted map[TP]bool) *kmsg.UpdateMetadataRequest {
	ctx := c.ctx
	req := c.updateMetadataHeader()
	tps := parts
	if len(deleted) > 0 {
		tps = slices.Clone(parts)
		for tp := range deleted {
			tps = append(tps, tp)
		}
		tps = sortedUniqueTPs(tps)
	}
	var t *topicInfo
	var states *partSlice[metadata.LeaderAndIsr]
	var offline []int32 // backs every partition's OfflineReplicas
	var ts *kmsg.UpdateMetadataRequestTopicState
	for n, tp := range tps {
		if ts == nil || tp.Topic != ts.Topic {
			t, states = ctx.topics[tp.Topic], ctx.states.topic(tp.Topic)
			req.TopicStates = append(req.TopicStates, kmsg.NewUpdateMetadataRequestTopicState())
			ts = &req.TopicStates[len(req.TopicStates)-1]
			ts.Topic = tp.Topic
			if t != nil {
				ts.TopicID = t.id
			}
			ts.PartitionStates = make([]kmsg.UpdateMetadataRequestTopicPartition, 0, runLen(tps[n:], func(tp TP) string { return tp.Topic }))
		}
		if deleted[tp] {
			ps := kmsg.NewUpdateMetadataRequestTopicPartition()
			ps.Partition, ps.ControllerEpoch, ps.Leader = tp.Partition, ctx.epoch, leaderDuringDelete
			ts.PartitionStates = append(ts.PartitionStates, ps)
		} else if st, ok := states.get(tp.Partition); ok {
			var rs []int32
			if t != nil {
				rs = t.replicasOf(tp.Partition)
			}
			ts.PartitionStates, offline = c.appendUMPartition(ts.PartitionStates, offline, tp.Partition, st, rs)
		}
	}
	// A topic none of whose partitions had a state says nothing.
	req.TopicStates = slices.DeleteFunc(req.TopicStates, func(ts kmsg.UpdateMetadataRequestTopicState) bool { return len(ts.PartitionStates) == 0 })
	return req
}

// updateMetadataHeader is an UpdateMetadata with the live brokers and no
// partitions.
func (c *Controller) updateMetadataHeader() *kmsg.UpdateMetadataRequest {
	ctx := c.ctx
	req := kmsg.NewPtrUpdateMetadataRequest()
	req.Version = updateMetadataVersion
	req.ControllerID, req.ControllerEpoch = c.cfg.NodeID, ctx.epoch
	for _, id := range ctx.liveBrokerIDs() {
		b := ctx.liveBrokers[id]
		lb := kmsg.NewUpdateMetadataRequestLiveBroker()
		lb.ID, lb.Host, lb.Port, lb.Rack = id, b.Host, b.Port, b.Rack
		ep := kmsg.NewUpdateMetadataRequestLiveBrokerEndpoint()
		ep.Host, ep.Port, ep.ListenerName, ep.SecurityProtocol = b.Host, b.Port, "PLAINTEXT", 0
		lb.Endpoints = append(lb.Endpoints, ep)
		req.LiveBrokers = append(req.LiveBrokers, lb)
	}
	return req
}

// appendUMPartition appends partition p's metadata, its offline replicas
// appended to offline (which backs them).
func (c *Controller) appendUMPartition(ps []kmsg.UpdateMetadataRequestTopicPartition, offline []int32, p int32, st metadata.LeaderAndIsr, replicas []int32) ([]kmsg.UpdateMetadataRequestTopicPartition, []int32) {
	ps = append(ps, kmsg.UpdateMetadataRequestTopicPartition{Partition: p, ControllerEpoch: st.ControllerEpoch,
		Leader: st.Leader, LeaderEpoch: st.LeaderEpoch, ISR: st.ISR, ZKVersion: st.PartitionEpoch, Replicas: replicas})
	from := len(offline)
	for _, r := range replicas {
		if !c.ctx.isLive(r) {
			offline = append(offline, r)
		}
	}
	if len(offline) > from {
		ps[len(ps)-1].OfflineReplicas = offline[from:len(offline):len(offline)]
	}
	return ps, offline
}

// fullUpdateMetadata is an UpdateMetadata with every partition that has a
// state, offline replicas computed against the live brokers. Replica and
// ISR lists are shared with the context, never modified in place.
func (c *Controller) fullUpdateMetadata() *kmsg.UpdateMetadataRequest {
	cx := c.ctx
	req := c.updateMetadataHeader()
	var offline []int32
	for _, name := range cx.topicNames() {
		t, states := cx.topics[name], cx.states.topic(name)
		if states == nil {
			continue
		}
		ts := kmsg.NewUpdateMetadataRequestTopicState()
		ts.Topic, ts.TopicID = name, t.id
		ts.PartitionStates = make([]kmsg.UpdateMetadataRequestTopicPartition, 0, len(states.v))
		for p, has := range states.has {
			if has {
				ts.PartitionStates, offline = c.appendUMPartition(ts.PartitionStates, offline, int32(p), states.v[p], t.replicasOf(int32(p)))
			}
		}
		if len(ts.PartitionStates) > 0 {
			req.TopicStates = append(req.TopicStates, ts)
		}
	}
	return req
}
