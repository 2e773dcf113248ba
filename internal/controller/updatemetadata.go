package controller

// UpdateMetadata bodies, built from the context's states and replica
// lists. A failover at a million partitions builds one with every
// partition (fullUpdateMetadata) from the per-topic slices, without a
// cache of request structs to keep in step with every state change: that
// cache (umcache.go until ec5527a) cost ~150 bytes per partition in every
// context, ~150 MB at 1M partitions, and a topic lookup per setState, to
// save nothing: copying it out cost what building the body costs.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/metadata"
)

// updateMetadataRequest tells the metadata of parts and of the deleted
// partitions (added to parts).
func (c *Controller) updateMetadataRequest(parts *tpList[struct{}], deleted map[TP]bool) *kmsg.UpdateMetadataRequest {
	ctx := c.ctx
	req := c.updateMetadataHeader()
	for tp := range deleted {
		parts.add(tp, struct{}{})
	}
	var offline []int32 // backs every partition's OfflineReplicas
	parts.eachTopic(none, func(name string, vals []tpVal[struct{}]) {
		t, states := ctx.topics[name], ctx.states.topic(name)
		ts := kmsg.NewUpdateMetadataRequestTopicState()
		ts.Topic = name
		var replicas [][]int32
		if t != nil {
			ts.TopicID, replicas = t.id, t.replicas
		}
		ts.PartitionStates = make([]kmsg.UpdateMetadataRequestTopicPartition, 0, len(vals))
		for _, e := range vals {
			if len(deleted) > 0 && deleted[TP{Topic: name, Partition: e.p}] {
				ps := kmsg.NewUpdateMetadataRequestTopicPartition()
				ps.Partition, ps.ControllerEpoch, ps.Leader = e.p, ctx.epoch, kafka.LeaderDuringDelete
				ts.PartitionStates = append(ts.PartitionStates, ps)
			} else if st, ok := states.get(e.p); ok {
				var rs []int32
				if int(e.p) < len(replicas) {
					rs = replicas[e.p]
				}
				ts.PartitionStates, offline = c.appendUMPartition(ts.PartitionStates, offline, e.p, st, rs)
			}
		}
		// A topic none of whose partitions had a state says nothing.
		if len(ts.PartitionStates) > 0 {
			req.TopicStates = append(req.TopicStates, ts)
		}
	})
	return req
}

// updateMetadataHeader is an UpdateMetadata with the live brokers, each
// with every endpoint of its registration, and no partitions.
func (c *Controller) updateMetadataHeader() *kmsg.UpdateMetadataRequest {
	ctx := c.ctx
	req := kmsg.NewPtrUpdateMetadataRequest()
	req.Version = updateMetadataVersion
	req.ControllerID, req.ControllerEpoch = c.cfg.NodeID, ctx.epoch
	for _, id := range ctx.liveBrokerIDs() {
		b := ctx.liveBrokers[id]
		lb := kmsg.NewUpdateMetadataRequestLiveBroker()
		lb.ID, lb.Rack = id, b.Rack
		for _, e := range b.EndpointList() {
			ep := kmsg.NewUpdateMetadataRequestLiveBrokerEndpoint()
			ep.Host, ep.Port, ep.ListenerName, ep.SecurityProtocol = e.Host, e.Port, e.Listener, securityProtocolID(e.Protocol)
			lb.Endpoints = append(lb.Endpoints, ep)
		}
		req.LiveBrokers = append(req.LiveBrokers, lb)
	}
	return req
}

// securityProtocolID is Kafka's SecurityProtocol id of a protocol name.
func securityProtocolID(name string) int16 {
	switch name {
	case "SSL":
		return 1
	case "SASL_PLAINTEXT":
		return 2
	case "SASL_SSL":
		return 3
	}
	return 0 // PLAINTEXT
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
