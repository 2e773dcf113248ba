package api

// AlterPartition (key 56), v0–v3 (KIP-497, v3 KIP-903): from partition
// leaders to the controller, asking to change a partition's ISR. v0–1 name
// topics, v2+ by id; v3 carries each new ISR member's broker epoch. Served
// by the active controller only (NOT_CONTROLLER elsewhere): validation,
// the fenced conditional write and the answer are internal/controller's
// (alterpartition.go), reached through the Control implementation.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func (h *Handler) alterPartition(ctx context.Context, req *kmsg.AlterPartitionRequest) kmsg.Response {
	return h.Control.AlterPartition(ctx, req)
}
