package controller

// Replica state machine (Kafka's ZkReplicaStateMachine).
//
//	NewReplica                 ← NonExistentReplica
//	OnlineReplica              ← New, Online, Offline, DeletionIneligible
//	OfflineReplica             ← New, Online, Offline, DeletionIneligible
//	ReplicaDeletionStarted     ← Offline
//	ReplicaDeletionSuccessful  ← DeletionStarted
//	ReplicaDeletionIneligible  ← Offline, DeletionStarted
//	NonExistentReplica         ← DeletionSuccessful

import (
	"context"
	"log/slog"
	"slices"

	"github.com/samsa-kafka/samsa/internal/metadata"
)

// ReplicaState is a replica's controller-side state.
type ReplicaState int8

const (
	NonExistentReplica ReplicaState = iota
	NewReplica
	OnlineReplica
	OfflineReplica
	ReplicaDeletionStarted
	ReplicaDeletionSuccessful
	ReplicaDeletionIneligible
)

func (s ReplicaState) String() string {
	return [...]string{"NonExistentReplica", "NewReplica", "OnlineReplica", "OfflineReplica",
		"ReplicaDeletionStarted", "ReplicaDeletionSuccessful", "ReplicaDeletionIneligible"}[s]
}

var validReplicaPrev = map[ReplicaState][]ReplicaState{
	NewReplica:                {NonExistentReplica},
	OnlineReplica:             {NewReplica, OnlineReplica, OfflineReplica, ReplicaDeletionIneligible},
	OfflineReplica:            {NewReplica, OnlineReplica, OfflineReplica, ReplicaDeletionIneligible},
	ReplicaDeletionStarted:    {OfflineReplica},
	ReplicaDeletionSuccessful: {ReplicaDeletionStarted},
	ReplicaDeletionIneligible: {OfflineReplica, ReplicaDeletionStarted},
	NonExistentReplica:        {ReplicaDeletionSuccessful},
}

// changeReplicas moves the replicas of broker `broker`... of the given
// partitions on the given brokers to target.
func (c *Controller) changeReplicas(ctx context.Context, b *requestBatch, keys []replicaKey, target ReplicaState) error {
	valid := make([]replicaKey, 0, len(keys))
	for _, k := range keys {
		cur := c.ctx.replicaSt.at(k)
		if !slices.Contains(validReplicaPrev[target], cur) {
			c.stateChange("invalid replica state transition", "partition", k.tp, "replica", k.broker, "from", cur, "to", target)
			continue
		}
		valid = append(valid, k)
	}
	switch target {
	case OnlineReplica:
		for _, k := range valid {
			if c.ctx.replicaSt.at(k) != NewReplica {
				if _, ok := c.ctx.states.get(k.tp); ok {
					b.addLeaderAndIsr(c.ctx, []int32{k.broker}, k.tp, false)
				}
			}
			c.setReplicaState(k, target)
		}
	case OfflineReplica:
		for _, k := range valid {
			b.addStopReplica([]int32{k.broker}, k.tp, false)
		}
		if err := c.removeFromISR(ctx, b, valid); err != nil {
			return err
		}
		for _, k := range valid {
			c.setReplicaState(k, target)
		}
	case ReplicaDeletionStarted:
		for _, k := range valid {
			b.addStopReplica([]int32{k.broker}, k.tp, true)
			c.setReplicaState(k, target)
		}
	case NonExistentReplica:
		for _, k := range valid {
			c.setReplicaState(k, target)
			c.ctx.replicaSt.del(k)
		}
	default:
		for _, k := range valid {
			c.setReplicaState(k, target)
		}
	}
	return nil
}

func (c *Controller) setReplicaState(k replicaKey, s ReplicaState) {
	if prev := c.ctx.replicaSt.at(k); prev != s && c.logsStateChanges(slog.LevelDebug) {
		c.stateTrace("replica state changed", "partition", k.tp, "replica", k.broker, "from", prev, "to", s)
	}
	c.ctx.replicaSt.set(k, s)
}

// removeFromISR drops each replica from its partition's ISR (the leader
// becomes -1 when it was the leader; an ISR of just that replica stays as
// it is), with conditional writes retried on conflict, then tells the
// remaining replicas unless the topic is being deleted.
func (c *Controller) removeFromISR(ctx context.Context, b *requestBatch, keys []replicaKey) error {
	pending := slices.Clone(keys)
	for len(pending) > 0 {
		// One update per partition, removing all of its replicas at once
		// when its keys are adjacent (as the callers list them; a repeat
		// elsewhere is a conflict for writeStates, retried after it).
		updates := make([]stateUpdate, 0, len(pending))
		// The brokers removed by update i: removed[from[i]:from[i+1]].
		removed := make([]int32, 0, len(pending))
		from := make([]int, 0, len(pending)+1)
		for _, k := range pending {
			i := len(updates) - 1
			again := i >= 0 && updates[i].TP == k.tp
			var cur metadata.LeaderAndIsr
			if again {
				cur = updates[i].State
			} else {
				var ok bool
				if cur, ok = c.ctx.states.get(k.tp); !ok {
					continue
				}
			}
			if cur.Leader != k.broker && !slices.Contains(cur.ISR, k.broker) {
				continue
			}
			if cur.ControllerEpoch > c.ctx.epoch {
				c.stateChange(errAborted.Error(), "partition", k.tp)
				continue
			}
			next := cur
			if next.Leader == k.broker {
				next.Leader = -1
			}
			if !(len(next.ISR) == 1 && next.ISR[0] == k.broker) {
				next.ISR = slices.DeleteFunc(slices.Clone(next.ISR), func(r int32) bool { return r == k.broker })
			}
			removed = append(removed, k.broker)
			if again {
				updates[i].State = next
				continue
			}
			next.LeaderEpoch, next.PartitionEpoch, next.ControllerEpoch = next.LeaderEpoch+1, next.PartitionEpoch+1, c.ctx.epoch
			updates = append(updates, stateUpdate{TP: k.tp, State: next})
			from = append(from, len(removed)-1)
		}
		from = append(from, len(removed))
		conflict, _, err := c.writeStatesOrReread(ctx, updates)
		if err != nil {
			return err
		}
		pending = pending[:0]
		for i, u := range updates {
			gone := removed[from[i]:from[i+1]]
			if conflict[i] {
				for _, r := range gone {
					pending = append(pending, replicaKey{u.TP, r})
				}
				continue
			}
			if u.State.Leader < 0 {
				c.setPartitionState(u.TP, OfflinePartition)
			}
			if !c.deleting[u.TP.Topic] {
				others := slices.DeleteFunc(slices.Clone(c.ctx.replicas(u.TP)), func(r int32) bool { return slices.Contains(gone, r) })
				b.addLeaderAndIsr(c.ctx, others, u.TP, false)
			}
		}
	}
	return nil
}
