package api

// OffsetDelete (key 47), v0.
//
// Deletes committed offsets of a group (KIP-496): GROUP_ID_NOT_FOUND for
// an unknown group, NON_EMPTY_GROUP for a group with members that is not a
// consumer group, GROUP_SUBSCRIBED_TO_TOPIC for partitions of a topic a
// member subscribes to; the others are deleted with tombstones.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/group"
)

func (h *Handler) offsetDelete(ctx context.Context, req *kmsg.OffsetDeleteRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
	if h.Groups == nil {
		resp.ErrorCode = errorCode(errNoCoordinator)
		return resp
	}
	var tps []group.TP
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			tps = append(tps, group.TP{Topic: t.Topic, Partition: p.Partition})
		}
	}
	err, errs := h.Groups.DeleteOffsets(ctx, req.Group, tps)
	resp.ErrorCode = errorCode(err)
	if err != nil && errs == nil {
		return resp
	}
	i := 0
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetDeleteResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, errorCode(errs[i])
			i++
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
