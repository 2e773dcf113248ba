package api

// The delayed produce of acks=-1 (Kafka's DelayedProduce in the produce
// purgatory). Once every partition of the request has been appended, the
// partitions that succeeded wait until their high watermark reaches the end
// of what was appended (replica.Partition.Acked): the partition is then
// answered with no error, or NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR
// shrank below min.insync.replicas meanwhile, or NOT_LEADER_OR_FOLLOWER when
// this broker lost the leadership (or the partition). One waiter, registered
// on all of them, is woken by every high watermark or leadership change and
// re-checks the partitions still pending. Those still pending after the
// request's timeout are answered REQUEST_TIMED_OUT; their base offsets stay,
// as in Kafka. When the ISR has only the leader the high watermark has
// already moved at the append, and the request completes without a waiter.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/replica"
)

// pendingAck is one appended partition of an acks=-1 produce.
type pendingAck struct {
	tp       kafka.TopicPartition
	p        *replica.Partition
	required int64 // last appended offset + 1
	sp       *kmsg.ProduceResponseTopicPartition
}

// awaitAcks waits until every pending partition is acknowledged or timeout
// passes, setting the codes in their responses (awaitPartitions). pending
// is what checkAcks left, so the caller can answer at once when it left
// nothing. It returns false when ctx ends first (the connection is
// closing).
func (h *Handler) awaitAcks(ctx context.Context, pending []pendingAck, timeoutMillis int32) bool {
	return awaitPartitions(ctx, &h.Purgatory.Produce, pending, time.Duration(timeoutMillis)*time.Millisecond,
		func(a pendingAck) *replica.Partition { return a.p }, h.checkAcks,
		func(a pendingAck) { a.sp.ErrorCode = kerr.RequestTimedOut.Code })
}

// checkAcks sets the response of every partition that is done and returns
// the others (reusing pending's array).
func (h *Handler) checkAcks(pending []pendingAck) []pendingAck {
	left := pending[:0]
	for _, a := range pending {
		if h.Partitions.Get(a.tp) != a.p { // no longer hosted here
			a.sp.ErrorCode = h.missingPartitionCode(a.tp.Topic, a.tp.Partition)
			continue
		}
		done, err := a.p.Acked(a.required)
		if !done {
			left = append(left, a)
			continue
		}
		if err != nil {
			a.sp.ErrorCode, a.sp.ErrorMessage = errorCode(err), errorMessage(err)
		}
	}
	return left
}
