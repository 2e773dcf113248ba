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
	"log/slog"
	"slices"
	"strconv"

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

// String names the strategy as Kafka's PartitionLeaderElectionStrategy.
func (s Strategy) String() string {
	switch s {
	case OfflineElection:
		return "OfflinePartitionLeaderElectionStrategy"
	case ReassignElection:
		return "ReassignPartitionLeaderElectionStrategy"
	case PreferredElection:
		return "PreferredReplicaPartitionLeaderElectionStrategy"
	case ControlledShutdownElection:
		return "ControlledShutdownPartitionLeaderElectionStrategy"
	case UncleanElection:
		return "OfflinePartitionLeaderElectionStrategy(unclean)"
	}
	return "Strategy(" + strconv.Itoa(int(s)) + ")"
}

// errAborted: a newer controller wrote the state; the election is dropped.
var errAborted = errors.New("controller: election aborted: state written by a newer controller epoch")

// changePartitions moves partitions to target, collecting requests in b.
func (c *Controller) changePartitions(ctx context.Context, b *requestBatch, tps []TP, target PartitionState, strategy Strategy) error {
	prev := validPartitionPrev[target]
	valid := keepIf(tps, func(tp TP) bool {
		cur := c.ctx.partState.at(tp)
		if !slices.Contains(prev, cur) {
			c.stateChange("invalid partition state transition", "partition", tp, "from", cur, "to", target)
			return false
		}
		return true
	})
	switch target {
	case NewPartition, OfflinePartition:
		for _, tp := range valid {
			c.setPartitionState(tp, target)
		}
	case NonExistentPartition:
		for _, tp := range valid {
			c.setPartitionState(tp, target)
			c.ctx.partState.del(tp)
			c.ctx.delState(tp)
		}
	case OnlinePartition:
		isNew := func(tp TP) bool { return c.ctx.partState.at(tp) == NewPartition }
		fresh := keepIf(valid, isNew)
		elect := valid
		if len(fresh) > 0 {
			elect = keepIf(valid, func(tp TP) bool { return !isNew(tp) })
		}
		if err := c.initializeLeaders(ctx, b, fresh); err != nil {
			return err
		}
		return c.electLeaders(ctx, b, elect, strategy)
	}
	return nil
}

func (c *Controller) setPartitionState(tp TP, s PartitionState) {
	if prev := c.ctx.partState.at(tp); prev != s && c.logsStateChanges(slog.LevelDebug) {
		c.stateTrace("partition state changed", "partition", tp, "from", prev, "to", s)
	}
	c.ctx.partState.set(tp, s)
}

// initializeLeaders writes the first leader and ISR of new partitions.
func (c *Controller) initializeLeaders(ctx context.Context, b *requestBatch, tps []TP) error {
	out := outcomes{skipLevel: slog.LevelWarn}
	err := c.settleStates(ctx, tps, func(tp TP) (metadata.LeaderAndIsr, bool) {
		if _, exists := c.ctx.states.get(tp); exists { // found by a re-read after a conflict
			c.skipped(&out, "partition state already exists; not initialized", tp)
			return metadata.LeaderAndIsr{}, false
		}
		live := c.lists.filter(c.ctx.replicas(tp), func(r int32) bool { return !c.electable(r) })
		if len(live) == 0 {
			c.skipped(&out, "no live replica to initialize partition; it stays NewPartition", tp)
			return metadata.LeaderAndIsr{}, false
		}
		return metadata.LeaderAndIsr{Leader: live[0], LeaderEpoch: 0, ISR: live, ControllerEpoch: c.ctx.epoch}, true
	}, func(u stateUpdate) {
		out.done++
		c.setPartitionState(u.TP, OnlinePartition)
		b.addLeaderAndIsr(c.ctx, u.State.ISR, u.TP, true)
	})
	c.logOutcomes("initialized leaders of new partitions", &out)
	return err
}

// rereadConflicts logs the updates that met a version conflict, re-reads
// each of their chunks once, and returns them.
func (c *Controller) rereadConflicts(ctx context.Context, updates []stateUpdate, conflict []bool, msg string) ([]stateUpdate, error) {
	var out []stateUpdate
	reread := map[chunkID]bool{}
	for i, u := range updates {
		if !conflict[i] {
			continue
		}
		id := chunkOf(u.TP)
		c.stateChange(msg, "partition", u.TP, "chunk_version", c.ctx.chunkVer[id])
		out = append(out, u)
		if !reread[id] {
			reread[id] = true
			if err := c.rereadChunk(ctx, u.TP); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// electLeaders elects with strategy, retrying version conflicts with fresh
// reads until every partition is decided.
func (c *Controller) electLeaders(ctx context.Context, b *requestBatch, tps []TP, strategy Strategy) error {
	out := outcomes{skipLevel: slog.LevelWarn}
	err := c.settleStates(ctx, tps, func(tp TP) (metadata.LeaderAndIsr, bool) {
		st, ok, err := c.nextLeader(tp, strategy)
		switch {
		case errors.Is(err, errAborted):
			c.skipped(&out, err.Error(), tp)
		case !ok && strategy != OfflineElection:
			// Kafka: a failed controlled-shutdown, preferred or
			// reassignment election leaves the partition as it was.
			c.skipped(&out, "no eligible leader; leadership unchanged", tp)
		case !ok:
			c.skipped(&out, "no eligible leader; partition stays offline", tp)
			c.setPartitionState(tp, OfflinePartition)
		}
		return st, ok && err == nil
	}, func(u stateUpdate) {
		out.done++
		c.setPartitionState(u.TP, OnlinePartition)
		if c.logsStateChanges(slog.LevelDebug) {
			c.stateTrace("elected leader", "partition", u.TP, "leader", u.State.Leader,
				"leader_epoch", u.State.LeaderEpoch, "isr", u.State.ISR, "strategy", strategy)
		}
		b.addLeaderAndIsr(c.ctx, c.ctx.replicas(u.TP), u.TP, false)
	})
	c.logOutcomes("elected leaders", &out, "strategy", strategy)
	return err
}

// nextLeader computes the state after an election, from the cached state.
func (c *Controller) nextLeader(tp TP, strategy Strategy) (metadata.LeaderAndIsr, bool, error) {
	cur := c.ctx.states.ref(tp)
	if cur == nil {
		return metadata.LeaderAndIsr{}, false, nil
	}
	if cur.ControllerEpoch > c.ctx.epoch {
		return metadata.LeaderAndIsr{}, false, errAborted
	}
	assignment := c.ctx.replicas(tp)
	isr := cur.ISR
	leader := int32(-1)
	switch strategy {
	case OfflineElection, UncleanElection:
		// The topic's unclean setting is looked up only when no clean
		// leader is left.
		var unclean bool
		if leader, _ = offlineLeader(assignment, isr, c.electable, false); leader < 0 {
			leader, unclean = offlineLeader(assignment, isr, c.electable, strategy == UncleanElection || c.uncleanAllowed(tp.Topic))
		}
		if unclean {
			c.uncleanElections.Add(1)
			isr = []int32{leader}
		} else {
			isr = c.lists.filter(isr, func(r int32) bool { return !c.electable(r) })
		}
	case ReassignElection:
		leader = reassignLeader(assignment, isr, c.electable)
	case PreferredElection:
		leader = preferredLeader(assignment, isr, c.electable)
	case ControlledShutdownElection:
		leader = controlledShutdownLeader(assignment, isr, c.ctx.isLive, c.shuttingDown)
		isr = c.lists.filter(isr, c.shuttingDown)
	}
	if leader < 0 {
		return metadata.LeaderAndIsr{}, false, nil
	}
	next := *cur
	next.Leader, next.LeaderEpoch, next.ISR = leader, cur.LeaderEpoch+1, isr
	next.ControllerEpoch, next.PartitionEpoch = c.ctx.epoch, cur.PartitionEpoch+1
	return next, true, nil
}
