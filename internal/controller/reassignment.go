package controller

// AlterPartitionReassignments and ListPartitionReassignments (KIP-455), as
// the ZooKeeper-era KafkaController's processApiPartitionReassignment and
// processListPartitionReassignments. Both are the active controller's: a
// broker that is not answers NOT_CONTROLLER for the whole request, and a
// caller whose context ends first REQUEST_TIMED_OUT (an accepted
// reassignment still proceeds).
//
// Alter: a partition named twice counts once, with its last target. Per
// partition, in Kafka's order:
//
//	target empty                          INVALID_REPLICA_ASSIGNMENT
//	duplicate broker ids                  INVALID_REPLICA_ASSIGNMENT
//	a negative broker id                  INVALID_REPLICA_ASSIGNMENT
//	an adding replica on a dead broker    INVALID_REPLICA_ASSIGNMENT
//	cancel (null target) with nothing in progress
//	                                      NO_REASSIGNMENT_IN_PROGRESS
//	topic queued for deletion, or unknown partition
//	                                      UNKNOWN_TOPIC_OR_PARTITION
//
// The accepted ones go through onPartitionReassignment together
// (reassignment_exec.go); the answer comes once step A (or B) is done, not
// when the reassignment completes. A new target replaces one in progress
// (from its original replicas); a null target cancels it.
//
// List: the partitions asked for (all when Topics is null) that are being
// reassigned, with their replicas, adding and removing replicas; others are
// left out.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/metadata"
)

// AlterReassignments is an AlterPartitionReassignments request for the
// loop. Reply is called exactly once, from the loop.
type AlterReassignments struct {
	Req   *kmsg.AlterPartitionAssignmentsRequest
	Reply func(*kmsg.AlterPartitionAssignmentsResponse)
}

// ListReassignments is a ListPartitionReassignments request for the loop.
// Reply is called exactly once, from the loop.
type ListReassignments struct {
	Req   *kmsg.ListPartitionReassignmentsRequest
	Reply func(*kmsg.ListPartitionReassignmentsResponse)
}

func (AlterReassignments) name() string { return "AlterPartitionReassignments" }
func (ListReassignments) name() string  { return "ListPartitionReassignments" }

// AlterPartitionReassignments hands req to the controller and waits for
// its answer. Safe from any goroutine.
func (l *Loop) AlterPartitionReassignments(ctx context.Context, req *kmsg.AlterPartitionAssignmentsRequest) *kmsg.AlterPartitionAssignmentsResponse {
	return askLoop(ctx, l, func(reply func(*kmsg.AlterPartitionAssignmentsResponse)) Event {
		return AlterReassignments{Req: req, Reply: reply}
	}, func(code int16) *kmsg.AlterPartitionAssignmentsResponse { return alterReassignmentsError(req, code) })
}

// ListPartitionReassignments hands req to the controller and waits for
// its answer. Safe from any goroutine.
func (l *Loop) ListPartitionReassignments(ctx context.Context, req *kmsg.ListPartitionReassignmentsRequest) *kmsg.ListPartitionReassignmentsResponse {
	return askLoop(ctx, l, func(reply func(*kmsg.ListPartitionReassignmentsResponse)) Event {
		return ListReassignments{Req: req, Reply: reply}
	}, func(code int16) *kmsg.ListPartitionReassignmentsResponse { return listReassignmentsError(req, code) })
}

func alterReassignmentsError(req *kmsg.AlterPartitionAssignmentsRequest, code int16) *kmsg.AlterPartitionAssignmentsResponse {
	resp := req.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
	resp.ErrorCode = code
	return resp
}

func listReassignmentsError(req *kmsg.ListPartitionReassignmentsRequest, code int16) *kmsg.ListPartitionReassignmentsResponse {
	resp := req.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
	resp.ErrorCode = code
	return resp
}

// apiError is one partition's answer.
type apiError struct {
	code int16
	msg  string
}

// onAlterReassignments validates, starts and answers one request.
func (c *Controller) onAlterReassignments(ctx context.Context, e AlterReassignments) error {
	if c.ctx == nil {
		e.Reply(alterReassignmentsError(e.Req, kerr.NotController.Code))
		return nil
	}
	var order []TP
	targets := map[TP][]int32{} // nil: cancel
	for _, rt := range e.Req.Topics {
		for _, rp := range rt.Partitions {
			tp := TP{Topic: rt.Topic, Partition: rp.Partition}
			if _, seen := targets[tp]; !seen {
				order = append(order, tp)
			}
			targets[tp] = rp.Replicas
		}
	}
	results := map[TP]apiError{}
	want := map[TP]metadata.PartitionAssignment{}
	for _, tp := range order {
		target := targets[tp]
		if target != nil {
			if err, bad := c.validateReplicas(tp, target); bad {
				results[tp] = err
				continue
			}
		}
		cur := c.ctx.fullAssignment(tp)
		switch {
		case target == nil && !cur.Reassigning():
			results[tp] = apiError{code: kerr.NoReassignmentInProgress.Code}
		case c.deleting[tp.Topic] || cur.Replicas == nil:
			results[tp] = apiError{kerr.UnknownTopicOrPartition.Code, "The partition does not exist."}
		case target == nil:
			want[tp] = cur.ReassignTo(cur.Origin())
		default:
			want[tp] = cur.ReassignTo(target)
		}
		if next, ok := want[tp]; ok {
			if err, bad := c.keepsInSyncReplica(tp, next, target == nil); bad {
				delete(want, tp)
				results[tp] = err
			}
		}
	}
	for _, tp := range order {
		if _, ok := want[tp]; ok {
			c.cfg.Logger.Info("partition reassignment requested", "partition", tp, "target", targets[tp])
		}
	}
	err := c.onPartitionReassignment(ctx, want)
	if err != nil {
		if errors.Is(err, metadata.ErrControllerMoved) {
			e.Reply(alterReassignmentsError(e.Req, kerr.NotController.Code))
			return err
		}
		for tp := range want {
			results[tp] = apiError{code: kerr.UnknownServerError.Code}
		}
	}
	resp := e.Req.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
	index := map[string]int{}
	for _, tp := range order {
		i, ok := index[tp.Topic]
		if !ok {
			rt := kmsg.NewAlterPartitionAssignmentsResponseTopic()
			rt.Topic = tp.Topic
			resp.Topics = append(resp.Topics, rt)
			i = len(resp.Topics) - 1
			index[tp.Topic] = i
		}
		rp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
		rp.Partition = tp.Partition
		if r, ok := results[tp]; ok {
			rp.ErrorCode = r.code
			if r.msg != "" {
				rp.ErrorMessage = kmsg.StringPtr(r.msg)
			}
		}
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, rp)
	}
	e.Reply(resp)
	return err
}

// validateReplicas checks a target replica list (Kafka's validateReplicas).
func (c *Controller) validateReplicas(tp TP, target []int32) (apiError, bool) {
	bad := func(format string, args ...any) (apiError, bool) {
		return apiError{kerr.InvalidReplicaAssignment.Code, fmt.Sprintf(format, args...)}, true
	}
	switch {
	case len(target) == 0:
		return bad("Empty replica list specified in partition reassignment.")
	case hasDuplicates(target):
		return bad("Duplicate replica ids in partition reassignment replica list: %s", idList(target))
	case slices.ContainsFunc(target, func(r int32) bool { return r < 0 }):
		return bad("Invalid broker id in replica list: %s", idList(target))
	}
	adding := c.ctx.fullAssignment(tp).ReassignTo(target).Adding
	if slices.ContainsFunc(adding, func(r int32) bool { return !c.ctx.isLive(r) }) {
		return bad("Replica assignment has brokers that are not alive. Replica list: %s, live broker list: %s",
			idList(adding), idList(c.ctx.liveBrokerIDs()))
	}
	return apiError{}, false
}

// keepsInSyncReplica refuses a new target or a cancellation that would
// take every member of the partition's ISR out of its replicas at once: the
// adding replicas of a reassignment in progress that the new full
// assignment drops are stopped and deleted without waiting (Kafka's
// ZooKeeper-mode updateCurrentReassignment), so when they are the whole ISR
// (an adding replica elected after the original ones died or fell behind)
// the acknowledged records would go with them and no replica left could be
// elected cleanly. As KRaft's controller refuses such a revert
// (PartitionReassignmentRevert), it is refused unless unclean leader
// election is enabled for the topic.
func (c *Controller) keepsInSyncReplica(tp TP, next metadata.PartitionAssignment, cancel bool) (apiError, bool) {
	st, ok := c.ctx.states.get(tp)
	if !ok || len(st.ISR) == 0 || slices.ContainsFunc(st.ISR, func(r int32) bool { return slices.Contains(next.Replicas, r) }) {
		return apiError{}, false
	}
	if c.uncleanAllowed(tp.Topic) {
		return apiError{}, false
	}
	what := "reassign partition " + tp.String() + " to " + idList(next.Target())
	if cancel {
		what = "revert the partition assignment of " + tp.String()
	}
	return apiError{kerr.InvalidReplicaAssignment.Code, fmt.Sprintf("Unable to %s: it would remove every in-sync replica %s, which requires an unclean leader election.", what, idList(st.ISR))}, true
}

// idList formats broker ids as Kafka's messages do: [1, 2, 3].
func idList(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(int(id))
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// onListReassignments answers one ListPartitionReassignments request.
func (c *Controller) onListReassignments(e ListReassignments) {
	if c.ctx == nil {
		e.Reply(listReassignmentsError(e.Req, kerr.NotController.Code))
		return
	}
	var tps []TP
	if e.Req.Topics == nil {
		tps = c.ctx.reassigningPartitions()
	} else {
		for _, rt := range e.Req.Topics {
			for _, p := range rt.Partitions {
				tps = append(tps, TP{Topic: rt.Topic, Partition: p})
			}
		}
	}
	resp := e.Req.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
	seen := map[TP]bool{}
	index := map[string]int{}
	for _, tp := range tps {
		pa := c.ctx.fullAssignment(tp)
		if seen[tp] || !pa.Reassigning() {
			continue
		}
		seen[tp] = true
		i, ok := index[tp.Topic]
		if !ok {
			rt := kmsg.NewListPartitionReassignmentsResponseTopic()
			rt.Topic = tp.Topic
			resp.Topics = append(resp.Topics, rt)
			i = len(resp.Topics) - 1
			index[tp.Topic] = i
		}
		rp := kmsg.NewListPartitionReassignmentsResponseTopicPartition()
		rp.Partition = tp.Partition
		rp.Replicas, rp.AddingReplicas, rp.RemovingReplicas = slices.Clone(pa.Replicas), slices.Clone(pa.Adding), slices.Clone(pa.Removing)
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, rp)
	}
	e.Reply(resp)
}
