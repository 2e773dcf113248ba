package controller

// Partition reassignment (KIP-455), as the ZooKeeper-era KafkaController's
// onPartitionReassignment, for many partitions at once. With RS the full
// replica set, ORS the original replicas, TRS the target, AR = TRS − ORS the
// adding and RR = ORS − TRS the removing replicas:
//
//	U. The store's assignment gets RS/AR/RR (one fenced, version-checked
//	   write per topic), so a new controller resumes from it; replicas of a
//	   superseded reassignment no longer in RS are stopped and deleted.
//	A. TRS not yet all in the ISR: the leader epoch is bumped and
//	   LeaderAndIsr (with RS/AR/RR) goes to ORS, and to AR with isNew —
//	   their brokers create the logs and follow the leader; AR → NewReplica.
//	B. TRS all in the ISR (checked again after every accepted AlterPartition
//	   and whenever a target broker starts): AR → OnlineReplica; RS = TRS in
//	   memory; a leader outside TRS or dead is replaced with the reassign
//	   strategy, otherwise the leader epoch is bumped and TRS told; RR →
//	   Offline (out of the ISR) → DeletionStarted (StopReplica delete) →
//	   DeletionSuccessful → NonExistent; the store's assignment becomes TRS
//	   without adding/removing; UpdateMetadata to every broker; queued topic
//	   deletions resume (a topic being reassigned is ineligible for deletion).
//
// Cancelling reassigns to ORS: the adding replicas are stopped and deleted
// in step U, and B completes at once. A removed replica that was leading
// (possible once AR members can be elected) leaves its partition leaderless:
// it is elected again with the offline strategy among what remains.

import (
	"context"
	"slices"

	"github.com/samsa-kafka/samsa/internal/metadata"
)

// onPartitionReassignment moves each partition of want towards its full
// assignment: step U, then A for those not caught up, B for the others.
func (c *Controller) onPartitionReassignment(ctx context.Context, want map[TP]metadata.PartitionAssignment) error {
	tps := make([]TP, 0, len(want))
	for tp := range want {
		tps = append(tps, tp)
	}
	sortTPs(tps)
	if err := c.updateCurrentReassignments(ctx, tps, want); err != nil {
		return err
	}
	var started, done []TP
	for _, tp := range tps {
		if c.reassignmentComplete(tp) {
			done = append(done, tp)
		} else {
			started = append(started, tp)
		}
	}
	if err := c.startReassignments(ctx, started); err != nil {
		return err
	}
	return c.completeReassignments(ctx, done)
}

// updateCurrentReassignments is step U for the partitions whose full
// assignment changes.
func (c *Controller) updateCurrentReassignments(ctx context.Context, tps []TP, want map[TP]metadata.PartitionAssignment) error {
	byTopic := map[string][]TP{}
	var topics []string
	for _, tp := range tps {
		if c.ctx.fullAssignment(tp).Equal(want[tp]) {
			continue
		}
		if byTopic[tp.Topic] == nil {
			topics = append(topics, tp.Topic)
		}
		byTopic[tp.Topic] = append(byTopic[tp.Topic], tp)
	}
	b := newBatch()
	var unneeded []replicaKey
	for _, topic := range topics {
		changed := byTopic[topic]
		if err := c.writeAssignments(ctx, topic, changed, want); err != nil {
			return err
		}
		for _, tp := range changed {
			old, pa := c.ctx.fullAssignment(tp), want[tp]
			c.ctx.setFullAssignment(tp, pa)
			c.stateChange("partition reassignment updated", "partition", tp, "replicas", pa.Replicas,
				"adding", pa.Adding, "removing", pa.Removing, "old_replicas", old.Replicas)
			for _, r := range old.Replicas {
				if !slices.Contains(pa.Replicas, r) {
					unneeded = append(unneeded, replicaKey{tp, r})
				}
			}
		}
	}
	if err := c.stopRemovedReplicas(ctx, b, unneeded); err != nil {
		return err
	}
	c.send(b)
	return nil
}

// writeAssignments writes the full assignments of some of topic's
// partitions to the store.
func (c *Controller) writeAssignments(ctx context.Context, topic string, tps []TP, want map[TP]metadata.PartitionAssignment) error {
	ver, err := c.md.UpdateAssignment(ctx, c.ctx.fence, topic, func(a *metadata.Assignment) {
		for _, tp := range tps {
			a.SetPartition(tp.Partition, want[tp])
		}
	})
	if err != nil {
		return err
	}
	if t := c.ctx.topics[topic]; t != nil {
		t.version = ver
	}
	return nil
}

// startReassignments is step A.
func (c *Controller) startReassignments(ctx context.Context, tps []TP) error {
	if len(tps) == 0 {
		return nil
	}
	b := newBatch()
	bumped, err := c.bumpLeaderEpochs(ctx, tps)
	if err != nil {
		return err
	}
	for _, tp := range bumped {
		pa := c.ctx.fullAssignment(tp)
		b.addLeaderAndIsr(c.ctx, pa.Origin(), tp, false)
		b.addLeaderAndIsr(c.ctx, pa.Adding, tp, true)
	}
	var fresh []replicaKey
	for _, tp := range tps {
		for _, r := range c.ctx.fullAssignment(tp).Adding {
			if k := (replicaKey{tp, r}); c.ctx.replicaSt.at(k) == NonExistentReplica {
				fresh = append(fresh, k)
			}
		}
	}
	if err := c.changeReplicas(ctx, b, fresh, NewReplica); err != nil {
		return err
	}
	c.send(b)
	return nil
}

// completeReassignments is step B.
func (c *Controller) completeReassignments(ctx context.Context, tps []TP) error {
	if len(tps) == 0 {
		return nil
	}
	b := newBatch()
	old := make(map[TP]metadata.PartitionAssignment, len(tps))
	var adding, removing []replicaKey
	for _, tp := range tps {
		pa := c.ctx.fullAssignment(tp)
		old[tp] = pa
		for _, r := range pa.Adding {
			adding = append(adding, replicaKey{tp, r})
		}
		for _, r := range pa.Removing {
			removing = append(removing, replicaKey{tp, r})
		}
	}
	if err := c.changeReplicas(ctx, b, adding, OnlineReplica); err != nil {
		return err
	}
	var elect, bump []TP
	for _, tp := range tps {
		target := old[tp].Target()
		c.ctx.setFullAssignment(tp, metadata.PartitionAssignment{Replicas: target})
		st, ok := c.ctx.states.get(tp)
		switch {
		case !ok: // never had a leader: nothing to move
		case !slices.Contains(target, st.Leader) || !c.ctx.isLive(st.Leader):
			elect = append(elect, tp)
		default:
			bump = append(bump, tp)
		}
	}
	if err := c.changePartitions(ctx, b, elect, OnlinePartition, ReassignElection); err != nil {
		return err
	}
	bumped, err := c.bumpLeaderEpochs(ctx, bump)
	if err != nil {
		return err
	}
	for _, tp := range bumped {
		b.addLeaderAndIsr(c.ctx, c.ctx.replicas(tp), tp, false)
	}
	if err := c.stopRemovedReplicas(ctx, b, removing); err != nil {
		return err
	}
	want := make(map[TP]metadata.PartitionAssignment, len(tps))
	byTopic := map[string][]TP{}
	var topics []string
	for _, tp := range tps {
		want[tp] = metadata.PartitionAssignment{Replicas: old[tp].Target()}
		if byTopic[tp.Topic] == nil {
			topics = append(topics, tp.Topic)
		}
		byTopic[tp.Topic] = append(byTopic[tp.Topic], tp)
	}
	for _, topic := range topics {
		if err := c.writeAssignments(ctx, topic, byTopic[topic], want); err != nil {
			return err
		}
	}
	for _, tp := range tps {
		c.stateChange("partition reassignment completed", "partition", tp, "replicas", want[tp].Replicas)
	}
	b.addUpdateMetadata(c.ctx.liveBrokerIDs(), tps)
	c.send(b)
	return c.resumeDeletions(ctx)
}

// stopRemovedReplicas takes replicas out of their partitions: Offline (out
// of the ISR), then deleted (Kafka's stopRemovedReplicasOfReassignedPartition,
// which does not wait for the StopReplica answers). Partitions left
// leaderless are elected again.
func (c *Controller) stopRemovedReplicas(ctx context.Context, b *requestBatch, keys []replicaKey) error {
	if len(keys) == 0 {
		return nil
	}
	for _, target := range []ReplicaState{OfflineReplica, ReplicaDeletionStarted, ReplicaDeletionSuccessful, NonExistentReplica} {
		if err := c.changeReplicas(ctx, b, keys, target); err != nil {
			return err
		}
	}
	var leaderless []TP
	for _, k := range keys {
		if st, ok := c.ctx.states.get(k.tp); ok && st.Leader < 0 && !slices.Contains(leaderless, k.tp) {
			leaderless = append(leaderless, k.tp)
		}
	}
	return c.changePartitions(ctx, b, leaderless, OnlinePartition, OfflineElection)
}

// bumpLeaderEpochs increments the leader epoch of partitions (leader and
// ISR unchanged), so that their replicas accept a LeaderAndIsr with a new
// replica set (Kafka's updateLeaderEpoch). Conflicts are re-read and
// retried; partitions without a state, or whose state a newer controller
// wrote, are left out of the result.
func (c *Controller) bumpLeaderEpochs(ctx context.Context, tps []TP) ([]TP, error) {
	var done []TP
	err := c.settleStates(ctx, slices.Clone(tps), func(tp TP) (metadata.LeaderAndIsr, bool) {
		cur, ok := c.ctx.states.get(tp)
		if !ok {
			c.stateChange("no partition state; leader epoch not updated for reassignment", "partition", tp)
			return cur, false
		}
		if cur.ControllerEpoch > c.ctx.epoch {
			c.stateChange(errAborted.Error(), "partition", tp)
			return cur, false
		}
		cur.LeaderEpoch, cur.PartitionEpoch, cur.ControllerEpoch = cur.LeaderEpoch+1, cur.PartitionEpoch+1, c.ctx.epoch
		return cur, true
	}, func(u stateUpdate) {
		c.stateChange("leader epoch bumped for reassignment", "partition", u.TP, "leader", u.State.Leader,
			"leader_epoch", u.State.LeaderEpoch, "isr", u.State.ISR)
		done = append(done, u.TP)
	})
	return done, err
}

// maybeCompleteReassignments runs step B for the partitions of tps being
// reassigned whose target replicas are all in the ISR now.
func (c *Controller) maybeCompleteReassignments(ctx context.Context, tps []TP) error {
	var done []TP
	for _, tp := range tps {
		if c.ctx.fullAssignment(tp).Reassigning() && c.reassignmentComplete(tp) {
			done = append(done, tp)
		}
	}
	if len(done) > 0 {
		c.cfg.Logger.Info("reassigned partitions caught up", "partitions", len(done))
	}
	return c.completeReassignments(ctx, done)
}

// resumeReassignments runs every reassignment in progress for which
// resume says so again from its stored assignment (Kafka's
// maybeResumeReassignments).
func (c *Controller) resumeReassignments(ctx context.Context, resume func(metadata.PartitionAssignment) bool) error {
	want := map[TP]metadata.PartitionAssignment{}
	for _, tp := range c.ctx.reassigningPartitions() {
		if pa := c.ctx.fullAssignment(tp); resume(pa) {
			want[tp] = pa
		}
	}
	if len(want) == 0 {
		return nil
	}
	return c.onPartitionReassignment(ctx, want)
}

// initializeReassignments: a new controller resumes every reassignment it
// finds in the store (Kafka's initializePartitionReassignments).
func (c *Controller) initializeReassignments(ctx context.Context) error {
	return c.resumeReassignments(ctx, func(metadata.PartitionAssignment) bool { return true })
}

// resumeReassignmentsTo: brokers started; reassignments with a target
// replica on one of them start again (Kafka's onBrokerStartup).
func (c *Controller) resumeReassignmentsTo(ctx context.Context, ids []int32) error {
	return c.resumeReassignments(ctx, func(pa metadata.PartitionAssignment) bool {
		return slices.ContainsFunc(pa.Target(), func(r int32) bool { return slices.Contains(ids, r) })
	})
}
