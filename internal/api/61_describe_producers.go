package api

// DescribeProducers (key 61), v0 (KIP-664): per partition, the idempotent
// producers its log has state for (producer id, epoch, last sequence, last
// timestamp, coordinator epoch, open transaction's first offset), as
// Kafka's Partition.activeProducerState. Only the leader answers; a
// follower or a partition not hosted here answers NOT_LEADER_OR_FOLLOWER,
// an unknown one UNKNOWN_TOPIC_OR_PARTITION.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

func (h *Handler) describeProducers(req *kmsg.DescribeProducersRequest) *kmsg.DescribeProducersResponse {
	resp := req.ResponseKind().(*kmsg.DescribeProducersResponse)
	resp.Topics = make([]kmsg.DescribeProducersResponseTopic, len(req.Topics))
	for i, rt := range req.Topics {
		st := &resp.Topics[i]
		*st = kmsg.NewDescribeProducersResponseTopic()
		st.Topic = rt.Topic
		st.Partitions = make([]kmsg.DescribeProducersResponseTopicPartition, len(rt.Partitions))
		for j, part := range rt.Partitions {
			st.Partitions[j] = h.describePartitionProducers(kafka.TopicPartition{Topic: rt.Topic, Partition: part})
		}
	}
	return resp
}

func (h *Handler) describePartitionProducers(tp kafka.TopicPartition) kmsg.DescribeProducersResponseTopicPartition {
	sp := kmsg.NewDescribeProducersResponseTopicPartition()
	sp.Partition = tp.Partition
	p := h.Partitions.Get(tp)
	if p == nil {
		sp.ErrorCode = h.missingPartitionCode(tp.Topic, tp.Partition)
		return sp
	}
	producers, err := p.ActiveProducers()
	if err != nil {
		sp.ErrorCode, sp.ErrorMessage = errorCode(err), errorMessage(err)
		return sp
	}
	sp.ActiveProducers = make([]kmsg.DescribeProducersResponseTopicPartitionActiveProducer, len(producers))
	for i, pr := range producers {
		ap := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
		ap.ProducerID, ap.ProducerEpoch = pr.ProducerID, int32(pr.ProducerEpoch)
		ap.LastSequence, ap.LastTimestamp = pr.LastSequence, pr.LastTimestamp
		ap.CoordinatorEpoch, ap.CurrentTxnStartOffset = pr.CoordinatorEpoch, pr.CurrentTxnStartOffset
		sp.ActiveProducers[i] = ap
	}
	return sp
}
