package api

// StopReplica (key 5), v3 only (wire.Supported; the controller sends v3:
// a leader epoch and delete flag per partition): from the controller only.
// Stops hosting the named partitions; with delete their directories are
// renamed <topic>-<partition>.<uuid>-delete and removed after
// file.delete.delay.ms. Epoch checks and per-partition errors are the
// Control implementation's. v4 (KRaft migration) is not served.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func (h *Handler) stopReplica(ctx context.Context, req *kmsg.StopReplicaRequest) kmsg.Response {
	return h.Control.StopReplica(ctx, req)
}
