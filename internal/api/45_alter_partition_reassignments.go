package api

// AlterPartitionReassignments (key 45), v0 (KIP-455): start, replace or
// cancel (null replicas) partition reassignments. Served by the active
// controller only, as Kafka's ZooKeeper-era KafkaApis hands it to
// KafkaController: validation, the store writes and the per-partition
// answers are internal/controller's (reassignment.go), reached through
// Reassignments. A broker without one (or not the controller) answers
// NOT_CONTROLLER for the whole request; TimeoutMillis (> 0) bounds the wait
// for the controller (REQUEST_TIMED_OUT). The answer comes when the
// reassignment has started, not when it completes: ListPartitionReassignments
// shows it until then.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Reassignments is the controller's side of KIP-455 (controller.Loop
// implements it). Implementations answer NOT_CONTROLLER when this broker is
// not the active controller, REQUEST_TIMED_OUT when ctx ends first.
type Reassignments interface {
	AlterPartitionReassignments(ctx context.Context, req *kmsg.AlterPartitionAssignmentsRequest) *kmsg.AlterPartitionAssignmentsResponse
	ListPartitionReassignments(ctx context.Context, req *kmsg.ListPartitionReassignmentsRequest) *kmsg.ListPartitionReassignmentsResponse
}

func (h *Handler) alterPartitionReassignments(ctx context.Context, req *kmsg.AlterPartitionAssignmentsRequest) kmsg.Response {
	if h.Reassign == nil {
		resp := req.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
		resp.ErrorCode = kerr.NotController.Code
		return resp
	}
	ctx, cancel := withTimeoutMillis(ctx, req.TimeoutMillis)
	defer cancel()
	return h.Reassign.AlterPartitionReassignments(ctx, req)
}

// withTimeoutMillis bounds ctx by a request's TimeoutMillis when positive.
func withTimeoutMillis(ctx context.Context, ms int32) (context.Context, context.CancelFunc) {
	if ms <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, time.Duration(ms)*time.Millisecond)
}
