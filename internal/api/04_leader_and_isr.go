package api

// LeaderAndIsr (key 4), v5 (the code handles v2–v6): from the controller only (no client sends
// it). Each partition state makes this broker the partition's leader or a
// follower, creating its log if needed. Epoch checks and per-partition
// errors are the Control implementation's (internal/broker/control.go).
// v7 (KRaft migration) is not served.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func (h *Handler) leaderAndIsr(ctx context.Context, req *kmsg.LeaderAndISRRequest) kmsg.Response {
	return h.Control.LeaderAndIsr(ctx, req)
}
