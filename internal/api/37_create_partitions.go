package api

// CreatePartitions (key 37), v0–v3.
//
// Grows topics, as Kafka's ZooKeeper-era AdminManager.createPartitions does.
// Per topic: INVALID_REQUEST when a name appears more than once in the
// request (one answer for that name); then the Admin decides, on the
// controller only (NOT_CONTROLLER elsewhere): UNKNOWN_TOPIC_OR_PARTITION,
// INVALID_TOPIC_EXCEPTION while the topic is queued for deletion,
// REASSIGNMENT_IN_PROGRESS, INVALID_PARTITIONS when the new count is not
// larger than the current one, INVALID_REPLICA_ASSIGNMENT for a manual
// assignment with unknown brokers, the wrong number of partitions, repeated
// brokers or a replication factor different from partition 0's.
// validateOnly checks everything and changes nothing.
// THROTTLING_QUOTA_EXCEEDED (v3+) for a topic the client's
// controller_mutation_rate refuses (quota.go). TimeoutMillis bounds
// the wait for the new partitions' leaders (REQUEST_TIMED_OUT when it
// passes); 0 or less answers as soon as the assignment is written, as Kafka
// does. The authorization check (TOPIC_AUTHORIZATION_FAILED) arrives with
// the security work.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// PartitionAdder is the Admin capability behind CreatePartitions: grow topic
// to total partitions, placing the new ones on assignment (one replica list
// per new partition, in order) or automatically when assignment is nil, then
// wait until they have leaders or ctx ends (no wait if NoWait(ctx)). Errors
// are kerr errors (or wrap one).
type PartitionAdder interface {
	AddPartitions(ctx context.Context, topic string, total int32, assignment [][]int32, validateOnly bool) error
}

type noWaitKey struct{}

// WithNoWait marks ctx so that an Admin writes its change and returns
// without waiting for the cluster to apply it (Kafka's TimeoutMillis <= 0).
func WithNoWait(ctx context.Context) context.Context {
	return context.WithValue(ctx, noWaitKey{}, true)
}

// NoWait reports whether ctx was marked by WithNoWait.
func NoWait(ctx context.Context) bool {
	v, _ := ctx.Value(noWaitKey{}).(bool)
	return v
}

func (h *Handler) createPartitions(ctx context.Context, req *kmsg.CreatePartitionsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
	if req.TimeoutMillis > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(req.TimeoutMillis)*time.Millisecond)
		defer cancel()
	} else {
		ctx = WithNoWait(ctx)
	}
	seen := map[string]int{}
	for _, rt := range req.Topics {
		seen[rt.Topic]++
	}
	mq := h.mutationQuota(ctx, req.Version, 3)
	defer mq.done()
	answered := map[string]bool{}
	for _, rt := range req.Topics {
		if answered[rt.Topic] {
			continue
		}
		answered[rt.Topic] = true
		st := kmsg.NewCreatePartitionsResponseTopic()
		st.Topic = rt.Topic
		var err error
		if seen[rt.Topic] > 1 {
			err = fmt.Errorf("%w: Duplicate topic in request.", kerr.InvalidRequest)
		} else {
			err = h.addPartitions(ctx, rt, req.ValidateOnly, mq)
		}
		if err != nil {
			st.ErrorCode, st.ErrorMessage = errorCode(err), errorMessage(err)
			if ctx.Err() != nil && !errors.Is(err, kerr.NotController) {
				st.ErrorCode = kerr.RequestTimedOut.Code
			}
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

// addPartitions grows the topic rt names; mq, when a quota applies, is
// asked for the new partitions once a dry run passed, as Kafka records them
// after its checks.
func (h *Handler) addPartitions(ctx context.Context, rt kmsg.CreatePartitionsRequestTopic, validateOnly bool, mq *mutationQuota) error {
	adder, ok := h.Admin.(PartitionAdder)
	if !ok {
		return fmt.Errorf("%w: api: this broker cannot add partitions", kerr.InvalidRequest)
	}
	var assignment [][]int32
	if rt.Assignment != nil {
		assignment = make([][]int32, 0, len(rt.Assignment))
		for _, a := range rt.Assignment {
			assignment = append(assignment, a.Replicas)
		}
	}
	if mq.applies() && !validateOnly {
		if err := adder.AddPartitions(ctx, rt.Topic, rt.Count, assignment, true); err != nil {
			return err
		}
		if t, ok := h.Meta.Topic(rt.Topic); ok && !mq.allow(int(rt.Count)-len(t.Partitions)) {
			return errThrottlingQuota
		}
	}
	return adder.AddPartitions(ctx, rt.Topic, rt.Count, assignment, validateOnly)
}
