package controller

// requestBatch collects the LeaderAndIsr, UpdateMetadata and StopReplica
// requests one state-machine call produces, per broker, and sends each
// broker one request of each kind at the end (Kafka's
// ControllerBrokerRequestBatch).

import (
	"slices"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Request versions the controller sends.
const (
	leaderAndIsrVersion   = 5
	updateMetadataVersion = 8
	stopReplicaVersion    = 3
)

// requestBatch: partitions are added as they come (a partition may come
// more than once) and sorted and merged when the requests are built. The
// values of the lists are LeaderAndIsr's isNew and StopReplica's delete.
type requestBatch struct {
	lair      map[int32]*tpList[bool]
	lairAt    []*tpList[bool] // lair's lists by broker id, for small ids
	umAllLive bool            // UpdateMetadata goes to every live broker
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
			b.lairOf(id).add(tp, isNew)
		}
	}
	b.umAllLive = true
	b.umParts.add(tp, struct{}{})
}

// lairOf is broker id's LeaderAndIsr list. Every partition an event
// touches adds to the lists of its replicas: the lists of small broker
// ids are found by index rather than hashed each time.
func (b *requestBatch) lairOf(id int32) *tpList[bool] {
	if uint32(id) < uint32(len(b.lairAt)) && b.lairAt[id] != nil {
		return b.lairAt[id]
	}
	l := brokerList(b.lair, id)
	if uint32(id) < maxDenseBroker/64 {
		for int(id) >= len(b.lairAt) {
			b.lairAt = append(b.lairAt, nil)
		}
		b.lairAt[id] = l
	}
	return l
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

// build turns the batch into requests, in Kafka's order: LeaderAndIsr,
// UpdateMetadata, StopReplica. Each is handed to emit as soon as it is
// built, so that the sender encodes and sends the first while the next
// are built.
func (b *requestBatch) build(c *Controller, emit func(broker int32, req kmsg.Request)) {
	ctx := c.ctx
	// Brokers told the same partitions (the surviving replicas after a
	// failure, every replica of new partitions) share one body; only the
	// broker epoch differs (f51a9f8; no figure recorded).
	var prev *kmsg.LeaderAndISRRequest
	var prevParts *tpList[bool]
	for _, id := range sortedIDs(b.lair) {
		parts := b.lair[id]
		if prev != nil && parts.sameAs(prevParts, or, func(a, b bool) bool { return a == b }) {
			req := *prev
			req.BrokerEpoch = ctx.liveBrokers[id].Epoch
			emit(id, &req)
			continue
		}
		prev, prevParts = c.leaderAndIsrRequest(id, parts), parts
		emit(id, prev)
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
		b.umParts.fold(none)
		if n := b.umParts.len(); len(b.umDeleted) == 0 && n > 0 && n == ctx.states.len() {
			shared = c.fullUpdateMetadata()
		} else {
			shared = c.updateMetadataRequest(&b.umParts, b.umDeleted)
		}
		for _, id := range sortedIDs(b.umBrokers) {
			if ctx.isLive(id) {
				req := *shared
				req.BrokerEpoch = ctx.liveBrokers[id].Epoch
				emit(id, &req)
			}
		}
	}
	for _, id := range sortedIDs(b.stop) {
		if ctx.isLive(id) {
			emit(id, c.stopReplicaRequest(id, b.stop[id]))
		}
	}
}

func sortedIDs[V any](m map[int32]V) []int32 {
	ids := make([]int32, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sortInt32s(ids)
	return ids
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
	var leaders brokerSet
	parts.eachTopic(or, func(name string, vals []tpVal[bool]) {
		t, states := ctx.topics[name], ctx.states.topic(name)
		if t == nil {
			return
		}
		// Filled in place: the struct is 150 bytes, and a copy per
		// partition showed in a broker failure's profile; the leaders go
		// into a bitmap, not a map (9a92a15: with tplist.go's folding,
		// BenchmarkBrokerFailure 72.5 → 70.1 MB/op, ns/op within noise).
		ps := make([]kmsg.LeaderAndISRRequestTopicPartition, len(vals))
		n := 0
		for _, e := range vals {
			st, ok := states.get(e.p)
			if !ok {
				continue
			}
			s := &ps[n]
			n++
			s.Partition, s.ControllerEpoch = e.p, st.ControllerEpoch
			s.Leader, s.LeaderEpoch, s.ISR = st.Leader, st.LeaderEpoch, st.ISR
			s.ZKVersion, s.Replicas, s.IsNew = st.PartitionEpoch, t.replicasOf(e.p), e.v
			if len(t.adding) > 0 || len(t.removing) > 0 { // KIP-455
				s.AddingReplicas, s.RemovingReplicas = t.adding[e.p], t.removing[e.p]
			}
			if st.Leader >= 0 {
				leaders.add(st.Leader)
			}
		}
		if n == 0 { // a topic whose partitions all lacked a state says nothing
			return
		}
		ts := kmsg.NewLeaderAndISRRequestTopicState()
		ts.Topic, ts.TopicID, ts.PartitionStates = name, t.id, ps[:n:n]
		req.TopicStates = append(req.TopicStates, ts)
	})
	for _, id := range ctx.liveBrokerIDs() {
		if !leaders.has(id) {
			continue
		}
		// A leader without the inter-broker listener is left out (Kafka's
		// controller fails with BrokerEndPointNotAvailableException).
		if ep, ok := ctx.liveBrokers[id].Endpoint(c.cfg.InterBrokerListener); ok {
			ll := kmsg.NewLeaderAndISRRequestLiveLeader()
			ll.BrokerID, ll.Host, ll.Port = id, ep.Host, ep.Port
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
			ps.LeaderEpoch = kafka.EpochDuringDelete // a deleting StopReplica
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
