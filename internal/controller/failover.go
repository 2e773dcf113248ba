package controller

import (
	"context"
	"slices"

	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/metastore"
)

// onControllerFailover runs when this broker wins the election (Kafka's
// onControllerFailover): bump the epoch, take the warm context or load
// one, connect to the brokers and tell them everything, then start the
// replica and partition state machines (online replicas told their state,
// offline ones out of the ISR; new and offline partitions elected with
// the offline strategy), then resume reassignments and deletions.
func (c *Controller) onControllerFailover(ctx context.Context) error {
	fence, err := c.md.IncrementControllerEpoch(ctx, c.ctrlVersion)
	if err != nil {
		return err
	}
	cx, err := c.failoverContext(ctx)
	if err != nil {
		return err
	}
	c.activate(cx, fence)
	c.sendStartupMetadata()
	initial := c.initializeStates()
	if err := c.startReplicaStateMachine(ctx, initial); err != nil {
		return err
	}
	if err := c.startPartitionStateMachine(ctx, initial.toElect); err != nil {
		return err
	}
	if err := c.initializeReassignments(ctx); err != nil {
		return err
	}
	return c.resumeDeletions(ctx)
}

// failoverContext is the context to fail over from: the warm one, its
// pending chunks decoded, or else one read from the store.
func (c *Controller) failoverContext(ctx context.Context) (*Context, error) {
	if cx := c.usableWarm(); cx != nil {
		c.decodePending(cx, -1)
		return cx, nil
	}
	cx := newContext()
	return cx, c.loadContext(ctx, cx)
}

// activate makes cx the active context under fence: the registered
// brokers are the live ones, the state machines start empty, and the
// channel manager connects to every live broker.
func (c *Controller) activate(cx *Context, fence metadata.Fence) {
	cx.epoch, cx.fence = fence.Epoch, fence
	cx.resetLive()
	cx.partState, cx.replicaSt = newPartTable[PartitionState](), newReplicaTable()
	c.warm = nil
	c.ctx = cx
	c.shutting = map[int32]bool{}
	c.setController(c.cfg.NodeID, true)
	for _, b := range cx.liveBrokers {
		c.cfg.Sender.AddBroker(b)
	}
}

// sendStartupMetadata tells the live brokers about the new controller.
// As Kafka: first an UpdateMetadata with the live brokers and the new
// controller (brokers keep the partition metadata they have), so that they
// can act on what follows. Then every partition's metadata, from the
// ready-made body; the replica state machine's startup repeats it in
// Kafka, here it sends only its LeaderAndIsr (startReplicaStateMachine).
func (c *Controller) sendStartupMetadata() {
	b := newBatch()
	b.addUpdateMetadata(c.ctx.liveBrokerIDs(), nil)
	c.send(b)
	c.sendFullMetadata(c.ctx.liveBrokerIDs())
}

// initialStates is what the state machines' initialization found: the
// replicas to move online and offline, the partitions to elect.
type initialStates struct {
	online, offline []replicaKey
	toElect         []TP
}

// initializeStates sets every replica's and partition's first state
// (Kafka's initializeReplicaState and initializePartitionState) in one pass
// over the partitions: a replica is Online on a live broker, else
// DeletionIneligible (and to be taken offline unless its topic is being
// deleted); a partition is New without a state, Online with a live
// leader, else Offline (and to be elected unless being deleted).
func (c *Controller) initializeStates() initialStates {
	cx := c.ctx
	var initial initialStates
	for _, tp := range cx.allPartitions() {
		for _, r := range cx.replicas(tp) {
			k := replicaKey{tp, r}
			switch {
			case cx.isLive(r):
				cx.replicaSt.set(k, OnlineReplica)
				initial.online = append(initial.online, k)
			case c.deleting[tp.Topic]:
				cx.replicaSt.set(k, ReplicaDeletionIneligible)
			default: // taken out of the ISR, as Kafka's replica state machine startup
				cx.replicaSt.set(k, ReplicaDeletionIneligible)
				initial.offline = append(initial.offline, k)
			}
		}
		st, ok := cx.states.get(tp)
		switch {
		case !ok:
			cx.partState.set(tp, NewPartition)
		case st.Leader >= 0 && cx.isLive(st.Leader):
			cx.partState.set(tp, OnlinePartition)
		default:
			cx.partState.set(tp, OfflinePartition)
		}
		if cx.partState.at(tp) != OnlinePartition && !c.deleting[tp.Topic] {
			initial.toElect = append(initial.toElect, tp)
		}
	}
	return initial
}

// startReplicaStateMachine (Kafka's ReplicaStateMachine.startup) moves the
// online replicas to OnlineReplica — their LeaderAndIsr go out, not the
// UpdateMetadata sendStartupMetadata already sent — then the offline ones
// to OfflineReplica, out of their ISRs.
func (c *Controller) startReplicaStateMachine(ctx context.Context, initial initialStates) error {
	b := newBatch()
	if err := c.changeReplicas(ctx, b, initial.online, OnlineReplica); err != nil {
		return err
	}
	b.dropMetadata()
	c.send(b)
	b = newBatch()
	if err := c.changeReplicas(ctx, b, initial.offline, OfflineReplica); err != nil {
		return err
	}
	c.send(b)
	return nil
}

// startPartitionStateMachine (Kafka's PartitionStateMachine.startup)
// elects leaders for the new and offline partitions, offline strategy.
func (c *Controller) startPartitionStateMachine(ctx context.Context, toElect []TP) error {
	b := newBatch()
	if err := c.changePartitions(ctx, b, toElect, OnlinePartition, OfflineElection); err != nil {
		return err
	}
	c.send(b)
	return nil
}

// loadContext reads brokers, topics, states, configs and deletion markers.
func (c *Controller) loadContext(ctx context.Context, cx *Context) error {
	brokers, _, err := c.md.Brokers(ctx)
	if err != nil {
		return err
	}
	for _, b := range brokers {
		cx.registered[b.ID] = b
	}
	topics, _, err := c.md.LoadTopics(ctx)
	if err != nil {
		return err
	}
	for name, t := range topics {
		a, err := t.Assignment.Dense()
		if err != nil {
			c.cfg.Logger.Warn("bad topic assignment", "topic", name, "err", err)
			continue
		}
		cx.setTopic(name, newTopicInfo(a, t.AssignmentVersion))
		for p, s := range t.States {
			cx.setState(TP{Topic: name, Partition: p}, s)
		}
		for ch, v := range t.ChunkVersions {
			cx.chunkVer[chunkID{name, ch}] = v
		}
	}
	c.unclean = map[string]bool{}
	cfgs, _, err := c.md.Store().List(ctx, metadata.TopicConfigsPrefix)
	if err != nil {
		return err
	}
	for _, kv := range cfgs {
		c.applyTopicConfig(kv)
	}
	if err := c.loadBrokerConfigs(ctx); err != nil {
		return err
	}
	c.deleting = map[string]bool{}
	marks, _, err := c.md.Store().List(ctx, metadata.DeleteTopicsPrefix)
	if err != nil {
		return err
	}
	for _, kv := range marks {
		c.deleting[kv.Key[len(metadata.DeleteTopicsPrefix):]] = true
	}
	return nil
}

// brokersChanged diffs the registered brokers against the live set (Kafka's
// BrokerChange). A broker whose registration changed epoch bounced: it
// counts as failed and started. A broker that rewrote its registration in
// the same epoch with other endpoints (its listeners changed at run time)
// is Kafka's BrokerModification: every broker learns its new endpoints.
func (c *Controller) brokersChanged(ctx context.Context, brokers []metadata.Broker) error {
	current := map[int32]metadata.Broker{}
	for _, b := range brokers {
		current[b.ID] = b
	}
	var dead, started, modified []int32
	for id, old := range c.ctx.liveBrokers {
		switch nb, ok := current[id]; {
		case !ok || nb.Epoch != old.Epoch:
			dead = append(dead, id)
		case !slices.Equal(nb.EndpointList(), old.EndpointList()):
			modified = append(modified, id)
		}
	}
	if len(modified) > 0 {
		c.onBrokersModified(current, modified)
	}
	for id, nb := range current {
		if old, ok := c.ctx.liveBrokers[id]; !ok || old.Epoch != nb.Epoch {
			started = append(started, id)
		}
	}
	sortInt32s(dead)
	sortInt32s(started)
	for _, id := range dead {
		c.ctx.removeLive(id)
		delete(c.shutting, id)
		c.cfg.Sender.RemoveBroker(id)
	}
	// The failures are handled before the started brokers are live (as
	// Kafka handles a bounced broker's): the first UpdateMetadata with
	// partitions a started broker gets is onBrokerStartup's full image,
	// which its metadata cache takes as the whole truth.
	if len(dead) > 0 {
		c.cfg.Logger.Info("brokers failed", "ids", dead)
		if err := c.onBrokerFailure(ctx, dead); err != nil {
			return err
		}
	}
	for _, id := range started {
		c.ctx.addLive(current[id])
		c.cfg.Sender.AddBroker(current[id])
	}
	if len(started) > 0 {
		c.cfg.Logger.Info("brokers started", "ids", started)
		return c.onBrokerStartup(ctx, started)
	}
	return nil
}

// onBrokersModified records the brokers' new registrations and sends every
// live broker an UpdateMetadata with only the live brokers in it (Kafka's
// processBrokerModification and onBrokerUpdate).
func (c *Controller) onBrokersModified(current map[int32]metadata.Broker, ids []int32) {
	sortInt32s(ids)
	for _, id := range ids {
		c.ctx.addLive(current[id])
	}
	c.cfg.Logger.Info("broker registrations changed", "ids", ids)
	b := newBatch()
	b.addUpdateMetadata(c.ctx.liveBrokerIDs(), nil)
	c.send(b)
}

// onBrokerStartup: new brokers learn everything; their replicas go online;
// partitions without a leader are elected.
func (c *Controller) onBrokerStartup(ctx context.Context, ids []int32) error {
	b := newBatch()
	b.addUpdateMetadata(c.ctx.liveBrokerIDs(), nil)
	c.sendFullMetadata(ids)
	var keys []replicaKey
	for _, id := range ids {
		for _, tp := range c.ctx.partitionsOnBroker(id) {
			if !c.deleting[tp.Topic] {
				keys = append(keys, replicaKey{tp, id})
			}
		}
	}
	if err := c.changeReplicas(ctx, b, keys, OnlineReplica); err != nil {
		return err
	}
	if err := c.electOffline(ctx, b); err != nil {
		return err
	}
	c.send(b)
	if err := c.resumeReassignmentsTo(ctx, ids); err != nil {
		return err
	}
	return c.resumeDeletions(ctx)
}

// onBrokerFailure: partitions led by the dead brokers go offline and are
// elected again; their replicas go offline (out of the ISR). The new
// leaders are written and sent first, as Kafka's onReplicasBecomeOffline
// sends the partition state machine's batch before the replicas'; the
// ISR removals rewrite the same state chunks in a second write, after
// the new leaders are on their way. (Staging both into one write, as a
// controlled shutdown does, saved a write but held the new leaders back
// while the ISR removals were decided: 20-30 ms later at every broker at
// 100k partitions.)
func (c *Controller) onBrokerFailure(ctx context.Context, ids []int32) error {
	b := newBatch()
	led, keys, failedDeletes := c.onDeadBrokers(setOf(ids))
	if err := c.changePartitions(ctx, b, led, OfflinePartition, OfflineElection); err != nil {
		return err
	}
	if err := c.electOffline(ctx, b); err != nil {
		return err
	}
	c.send(b)
	b = newBatch()
	if err := c.changeReplicas(ctx, b, keys, OfflineReplica); err != nil {
		return err
	}
	if err := c.changeReplicas(ctx, b, failedDeletes, ReplicaDeletionIneligible); err != nil {
		return err
	}
	if len(led) == 0 { // as Kafka: otherwise the new leaders' UpdateMetadata told everyone
		b.addUpdateMetadata(c.ctx.liveBrokerIDs(), nil)
	}
	c.send(b)
	return c.resumeDeletions(ctx)
}

// onDeadBrokers lists, topic by topic, the partitions the dead brokers
// led and their replicas, except in topics being deleted, where it lists
// the replicas whose deletion had started.
func (c *Controller) onDeadBrokers(dead brokerSet) (led []TP, keys, failedDeletes []replicaKey) {
	cx := c.ctx
	keys = make([]replicaKey, 0, cx.states.len())
	for _, name := range cx.topicNames() {
		t, deleting := cx.topics[name], c.deleting[name]
		states := cx.states.topic(name)
		for p, rs := range t.replicas {
			tp := TP{Topic: name, Partition: int32(p)}
			for _, r := range rs {
				switch {
				case !dead.has(r):
				case !deleting:
					keys = append(keys, replicaKey{tp, r})
				case cx.replicaSt.at(replicaKey{tp, r}) == ReplicaDeletionStarted:
					failedDeletes = append(failedDeletes, replicaKey{tp, r})
				}
			}
			if st, ok := states.get(int32(p)); ok && !deleting && dead.has(st.Leader) {
				led = append(led, tp)
			}
		}
	}
	return led, keys, failedDeletes
}

// electOffline moves every New or Offline partition not being deleted to
// Online with the offline strategy (Kafka's triggerOnlinePartitionStateChange).
func (c *Controller) electOffline(ctx context.Context, b *requestBatch) error {
	var tps []TP
	// Topic by topic: a broker failure scans every partition here.
	c.ctx.partState.eachTopic(func(name string, s *partSlice[PartitionState]) {
		if c.deleting[name] {
			return
		}
		for p, ok := range s.has {
			if st := s.v[p]; ok && (st == NewPartition || st == OfflinePartition) {
				tps = append(tps, TP{Topic: name, Partition: int32(p)})
			}
		}
	})
	return c.changePartitions(ctx, b, tps, OnlinePartition, OfflineElection)
}

// onTopicChange handles new topics and new partitions of existing topics
// (Kafka's TopicChange and PartitionModifications): replicas and partitions
// go New, then Online.
func (c *Controller) onTopicChange(ctx context.Context, kvs []metastore.KV) error {
	type topicWrite struct {
		name    string
		a       metadata.DenseAssignment
		version int64
	}
	var writes []topicWrite
	n := 0
	for _, kv := range kvs {
		name, p, ok := metadata.ParseTopicsKey(kv.Key)
		if !ok || p >= 0 || kv.Value == nil {
			continue
		}
		a, err := metadata.DecodeDenseAssignment(kv.Value)
		if err != nil {
			c.cfg.Logger.Warn("bad topic assignment", "topic", name, "err", err)
			continue
		}
		writes, n = append(writes, topicWrite{name, a, kv.Version}), n+len(a.Replicas)
	}
	fresh := make([]TP, 0, n)
	for _, w := range writes {
		fresh = c.ctx.addPartitions(fresh, w.name, w.a, w.version)
	}
	if len(fresh) == 0 {
		return nil
	}
	b := newBatch()
	keys := make([]replicaKey, 0, 3*len(fresh))
	for _, tp := range fresh {
		for _, r := range c.ctx.replicas(tp) {
			keys = append(keys, replicaKey{tp, r})
		}
	}
	if err := c.changePartitions(ctx, b, fresh, NewPartition, OfflineElection); err != nil {
		return err
	}
	if err := c.changeReplicas(ctx, b, keys, NewReplica); err != nil {
		return err
	}
	if err := c.changePartitions(ctx, b, fresh, OnlinePartition, OfflineElection); err != nil {
		return err
	}
	online := keepIf(keys, func(k replicaKey) bool { return c.ctx.isLive(k.broker) })
	if err := c.changeReplicas(ctx, b, online, OnlineReplica); err != nil {
		return err
	}
	c.send(b)
	return nil
}
