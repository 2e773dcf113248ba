package api

// LeaderAndIsr (key 4), v5 only (wire.Supported; the controller sends v5:
// partitions grouped by topic, with topic ids and the broker epoch): from
// the controller only (no client sends it). Each partition state makes
// this broker the partition's leader or a follower, creating its log if
// needed. Epoch checks and per-partition errors are the Control
// implementation's (internal/broker/control.go). v6 (KIP-704's
// LeaderRecoveryState) and v7 (KRaft migration) are not served.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func (h *Handler) leaderAndIsr(ctx context.Context, req *kmsg.LeaderAndISRRequest) kmsg.Response {
	return h.Control.LeaderAndIsr(ctx, req)
}
