package controller

// AlterPartition (KIP-497), as the ZooKeeper-era KafkaController's
// processAlterPartition: a partition leader asks the controller to change
// its ISR (shrink a lagging follower out, take a caught-up one back in).
//
// The whole request is refused with NOT_CONTROLLER when this broker is not
// the active controller, and with STALE_BROKER_EPOCH when BrokerID is not a
// live broker registered with BrokerEpoch. Then, per partition, in order:
//
//	unknown topic or partition, no state yet, or topic being deleted
//	                                      UNKNOWN_TOPIC_OR_PARTITION
//	                                      (v2+ unknown topic id: UNKNOWN_TOPIC_ID)
//	leader or partition epoch newer than the controller's
//	                                      NOT_CONTROLLER (this controller is stale)
//	leader epoch older                    FENCED_LEADER_EPOCH
//	requester is not the leader           NOT_LEADER_OR_FOLLOWER
//	LeaderRecoveryState RECOVERING        INVALID_REQUEST (not supported)
//	new ISR equal to the current one      the current state, nothing written
//	                                      (idempotent retries after a lost answer)
//	partition epoch older                 INVALID_UPDATE_VERSION
//	ISR empty, with duplicates or without the leader
//	                                      INVALID_REQUEST
//	a member not assigned, not live, shutting down, or (v3) registered with
//	another broker epoch                  INELIGIBLE_REPLICA (v0–1: OPERATION_NOT_ATTEMPTED)
//
// The partition epoch is the state's PartitionEpoch (sent to brokers as
// LeaderAndIsr's ZkVersion); every write bumps it. Accepted changes are
// written together, conditionally on the versions read and fenced by the
// controller epoch like every controller write; a version conflict re-reads
// the state and answers INVALID_UPDATE_VERSION; a lost fence answers
// NOT_CONTROLLER and the controller resigns. Written partitions answer their
// new state (leader and leader epoch unchanged, partition epoch + 1) and go
// to every live broker in one UpdateMetadata.

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/metadata"
)

// AlterPartition is an AlterPartition request for the controller's loop.
// Reply is called exactly once, from the loop.
type AlterPartition struct {
	Req   *kmsg.AlterPartitionRequest
	Reply func(*kmsg.AlterPartitionResponse)
}

func (AlterPartition) name() string { return "AlterPartition" }

// AlterPartition hands req to the controller and waits for the answer:
// NOT_CONTROLLER at once when this broker is not the active controller,
// REQUEST_TIMED_OUT when ctx ends first (the request may still be applied;
// a retry is answered idempotently). Safe from any goroutine.
func (l *Loop) AlterPartition(ctx context.Context, req *kmsg.AlterPartitionRequest) *kmsg.AlterPartitionResponse {
	return askLoop(ctx, l, func(reply func(*kmsg.AlterPartitionResponse)) Event {
		return AlterPartition{Req: req, Reply: reply}
	}, func(code int16) *kmsg.AlterPartitionResponse { return alterPartitionError(req, code) })
}

func alterPartitionError(req *kmsg.AlterPartitionRequest, code int16) *kmsg.AlterPartitionResponse {
	resp := req.ResponseKind().(*kmsg.AlterPartitionResponse)
	resp.ErrorCode = code
	return resp
}

// apAnswer is one partition of the request on its way to the response.
type apAnswer struct {
	tp  TP
	out *kmsg.AlterPartitionResponseTopicPartition
}

func (a apAnswer) set(s metadata.LeaderAndIsr) {
	a.out.ErrorCode, a.out.LeaderID, a.out.LeaderEpoch = 0, s.Leader, s.LeaderEpoch
	a.out.ISR, a.out.PartitionEpoch = slices.Clone(s.ISR), s.PartitionEpoch
}

// onAlterPartition validates, writes and answers one request: the
// requesting broker first, then each partition (planAlterPartition), then
// the accepted changes in one write (writeAlterPartition), then the answer
// and the UpdateMetadata of the changed partitions.
func (c *Controller) onAlterPartition(ctx context.Context, e AlterPartition) error {
	req := e.Req
	if c.ctx == nil {
		e.Reply(alterPartitionError(req, kerr.NotController.Code))
		return nil
	}
	if b, ok := c.ctx.liveBrokers[req.BrokerID]; !ok || b.Epoch != req.BrokerEpoch {
		c.stateChange("AlterPartition refused: unknown broker or stale broker epoch",
			"broker", req.BrokerID, "broker_epoch", req.BrokerEpoch)
		e.Reply(alterPartitionError(req, kerr.StaleBrokerEpoch.Code))
		return nil
	}
	plan := c.planAlterPartition(req)
	changed, err := c.writeAlterPartition(ctx, req, plan)
	plan.out.done = len(changed)
	c.logOutcomes("ISRs changed", &plan.out, "requested_by", req.BrokerID)
	if err != nil {
		code := kerr.UnknownServerError.Code
		if errors.Is(err, metadata.ErrControllerMoved) {
			code = kerr.NotController.Code
		}
		e.Reply(alterPartitionError(req, code))
		return err
	}
	e.Reply(plan.resp)
	if len(changed) > 0 {
		b := newBatch()
		b.addUpdateMetadata(c.ctx.liveBrokerIDs(), changed)
		c.send(b)
	}
	// An ISR that grew may complete reassignments (reassignment_exec.go).
	return c.maybeCompleteReassignments(ctx, changed)
}

// alterPlan is a request decided partition by partition: the response,
// with every refusal and every unchanged state filled in, and the updates
// to write with the answers they fill.
type alterPlan struct {
	resp    *kmsg.AlterPartitionResponse
	updates []stateUpdate
	pending []apAnswer // parallel to updates
	out     outcomes   // refusals at info: a shutting-down broker's followers are refused in bulk
}

// planAlterPartition decides every partition of req.
func (c *Controller) planAlterPartition(req *kmsg.AlterPartitionRequest) *alterPlan {
	p := &alterPlan{resp: req.ResponseKind().(*kmsg.AlterPartitionResponse)}
	seen := map[TP]bool{}
	for i := range req.Topics {
		rt := &req.Topics[i]
		ot := kmsg.NewAlterPartitionResponseTopic()
		ot.Topic, ot.TopidID = rt.Topic, rt.TopicID
		ot.Partitions = make([]kmsg.AlterPartitionResponseTopicPartition, len(rt.Partitions))
		p.resp.Topics = append(p.resp.Topics, ot) // shares ot.Partitions, filled below
		name, known := rt.Topic, true
		if req.Version >= 2 {
			name, known = c.ctx.byID[rt.TopicID]
		}
		for j := range rt.Partitions {
			rp := &rt.Partitions[j]
			ot.Partitions[j] = kmsg.NewAlterPartitionResponseTopicPartition()
			ot.Partitions[j].Partition = rp.Partition
			a := apAnswer{tp: TP{Topic: name, Partition: rp.Partition}, out: &ot.Partitions[j]}
			switch {
			case !known:
				a.out.ErrorCode = kerr.UnknownTopicID.Code
			case seen[a.tp]:
				a.out.ErrorCode = kerr.InvalidRequest.Code
			default:
				seen[a.tp] = true
				c.planPartition(p, req, rp, a)
			}
		}
	}
	return p
}

// planPartition decides one partition: refused, answered with its state
// as it is, or to be written.
func (c *Controller) planPartition(p *alterPlan, req *kmsg.AlterPartitionRequest, rp *kmsg.AlterPartitionRequestTopicPartition, a apAnswer) {
	u, code, write := c.checkAlterPartition(req, a.tp, rp)
	switch {
	case code != 0:
		a.out.ErrorCode = code
		if c.logsStateChanges(slog.LevelDebug) {
			c.stateTrace("AlterPartition refused", "partition", a.tp, "broker", req.BrokerID,
				"leader_epoch", rp.LeaderEpoch, "partition_epoch", rp.PartitionEpoch, "err", kerr.ErrorForCode(code))
		}
		p.out.skip("AlterPartition refused: "+errorName(code), a.tp)
	case !write:
		a.set(c.ctx.states.at(a.tp))
	default:
		p.updates = append(p.updates, u)
		p.pending = append(p.pending, a)
	}
}

// writeAlterPartition writes the plan's updates in one go and fills their
// answers: the new state, or INVALID_UPDATE_VERSION after a version
// conflict (the chunk is re-read). It returns the partitions changed.
func (c *Controller) writeAlterPartition(ctx context.Context, req *kmsg.AlterPartitionRequest, p *alterPlan) ([]TP, error) {
	olds := make([]metadata.LeaderAndIsr, len(p.updates))
	for i, u := range p.updates {
		olds[i] = c.ctx.states.at(u.TP)
	}
	conflict, err := c.writeStates(ctx, p.updates)
	var changed []TP
	for i := 0; err == nil && i < len(p.updates); i++ {
		u, a := p.updates[i], p.pending[i]
		if conflict[i] {
			c.stateChange("AlterPartition: partition state version conflict; re-reading", "partition", u.TP,
				"chunk_version", c.ctx.chunkVer[chunkOf(u.TP)])
			a.out.ErrorCode = kerr.InvalidUpdateVersion.Code
			err = c.rereadChunk(ctx, u.TP)
			continue
		}
		if c.logsStateChanges(slog.LevelDebug) {
			c.stateTrace("ISR changed", "partition", u.TP, "leader", u.State.Leader, "leader_epoch", u.State.LeaderEpoch,
				"isr", u.State.ISR, "old_isr", olds[i].ISR, "partition_epoch", u.State.PartitionEpoch, "requested_by", req.BrokerID)
		}
		a.set(u.State)
		changed = append(changed, u.TP)
	}
	return changed, err
}

// checkAlterPartition decides one partition: an error code, or the update
// to write (write=false: already in the requested state).
func (c *Controller) checkAlterPartition(req *kmsg.AlterPartitionRequest, tp TP, rp *kmsg.AlterPartitionRequestTopicPartition) (stateUpdate, int16, bool) {
	cur, ok := c.ctx.states.get(tp)
	// A topic queued for deletion keeps taking ISR changes while it is
	// being reassigned: its deletion waits for the reassignment to end.
	if !ok || c.ctx.topics[tp.Topic] == nil || c.ctx.replicas(tp) == nil || (c.deleting[tp.Topic] && !c.topicReassigning(tp.Topic)) {
		return stateUpdate{}, kerr.UnknownTopicOrPartition.Code, false
	}
	st := cur
	switch {
	case rp.LeaderEpoch > st.LeaderEpoch || rp.PartitionEpoch > st.PartitionEpoch:
		// The leader heard of a newer state than ours: we are likely no
		// longer the controller; it should find the current one.
		return stateUpdate{}, kerr.NotController.Code, false
	case rp.LeaderEpoch < st.LeaderEpoch:
		return stateUpdate{}, kerr.FencedLeaderEpoch.Code, false
	case req.BrokerID != st.Leader:
		return stateUpdate{}, kerr.NotLeaderForPartition.Code, false
	case rp.LeaderRecoveryState != 0:
		return stateUpdate{}, kerr.InvalidRequest.Code, false
	}
	isr, epochs := requestedISR(req.Version, rp)
	if slices.Equal(isr, st.ISR) {
		return stateUpdate{}, 0, false
	}
	if rp.PartitionEpoch != st.PartitionEpoch {
		return stateUpdate{}, kerr.InvalidUpdateVersion.Code, false
	}
	if len(isr) == 0 || !slices.Contains(isr, st.Leader) || hasDuplicates(isr) {
		return stateUpdate{}, kerr.InvalidRequest.Code, false
	}
	replicas := c.ctx.replicas(tp)
	for i, r := range isr {
		b, live := c.ctx.liveBrokers[r]
		if !slices.Contains(replicas, r) || !live || c.shuttingDown(r) || (epochs != nil && epochs[i] != -1 && epochs[i] != b.Epoch) {
			if req.Version >= 2 {
				return stateUpdate{}, kerr.IneligibleReplica.Code, false
			}
			return stateUpdate{}, kerr.OperationNotAttempted.Code, false
		}
	}
	next := st
	next.ISR, next.PartitionEpoch, next.ControllerEpoch = isr, st.PartitionEpoch+1, c.ctx.epoch
	return stateUpdate{TP: tp, State: next}, 0, true
}

// requestedISR is the new ISR and, from v3 on, each member's broker epoch.
func requestedISR(version int16, rp *kmsg.AlterPartitionRequestTopicPartition) ([]int32, []int64) {
	if version < 3 {
		return slices.Clone(rp.NewISR), nil
	}
	isr := make([]int32, len(rp.NewEpochISR))
	epochs := make([]int64, len(rp.NewEpochISR))
	for i, m := range rp.NewEpochISR {
		isr[i], epochs[i] = m.BrokerID, m.BrokerEpoch
	}
	return isr, epochs
}

func hasDuplicates(ids []int32) bool {
	s := slices.Clone(ids)
	slices.Sort(s)
	return len(slices.Compact(s)) != len(ids)
}

// errorName is a Kafka error code's name (INELIGIBLE_REPLICA).
func errorName(code int16) string {
	if e, ok := kerr.ErrorForCode(code).(*kerr.Error); ok {
		return e.Message
	}
	return "error code " + strconv.Itoa(int(code))
}
