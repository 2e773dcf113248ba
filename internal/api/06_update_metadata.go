package api

// UpdateMetadata (key 6), v8 only (wire.Supported; the controller sends
// v8: partitions grouped by topic, with topic ids, and KIP-866's Type to
// mark a full snapshot): from the controller only. Replaces the live
// brokers and upserts partition states in the metadata cache that Metadata
// and DescribeCluster answer from; a full snapshot also drops the topics it
// does not list and sets stray logs aside (broker/stray.go).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func (h *Handler) updateMetadata(ctx context.Context, req *kmsg.UpdateMetadataRequest) kmsg.Response {
	return h.Control.UpdateMetadata(ctx, req)
}
