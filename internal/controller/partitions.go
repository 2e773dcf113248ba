package controller

// Partition state machine (Kafka's ZkPartitionStateMachine).
//
//	NewPartition         ← NonExistentPartition
//	OnlinePartition      ← NewPartition, OnlinePartition, OfflinePartition
//	OfflinePartition     ← NewPartition, OnlinePartition, OfflinePartition
//	NonExistentPartition ← OfflinePartition
//
// New → Online writes the first leader and ISR (first live replica; all
// live replicas) with create-if-absent; Online/Offline → Online elects with
// one of the four strategies, written conditionally on the state's version,
// re-read and retried on conflict, abandoned when a newer controller epoch
// wrote the state.

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/samsa-kafka/samsa/internal/metadata"
)

// PartitionState is a partition's controller-side state.
type PartitionState int8

const (
	NonExistentPartition PartitionState = iota
	NewPartition
	OnlinePartition
	OfflinePartition
)

func (s PartitionState) String() string {
	return [...]string{"NonExistentPartition", "NewPartition", "OnlinePartition", "OfflinePartition"}[s]
}

var validPartitionPrev = map[PartitionState][]PartitionState{
	NewPartition:         {NonExistentPartition},
	OnlinePartition:      {NewPartition, OnlinePartition, OfflinePartition},
	OfflinePartition:     {NewPartition, OnlinePartition, OfflinePartition},
	NonExistentPartition: {OfflinePartition},
}

// Strategy is a leader-election strategy.
type Strategy int8

const (
	OfflineElection Strategy = iota
	ReassignElection
	PreferredElection
	ControlledShutdownElection
	// UncleanElection is the offline strategy with unclean election
	// allowed whatever the topic says (an admin's ElectLeaders UNCLEAN).
	UncleanElection
)

// errAborted: a newer controller wrote the state; the election is dropped.
var errAborted = errors.New("controller: election aborted: state written by a newer controller epoch")

// changePartitions moves partitions to target, collecting requests in b.
func (c *Controller) changePartitions(ctx context.Context, b *requestBatch, tps []TP, target PartitionState, strategy Strategy) error {
	valid := make([]TP, 0, len(tps))
	prev := validPartitionPrev[target]
	for _, tp := range tps {
		cur := c.ctx.partState[tp]
		if !slices.Contains(prev, cur) {
			c.stateChange("invalid partition state transition", "partition", tp, "from", cur, "to", target)
			continue
		}
		valid = append(valid, tp)
	}
	switch target {
	case NewPartition, OfflinePartition:
		for _, tp := range valid {
			c.setPartitionState(tp, target)
		}
	case NonExistentPartition:
		for _, tp := range valid {
			c.setPartitionState(tp, target)
			delete(c.ctx.partState, tp)
			c.ctx.delState(tp)
		}
	case OnlinePartition:
		var fresh, elect []TP
		for _, tp := range valid {
			if c.ctx.partState[tp] == NewPartition {
				fresh = append(fresh, tp)
			} else {
				elect = append(elect, tp)
			}
		}
		if err := c.initializeLeaders(ctx, b, fresh); err != nil {
			return err
		}
		return c.electLeaders(ctx, b, elect, strategy)
	}
	return nil
}

func (c *Controller) setPartitionState(tp TP, s PartitionState) {
	if prev := c.ctx.partState[tp]; prev != s {
		c.stateChange("partition state changed", "partition", tp, "from", prev, "to", s)
	}
	c.ctx.partState[tp] = s
}

// initializeLeaders writes the first leader and ISR of new partitions.
func (c *Controller) initializeLeaders(ctx context.Context, b *requestBatch, tps []TP) error {
	var updates []metadata.StateUpdate
	for _, tp := range tps {
		var live []int32
		for _, r := range c.ctx.replicas(tp) {
			if c.electable(r) {
				live = append(live, r)
			}
		}
		if len(live) == 0 {
			c.stateChange("no live replica to initialize partition; it stays NewPartition", "partition", tp)
			continue
		}
		updates = append(updates, metadata.StateUpdate{TP: tp, State: metadata.LeaderAndIsr{
			Leader: live[0], LeaderEpoch: 0, ISR: live, ControllerEpoch: c.ctx.epoch}})
	}
	results, err := c.md.WriteStates(ctx, c.ctx.fence, updates)
	if err != nil {
		return err
	}
	for i, u := range updates {
		if !results[i].Written {
			c.stateChange("partition state already exists; not initialized", "partition", u.TP)
			continue
		}
		c.ctx.setState(u.TP, metadata.VersionedState{State: u.State, Version: results[i].Version})
		c.setPartitionState(u.TP, OnlinePartition)
		b.addLeaderAndIsr(c.ctx, u.State.ISR, u.TP, true)
	}
	return nil
}

// electLeaders elects with strategy, retrying version conflicts with fresh
// reads until every partition is decided.
func (c *Controller) electLeaders(ctx context.Context, b *requestBatch, tps []TP, strategy Strategy) error {
	for len(tps) > 0 {
		var updates []metadata.StateUpdate
		for _, tp := range tps {
			u, ok, err := c.nextLeader(tp, strategy)
			if errors.Is(err, errAborted) {
				c.stateChange(err.Error(), "partition", tp)
				continue
			}
			if !ok && strategy != OfflineElection {
				// Kafka: a failed controlled-shutdown, preferred or
				// reassignment election leaves the partition as it was.
				c.stateChange("no eligible leader; leadership unchanged", "partition", tp, "strategy", strategy)
				continue
			}
			if !ok {
				c.stateChange("no eligible leader; partition stays offline", "partition", tp, "strategy", strategy)
				c.setPartitionState(tp, OfflinePartition)
				continue
			}
			updates = append(updates, u)
		}
		results, err := c.md.WriteStates(ctx, c.ctx.fence, updates)
		if err != nil {
			return err
		}
		tps = tps[:0]
		for i, u := range updates {
			if results[i].Conflict {
				c.stateChange("partition state version conflict; re-reading", "partition", u.TP, "version", u.Version)
				if err := c.rereadState(ctx, u.TP); err != nil {
					return err
				}
				tps = append(tps, u.TP)
				continue
			}
			c.ctx.setState(u.TP, metadata.VersionedState{State: u.State, Version: results[i].Version})
			c.setPartitionState(u.TP, OnlinePartition)
			c.stateChange("elected leader", "partition", u.TP, "leader", u.State.Leader,
				"leader_epoch", u.State.LeaderEpoch, "isr", u.State.ISR, "strategy", strategy)
			b.addLeaderAndIsr(c.ctx, c.ctx.replicas(u.TP), u.TP, false)
		}
	}
	return nil
}

// nextLeader computes the state after an election, from the cached state.
func (c *Controller) nextLeader(tp TP, strategy Strategy) (metadata.StateUpdate, bool, error) {
	cur, ok := c.ctx.states[tp]
	if !ok {
		return metadata.StateUpdate{}, false, nil
	}
	if cur.State.ControllerEpoch > c.ctx.epoch {
		return metadata.StateUpdate{}, false, errAborted
	}
	assignment := c.ctx.replicas(tp)
	isr := cur.State.ISR
	leader := int32(-1)
	switch strategy {
	case OfflineElection, UncleanElection:
		var unclean bool
		leader, unclean = offlineLeader(assignment, isr, c.electable, strategy == UncleanElection || c.uncleanAllowed(tp.Topic))
		if unclean {
			isr = []int32{leader}
		} else {
			isr = slices.DeleteFunc(slices.Clone(isr), func(r int32) bool { return !c.electable(r) })
		}
	case ReassignElection:
		leader = reassignLeader(assignment, isr, c.electable)
	case PreferredElection:
		leader = preferredLeader(assignment, isr, c.electable)
	case ControlledShutdownElection:
		leader = controlledShutdownLeader(assignment, isr, c.ctx.isLive, c.shuttingDown)
		isr = slices.DeleteFunc(slices.Clone(isr), c.shuttingDown)
	}
	if leader < 0 {
		return metadata.StateUpdate{}, false, nil
	}
	next := cur.State
	next.Leader, next.LeaderEpoch, next.ISR = leader, cur.State.LeaderEpoch+1, isr
	next.ControllerEpoch, next.PartitionEpoch = c.ctx.epoch, cur.State.PartitionEpoch+1
	return metadata.StateUpdate{TP: tp, State: next, Version: cur.Version}, true, nil
}

// rereadState refreshes one partition's state from the store after a
// version conflict.
func (c *Controller) rereadState(ctx context.Context, tp TP) error {
	kv, found, err := c.md.Store().Get(ctx, metadata.PartitionStateKey(tp.Topic, tp.Partition))
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("controller: state of %v vanished", tp)
	}
	s, err := metadata.DecodeState(kv.Value)
	if err != nil {
		return err
	}
	c.ctx.setState(tp, metadata.VersionedState{State: s, Version: kv.Version})
	return nil
}
