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

// changeReplicas moves the given replicas to target, collecting requests
// in b.
func (c *Controller) changeReplicas(ctx context.Context, b *requestBatch, keys []replicaKey, target ReplicaState) error {
	valid := c.validReplicas(keys, target)
	switch target {
	case OnlineReplica:
		for _, k := range valid {
			if c.setReplicaState(k, target) != NewReplica {
				if _, ok := c.ctx.states.get(k.tp); ok {
					b.addLeaderAndIsr(c.ctx, []int32{k.broker}, k.tp, false)
				}
			}
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

// validReplicas is keys without the replicas that cannot move to target
// (logged); keys itself when all can.
func (c *Controller) validReplicas(keys []replicaKey, target ReplicaState) []replicaKey {
	prev := validReplicaPrev[target]
	return keepIf(keys, func(k replicaKey) bool {
		cur := c.ctx.replicaSt.at(k)
		if !slices.Contains(prev, cur) {
			c.stateChange("invalid replica state transition", "partition", k.tp, "replica", k.broker, "from", cur, "to", target)
			return false
		}
		return true
	})
}

// setReplicaState sets k's state and returns the one it had.
func (c *Controller) setReplicaState(k replicaKey, s ReplicaState) ReplicaState {
	prev := c.ctx.replicaSt.swap(k, s)
	if prev != s && c.logsStateChanges(slog.LevelDebug) {
		c.stateTrace("replica state changed", "partition", k.tp, "replica", k.broker, "from", prev, "to", s)
	}
	return prev
}

// removeFromISR drops each replica from its partition's ISR (the leader
// becomes -1 when it was the leader; an ISR of just that replica stays as
// it is), with conditional writes retried on conflict, then tells the
// remaining replicas unless the topic is being deleted.
func (c *Controller) removeFromISR(ctx context.Context, b *requestBatch, keys []replicaKey) error {
	for pending := keys; len(pending) > 0; {
		r := c.isrRemovals(pending)
		conflict, _, err := c.writeStatesOrReread(ctx, r.updates)
		if err != nil {
			return err
		}
		pending = nil
		var topic string
		var deleting bool
		for i, u := range r.updates {
			gone := r.removed[r.from[i]:r.from[i+1]]
			if conflict[i] {
				for _, id := range gone {
					pending = append(pending, replicaKey{u.TP, id})
				}
				continue
			}
			if u.State.Leader < 0 {
				c.setPartitionState(u.TP, OfflinePartition)
			}
			if i == 0 || u.TP.Topic != topic {
				topic, deleting = u.TP.Topic, c.deleting[u.TP.Topic]
			}
			if !deleting {
				b.addLeaderAndIsrExcept(c.ctx, c.ctx.replicas(u.TP), gone, u.TP, false)
			}
		}
	}
	return nil
}

// isrRemoval is the states removing replicas from ISRs: the brokers
// update i removes are removed[from[i]:from[i+1]].
type isrRemoval struct {
	updates []stateUpdate
	removed []int32
	from    []int
}

// isrRemovals computes one update per partition, removing all of its
// replicas at once when its keys are adjacent (as the callers list them;
// a repeat elsewhere is a conflict for writeStates, retried after it).
func (c *Controller) isrRemovals(keys []replicaKey) isrRemoval {
	r := isrRemoval{updates: make([]stateUpdate, 0, len(keys)), removed: make([]int32, 0, len(keys)), from: make([]int, 0, len(keys)+1)}
	for _, k := range keys {
		i := len(r.updates) - 1
		again := i >= 0 && r.updates[i].TP == k.tp
		var cur *metadata.LeaderAndIsr
		if again {
			cur = &r.updates[i].State
		} else if cur = c.ctx.states.ref(k.tp); cur == nil {
			continue
		}
		if cur.Leader != k.broker && !slices.Contains(cur.ISR, k.broker) {
			continue
		}
		if cur.ControllerEpoch > c.ctx.epoch {
			c.stateChange(errAborted.Error(), "partition", k.tp)
			continue
		}
		next := *cur
		if next.Leader == k.broker {
			next.Leader = -1
		}
		if !(len(next.ISR) == 1 && next.ISR[0] == k.broker) {
			next.ISR = c.lists.without(next.ISR, k.broker)
		}
		r.removed = append(r.removed, k.broker)
		if again {
			r.updates[i].State = next
			continue
		}
		next.LeaderEpoch, next.PartitionEpoch, next.ControllerEpoch = next.LeaderEpoch+1, next.PartitionEpoch+1, c.ctx.epoch
		r.updates = append(r.updates, stateUpdate{TP: k.tp, State: next})
		r.from = append(r.from, len(r.removed)-1)
	}
	r.from = append(r.from, len(r.removed))
	return r
}
