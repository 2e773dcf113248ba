package controller

// requestBatch collects the LeaderAndIsr, UpdateMetadata and StopReplica
// requests one state-machine call produces, per broker, and sends each
// broker one request of each kind at the end (Kafka's
// ControllerBrokerRequestBatch).

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
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

// requestBatch: partitions are added as they come (a partition may come
// more than once) and sorted and merged when the requests are built. The
// values of the lists are LeaderAndIsr's isNew and StopReplica's delete.
type requestBatch struct {
	lair      map[int32]*tpList[bool]
	umAllLive bool // UpdateMetadata goes to every live broker
	umBrokers map[int32]bool
	umParts   tpList[struct{}]
	umDeleted map[TP]bool
	stop      map[int32]*tpList[bool]
}

func newBatch() *requestBatch {
	return &requestBatch{
		lair: map[int32]*tpList[bool]{}, umBrokers: map[int32]bool{},
		umDeleted: map[TP]bool{}, stop: map[int32]*tpList[bool]{},
	}
}

func (b *requestBatch) empty() bool {
	return len(b.lair) == 0 && len(b.umBrokers) == 0 && !b.umAllLive && len(b.stop) == 0
}

// addLeaderAndIsr queues tp's state to brokers, and (as Kafka does) its
// metadata to every live broker.
func (b *requestBatch) addLeaderAndIsr(ctx *Context, brokers []int32, tp TP, isNew bool) {
	b.addLeaderAndIsrExcept(ctx, brokers, nil, tp, isNew)
}

// addLeaderAndIsrExcept is addLeaderAndIsr to brokers less except.
func (b *requestBatch) addLeaderAndIsrExcept(ctx *Context, brokers, except []int32, tp TP, isNew bool) {
	for _, id := range brokers {
		if ctx.isLive(id) && !slices.Contains(except, id) {
			brokerList(b.lair, id).add(tp, isNew)
		}
	}
	b.umAllLive = true
	b.umParts.add(tp, struct{}{})
}

func brokerList(m map[int32]*tpList[bool], id int32) *tpList[bool] {
	l := m[id]
	if l == nil {
		l = &tpList[bool]{}
		m[id] = l
	}
	return l
}

// addUpdateMetadata queues partitions' metadata (none: only the live
// brokers) to brokers.
func (b *requestBatch) addUpdateMetadata(brokers []int32, tps []TP) {
	for _, id := range brokers {
		b.umBrokers[id] = true
	}
	for _, tp := range tps {
		b.umParts.add(tp, struct{}{})
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
		brokerList(b.stop, id).add(tp, del)
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
	// Brokers told the same partitions (the surviving replicas after a
	// failure, every replica of new partitions) share one body; only the
	// broker epoch differs.
	var prev *kmsg.LeaderAndISRRequest
	var prevParts *tpList[bool]
	for _, id := range sortedIDs(b.lair) {
		parts := b.lair[id]
		if prev != nil && parts.sameAs(prevParts, func(a, b bool) bool { return a == b }) {
			req := *prev
			req.BrokerEpoch = ctx.liveBrokers[id].Epoch
			out = append(out, outgoing{id, &req})
			continue
		}
		prev, prevParts = c.leaderAndIsrRequest(id, parts), parts
		out = append(out, outgoing{id, prev})
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
		parts := b.umParts.tps()
		if len(b.umDeleted) == 0 && len(parts) > 0 && len(parts) == ctx.states.len() {
			shared = c.fullUpdateMetadata()
		} else {
			shared = c.updateMetadataRequest(parts, b.umDeleted)
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

// runLen is how many of the first items share the first one's topic.
func runLen[T any](items []T, topic func(T) string) int {
	n := 0
	for n < len(items) && topic(items[n]) == topic(items[0]) {
		n++
	}
	return n
}

// sortedUniqueTPs sorts tps and drops repeats, in place.
func sortedUniqueTPs(tps []TP) []TP {
	sortTPs(tps)
	return slices.Compact(tps)
}

// leaderAndIsrRequest tells broker the state of parts (value: isNew).
func (c *Controller) leaderAndIsrRequest(broker int32, parts *tpList[bool]) *kmsg.LeaderAndISRRequest {
	ctx := c.ctx
	req := kmsg.NewPtrLeaderAndISRRequest()
	req.Version = leaderAndIsrVersion
	req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = c.cfg.NodeID, ctx.epoch, ctx.liveBrokers[broker].Epoch
	leaders := map[int32]bool{}
	var t *topicInfo
	var ts *kmsg.LeaderAndISRRequestTopicState
	parts.each(or, func(tp TP, isNew bool) {
		if ts == nil || ts.Topic != tp.Topic {
			if t = ctx.topics[tp.Topic]; t == nil {
				ts = nil
				return
			}
			req.TopicStates = append(req.TopicStates, kmsg.NewLeaderAndISRRequestTopicState())
			ts = &req.TopicStates[len(req.TopicStates)-1]
			ts.Topic, ts.TopicID = tp.Topic, t.id
			ts.PartitionStates = make([]kmsg.LeaderAndISRRequestTopicPartition, 0, len(*parts.topics[tp.Topic]))
		}
		st, ok := ctx.states.get(tp)
		if !ok {
			return
		}
		ps := kmsg.NewLeaderAndISRRequestTopicPartition()
		ps.Partition, ps.ControllerEpoch = tp.Partition, st.ControllerEpoch
		ps.Leader, ps.LeaderEpoch, ps.ISR = st.Leader, st.LeaderEpoch, st.ISR
		ps.ZKVersion, ps.Replicas, ps.IsNew = st.PartitionEpoch, t.replicasOf(tp.Partition), isNew
		ps.AddingReplicas, ps.RemovingReplicas = t.adding[tp.Partition], t.removing[tp.Partition] // KIP-455
		ts.PartitionStates = append(ts.PartitionStates, ps)
		if st.Leader >= 0 {
			leaders[st.Leader] = true
		}
	})
	// A topic whose partitions all lacked a state says nothing.
	req.TopicStates = slices.DeleteFunc(req.TopicStates, func(ts kmsg.LeaderAndISRRequestTopicState) bool { return len(ts.PartitionStates) == 0 })
	for _, id := range sortedIDs(leaders) {
		if b, ok := ctx.liveBrokers[id]; ok {
			ll := kmsg.NewLeaderAndISRRequestLiveLeader()
			ll.BrokerID, ll.Host, ll.Port = id, b.Host, b.Port
			req.LiveLeaders = append(req.LiveLeaders, ll)
		}
	}
	return req
}

// stopReplicaRequest tells broker to stop the replicas of parts (value:
// delete; a partition given more than once is deleted if any says so).
func (c *Controller) stopReplicaRequest(broker int32, parts *tpList[bool]) *kmsg.StopReplicaRequest {
	ctx := c.ctx
	req := kmsg.NewPtrStopReplicaRequest()
	req.Version = stopReplicaVersion
	req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = c.cfg.NodeID, ctx.epoch, ctx.liveBrokers[broker].Epoch
	parts.each(or, func(tp TP, del bool) {
		if k := len(req.Topics); k == 0 || req.Topics[k-1].Topic != tp.Topic {
			t := kmsg.NewStopReplicaRequestTopic()
			t.Topic = tp.Topic
			req.Topics = append(req.Topics, t)
		}
		ps := kmsg.NewStopReplicaRequestTopicPartitionState()
		ps.Partition, ps.Delete = tp.Partition, del
		ps.LeaderEpoch = -1
		if st, ok := ctx.states.get(tp); ok {
			ps.LeaderEpoch = st.LeaderEpoch
		}
		if ps.Delete {
			ps.LeaderEpoch = leaderDuringDelete
		}
		t := &req.Topics[len(req.Topics)-1]
		t.PartitionStates = append(t.PartitionStates, ps)
	})
	return req
}

// dropMetadata forgets the batch's UpdateMetadata (already sent whole).
func (b *requestBatch) dropMetadata() {
	b.umAllLive = false
	clear(b.umBrokers)
	b.umParts.reset()
}
