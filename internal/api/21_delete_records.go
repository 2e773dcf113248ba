package api

// DeleteRecords (key 21), v0–2 (Kafka's ReplicaManager.deleteRecords and
// DelayedDeleteRecords). For each partition the leader raises its log start
// offset to the requested offset (-1: the high watermark;
// replica.Partition.DeleteRecords), then the request waits until the low
// watermark, the least log start offset over the ISR as the followers
// report it in their fetches, reached that offset, and answers it; the
// partitions still short of it when timeout_ms passes answer
// REQUEST_TIMED_OUT. Errors per partition, as Kafka's:
// UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER, OFFSET_OUT_OF_RANGE
// (beyond the high watermark, or negative but -1), INVALID_TOPIC_EXCEPTION
// for the internal topics, POLICY_VIOLATION when cleanup.policy lacks
// delete. The segments wholly below the new start go at the next
// retention pass. Deviation: Kafka's low watermark spans every replica on
// a live broker, Samsa's the ISR.

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/replica"
)

// pendingDelete is one partition of a DeleteRecords waiting for its low
// watermark.
type pendingDelete struct {
	tp     kafka.TopicPartition
	p      *replica.Partition
	target int64
	sp     *kmsg.DeleteRecordsResponseTopicPartition
}

func (h *Handler) deleteRecords(ctx context.Context, req *kmsg.DeleteRecordsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.DeleteRecordsResponse)
	resp.Topics = make([]kmsg.DeleteRecordsResponseTopic, len(req.Topics))
	var pending []pendingDelete
	for i, rt := range req.Topics {
		st := &resp.Topics[i]
		*st = kmsg.NewDeleteRecordsResponseTopic()
		st.Topic = rt.Topic
		st.Partitions = make([]kmsg.DeleteRecordsResponseTopicPartition, len(rt.Partitions))
		for j, rp := range rt.Partitions {
			sp := &st.Partitions[j]
			*sp = kmsg.NewDeleteRecordsResponseTopicPartition()
			sp.Partition, sp.LowWatermark = rp.Partition, -1
			tp := kafka.TopicPartition{Topic: rt.Topic, Partition: rp.Partition}
			if d, ok := h.startDelete(tp, rp.Offset, sp); ok {
				pending = append(pending, d)
			}
		}
	}
	if !h.awaitDeletes(ctx, pending, req.TimeoutMillis) {
		return nil, ctx.Err()
	}
	return resp, nil
}

// startDelete raises the partition's log start offset, or sets the error.
func (h *Handler) startDelete(tp kafka.TopicPartition, offset int64, sp *kmsg.DeleteRecordsResponseTopicPartition) (pendingDelete, bool) {
	p := h.Partitions.Get(tp)
	switch {
	case tp.Topic == OffsetsTopic || tp.Topic == TxnStateTopic:
		sp.ErrorCode = kerr.InvalidTopicException.Code
	case p == nil:
		sp.ErrorCode = h.missingPartitionCode(tp.Topic, tp.Partition)
	case p.IsLeader() && p.Config().Log.NoDelete:
		sp.ErrorCode = kerr.PolicyViolation.Code
	default:
		target, err := p.DeleteRecords(offset)
		if err != nil {
			sp.ErrorCode = errorCode(err)
			return pendingDelete{}, false
		}
		return pendingDelete{tp: tp, p: p, target: target, sp: sp}, true
	}
	return pendingDelete{}, false
}

// awaitDeletes waits until every pending partition's low watermark reached
// its target or timeout passes (awaitPartitions); false when ctx ends
// first.
func (h *Handler) awaitDeletes(ctx context.Context, pending []pendingDelete, timeoutMillis int32) bool {
	if pending = h.checkDeletes(pending); len(pending) == 0 {
		return true
	}
	return awaitPartitions(ctx, &h.Purgatory.DeleteRecords, pending, time.Duration(timeoutMillis)*time.Millisecond,
		func(d pendingDelete) *replica.Partition { return d.p }, h.checkDeletes,
		func(d pendingDelete) { d.sp.ErrorCode = kerr.RequestTimedOut.Code })
}

// checkDeletes answers the partitions whose low watermark reached the
// target (or that failed) and returns the others.
func (h *Handler) checkDeletes(pending []pendingDelete) []pendingDelete {
	left := pending[:0]
	for _, d := range pending {
		if h.Partitions.Get(d.tp) != d.p {
			d.sp.ErrorCode = h.missingPartitionCode(d.tp.Topic, d.tp.Partition)
			continue
		}
		low, err := d.p.LowWatermark()
		switch {
		case errors.Is(err, replica.ErrNotLeader):
			d.sp.ErrorCode = kerr.NotLeaderForPartition.Code
		case err != nil:
			d.sp.ErrorCode = errorCode(err)
		case low >= d.target:
			d.sp.LowWatermark = low
		default:
			left = append(left, d)
		}
	}
	return left
}
