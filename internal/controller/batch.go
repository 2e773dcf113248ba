package controller

// requestBatch collects the LeaderAndIsr, UpdateMetadata and StopReplica
// requests one state-machine call produces, per broker, and sends each
// broker one request of each kind at the end (Kafka's
// ControllerBrokerRequestBatch).

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/metadata"
)

// Request versions the controller sends.
const (
	leaderAndIsrVersion   = 5
	updateMetadataVersion = 7
	stopReplicaVersion    = 3
)

// leaderDuringDelete marks a deleted partition in UpdateMetadata (Kafka's
// LeaderAndIsr.LeaderDuringDelete), and the leader epoch of a deleting
// StopReplica (LeaderEpochDuringDelete).
const leaderDuringDelete = -2

type lairEntry struct {
	isNew bool
}

type requestBatch struct {
	lair      map[int32]map[TP]lairEntry
	umAllLive bool // UpdateMetadata goes to every live broker
	umBrokers map[int32]bool
	umParts   map[TP]bool
	umDeleted map[TP]bool
	stop      map[int32]map[TP]bool // value: delete
}

func newBatch() *requestBatch {
	return &requestBatch{
		lair: map[int32]map[TP]lairEntry{}, umBrokers: map[int32]bool{}, umParts: map[TP]bool{},
		umDeleted: map[TP]bool{}, stop: map[int32]map[TP]bool{},
	}
}

func (b *requestBatch) empty() bool {
	return len(b.lair) == 0 && len(b.umBrokers) == 0 && !b.umAllLive && len(b.stop) == 0
}

// addLeaderAndIsr queues tp's state to brokers, and (as Kafka does) its
// metadata to every live broker.
func (b *requestBatch) addLeaderAndIsr(ctx *Context, brokers []int32, tp TP, isNew bool) {
	for _, id := range brokers {
		if !ctx.isLive(id) {
			continue
		}
		m := b.lair[id]
		if m == nil {
			m = map[TP]lairEntry{}
			b.lair[id] = m
		}
		e := m[tp]
		e.isNew = e.isNew || isNew
		m[tp] = e
	}
	b.umAllLive = true
	b.umParts[tp] = true
}

// addUpdateMetadata queues partitions' metadata (none: only the live
// brokers) to brokers.
func (b *requestBatch) addUpdateMetadata(brokers []int32, tps []TP) {
	for _, id := range brokers {
		b.umBrokers[id] = true
	}
	for _, tp := range tps {
		b.umParts[tp] = true
	}
}

// addDeletedMetadata tells brokers the partitions are gone.
func (b *requestBatch) addDeletedMetadata(brokers []int32, tps []TP) {
	b.addUpdateMetadata(brokers, nil)
	for _, tp := range tps {
		b.umDeleted[tp] = true
	}
}

func (b *requestBatch) addStopReplica(brokers []int32, tp TP, del bool) {
	for _, id := range brokers {
		m := b.stop[id]
		if m == nil {
			m = map[TP]bool{}
			b.stop[id] = m
		}
		m[tp] = m[tp] || del
	}
}

// outgoing is one request for one broker.
type outgoing struct {
	broker int32
	req    kmsg.Request
}

// build turns the batch into requests, in Kafka's order: LeaderAndIsr,
// UpdateMetadata, StopReplica.
func (b *requestBatch) build(c *Controller) []outgoing {
	ctx := c.ctx
	var out []outgoing
	for _, id := range sortedIDs(b.lair) {
		out = append(out, outgoing{id, c.leaderAndIsrRequest(id, b.lair[id])})
	}
	if b.umAllLive {
		for id := range ctx.liveBrokers {
			b.umBrokers[id] = true
		}
	}
	if len(b.umBrokers) > 0 {
		// One body for every broker; only the broker epoch differs. A
		// batch covering every partition takes the ready-made body.
		var shared *kmsg.UpdateMetadataRequest
		if len(b.umDeleted) == 0 && len(b.umParts) > 0 && len(b.umParts) == len(ctx.states) {
			shared = c.fullUpdateMetadata()
		} else {
			shared = c.updateMetadataRequest(b.umParts, b.umDeleted)
		}
		for _, id := range sortedIDs(b.umBrokers) {
			if ctx.isLive(id) {
				req := *shared
				req.BrokerEpoch = ctx.liveBrokers[id].Epoch
				out = append(out, outgoing{id, &req})
			}
		}
	}
	for _, id := range sortedIDs(b.stop) {
		if ctx.isLive(id) {
			out = append(out, outgoing{id, c.stopReplicaRequest(id, b.stop[id])})
		}
	}
	return out
}

func sortedIDs[V any](m map[int32]V) []int32 {
	ids := make([]int32, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sortInt32s(ids)
	return ids
}

func (c *Controller) leaderAndIsrRequest(broker int32, parts map[TP]lairEntry) *kmsg.LeaderAndISRRequest {
	ctx := c.ctx
	req := kmsg.NewPtrLeaderAndISRRequest()
	req.Version = leaderAndIsrVersion
	req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = c.cfg.NodeID, ctx.epoch, ctx.liveBrokers[broker].Epoch
	leaders := map[int32]bool{}
	byTopic := map[string]int{}
	tps := make([]TP, 0, len(parts))
	for tp := range parts {
		tps = append(tps, tp)
	}
	sortTPs(tps)
	for _, tp := range tps {
		st, ok := ctx.states[tp]
		t := ctx.topics[tp.Topic]
		if !ok || t == nil {
			continue
		}
		i, ok := byTopic[tp.Topic]
		if !ok {
			ts := kmsg.NewLeaderAndISRRequestTopicState()
			ts.Topic, ts.TopicID = tp.Topic, t.id
			req.TopicStates = append(req.TopicStates, ts)
			i = len(req.TopicStates) - 1
			byTopic[tp.Topic] = i
		}
		ps := kmsg.NewLeaderAndISRRequestTopicPartition()
		ps.Partition, ps.ControllerEpoch = tp.Partition, st.State.ControllerEpoch
		ps.Leader, ps.LeaderEpoch, ps.ISR = st.State.Leader, st.State.LeaderEpoch, st.State.ISR
		ps.ZKVersion, ps.Replicas, ps.IsNew = st.State.PartitionEpoch, t.assignment[tp.Partition], parts[tp].isNew
		req.TopicStates[i].PartitionStates = append(req.TopicStates[i].PartitionStates, ps)
		if st.State.Leader >= 0 {
			leaders[st.State.Leader] = true
		}
	}
	for _, id := range sortedIDs(leaders) {
		if b, ok := ctx.liveBrokers[id]; ok {
			ll := kmsg.NewLeaderAndISRRequestLiveLeader()
			ll.BrokerID, ll.Host, ll.Port = id, b.Host, b.Port
			req.LiveLeaders = append(req.LiveLeaders, ll)
		}
	}
	return req
}

func (c *Controller) updateMetadataRequest(parts, deleted map[TP]bool) *kmsg.UpdateMetadataRequest {
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
	tps := make([]TP, 0, len(parts)+len(deleted))
	for tp := range parts {
		tps = append(tps, tp)
	}
	for tp := range deleted {
		if !parts[tp] {
			tps = append(tps, tp)
		}
	}
	sortTPs(tps)
	byTopic := map[string]int{}
	for _, tp := range tps {
		ps := kmsg.NewUpdateMetadataRequestTopicPartition()
		ps.Partition = tp.Partition
		var id metadata.TopicID
		if t := ctx.topics[tp.Topic]; t != nil {
			id = t.id
		}
		if st, ok := ctx.states[tp]; ok && !deleted[tp] {
			ps.ControllerEpoch, ps.Leader, ps.LeaderEpoch = st.State.ControllerEpoch, st.State.Leader, st.State.LeaderEpoch
			ps.ISR, ps.ZKVersion, ps.Replicas = st.State.ISR, st.State.PartitionEpoch, ctx.replicas(tp)
			for _, r := range ps.Replicas {
				if !ctx.isLive(r) {
					ps.OfflineReplicas = append(ps.OfflineReplicas, r)
				}
			}
		} else if deleted[tp] {
			ps.ControllerEpoch, ps.Leader = ctx.epoch, leaderDuringDelete
		} else {
			continue // no state yet: nothing to tell
		}
		i, ok := byTopic[tp.Topic]
		if !ok {
			ts := kmsg.NewUpdateMetadataRequestTopicState()
			ts.Topic, ts.TopicID = tp.Topic, id
			req.TopicStates = append(req.TopicStates, ts)
			i = len(req.TopicStates) - 1
			byTopic[tp.Topic] = i
		}
		req.TopicStates[i].PartitionStates = append(req.TopicStates[i].PartitionStates, ps)
	}
	return req
}

func (c *Controller) stopReplicaRequest(broker int32, parts map[TP]bool) *kmsg.StopReplicaRequest {
	ctx := c.ctx
	req := kmsg.NewPtrStopReplicaRequest()
	req.Version = stopReplicaVersion
	req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = c.cfg.NodeID, ctx.epoch, ctx.liveBrokers[broker].Epoch
	tps := make([]TP, 0, len(parts))
	for tp := range parts {
		tps = append(tps, tp)
	}
	sortTPs(tps)
	byTopic := map[string]int{}
	for _, tp := range tps {
		i, ok := byTopic[tp.Topic]
		if !ok {
			t := kmsg.NewStopReplicaRequestTopic()
			t.Topic = tp.Topic
			req.Topics = append(req.Topics, t)
			i = len(req.Topics) - 1
			byTopic[tp.Topic] = i
		}
		ps := kmsg.NewStopReplicaRequestTopicPartitionState()
		ps.Partition, ps.Delete = tp.Partition, parts[tp]
		ps.LeaderEpoch = -1
		if st, ok := ctx.states[tp]; ok {
			ps.LeaderEpoch = st.State.LeaderEpoch
		}
		if ps.Delete {
			ps.LeaderEpoch = leaderDuringDelete
		}
		req.Topics[i].PartitionStates = append(req.Topics[i].PartitionStates, ps)
	}
	return req
}

// dropMetadata forgets the batch's UpdateMetadata (already sent whole).
func (b *requestBatch) dropMetadata() {
	b.umAllLive = false
	clear(b.umBrokers)
	clear(b.umParts)
}
