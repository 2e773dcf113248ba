package api

// ControlledShutdown (key 7), v1–v3: a broker about to stop asks the
// controller to move leadership away from it and stop its follower
// replicas (v2+ carries its broker epoch, v3 is flexible). Served by the
// active controller only (NOT_CONTROLLER elsewhere): the checks, the
// elections and the answer (the partitions it still leads) are
// internal/controller's (controlled_shutdown.go), reached through the
// Control implementation.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func (h *Handler) controlledShutdown(ctx context.Context, req *kmsg.ControlledShutdownRequest) kmsg.Response {
	return h.Control.ControlledShutdown(ctx, req)
}
