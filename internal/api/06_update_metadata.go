package api

// UpdateMetadata (key 6), v7 only (wire.Supported; the controller sends
// v7: partitions grouped by topic, with topic ids): from the controller
// only. Replaces the live brokers and upserts partition states in the
// metadata cache that Metadata and DescribeCluster answer from. v8 (KRaft
// migration) is not served.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func (h *Handler) updateMetadata(ctx context.Context, req *kmsg.UpdateMetadataRequest) kmsg.Response {
	return h.Control.UpdateMetadata(ctx, req)
}
