package api

// ListPartitionReassignments (key 46), v0 (KIP-455): the reassignments in
// progress — of the partitions asked for, or all when Topics is null — with
// each partition's replicas, adding and removing replicas. Served by the
// active controller only (NOT_CONTROLLER elsewhere), through Reassignments
// (see 45_alter_partition_reassignments.go); TimeoutMillis (> 0) bounds the
// wait for it.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (h *Handler) listPartitionReassignments(ctx context.Context, req *kmsg.ListPartitionReassignmentsRequest) kmsg.Response {
	if h.Reassign == nil {
		resp := req.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
		resp.ErrorCode = kerr.NotController.Code
		return resp
	}
	ctx, cancel := withTimeoutMillis(ctx, req.TimeoutMillis)
	defer cancel()
	return h.Reassign.ListPartitionReassignments(ctx, req)
}
