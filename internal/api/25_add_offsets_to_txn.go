package api

// AddOffsetsToTxn (key 25), v0–v4: a transactional producer about to
// commit a group's offsets in its transaction (TxnOffsetCommit) adds the
// group's __consumer_offsets partition (group.PartitionFor) to the
// transaction, as Kafka's KafkaApis: the coordinator answers as for
// AddPartitionsToTxn. PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v2.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/group"
	"github.com/samsa-kafka/samsa/internal/kafka"
)

func (h *Handler) addOffsetsToTxn(ctx context.Context, req *kmsg.AddOffsetsToTxnRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
	switch {
	case req.TransactionalID == "":
		resp.ErrorCode = kerr.InvalidRequest.Code
	case h.Txns == nil:
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
	default:
		tp := kafka.TopicPartition{Topic: OffsetsTopic, Partition: h.offsetsPartition(req.Group)}
		err := h.Txns.AddPartitions(ctx, req.TransactionalID, req.ProducerID, req.ProducerEpoch, []kafka.TopicPartition{tp})
		resp.ErrorCode = fencedCode(errorCode(err), req.Version < 2)
	}
	return resp
}

// offsetsPartition is the group's __consumer_offsets partition.
func (h *Handler) offsetsPartition(groupID string) int32 {
	if h.Groups != nil {
		return h.Groups.PartitionFor(groupID)
	}
	if t, ok := h.Meta.Topic(OffsetsTopic); ok && len(t.Partitions) > 0 {
		return group.PartitionFor(groupID, int32(len(t.Partitions)))
	}
	return group.PartitionFor(groupID, h.Broker.OffsetsTopicNumPartitions)
}
