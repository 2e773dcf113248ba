package api

// WriteTxnMarkers (key 27), v0–v1: the transaction coordinator (internal/
// txn, this broker's or another's) has each partition leader append a
// COMMIT or ABORT marker of a producer's transaction, as Kafka's
// KafkaApis.handleWriteTxnMarkersRequest.
//
// Per marker, per partition: a partition not hosted here answers
// UNKNOWN_TOPIC_OR_PARTITION if the topic or partition does not exist,
// NOT_LEADER_OR_FOLLOWER if it does (another broker leads it; the
// coordinator retries with fresh metadata), as does a follower. The leader
// appends the marker in its leader epoch with internal topics allowed
// (replica.Partition.AppendTxnMarker): an older producer epoch answers
// INVALID_PRODUCER_EPOCH, an older coordinator epoch
// TRANSACTION_COORDINATOR_FENCED, an ISR below min.insync.replicas
// NOT_ENOUGH_REPLICAS. Appended markers then wait for the high watermark
// as an acks=all produce does (produce_acks.go) within markerAckTimeout
// (Kafka's request.timeout.ms default): REQUEST_TIMED_OUT after it. A
// marker written to a __consumer_offsets partition then completes the
// producer's pending transactional offsets there
// (group.Coordinator.CompleteTxn), as Kafka's onTransactionCompleted.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// markerAckTimeout bounds the wait for the high watermark (ms).
const markerAckTimeout = 30_000

// markerPartition is one partition of one marker: where its code goes.
type markerPartition struct {
	tp     kafka.TopicPartition
	commit bool
	pid    int64
	rp     *kmsg.WriteTxnMarkersResponseMarkerTopicPartition
	ack    *kmsg.ProduceResponseTopicPartition // the acks=all wait's answer
}

func (h *Handler) writeTxnMarkers(ctx context.Context, req *kmsg.WriteTxnMarkersRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	resp.Markers = make([]kmsg.WriteTxnMarkersResponseMarker, len(req.Markers))
	var pending []pendingAck
	var written []markerPartition
	for i := range req.Markers {
		m := &req.Markers[i]
		rm := &resp.Markers[i]
		*rm = kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = m.ProducerID
		rm.Topics = make([]kmsg.WriteTxnMarkersResponseMarkerTopic, len(m.Topics))
		for j := range m.Topics {
			t := &m.Topics[j]
			rt := &rm.Topics[j]
			*rt = kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = t.Topic
			rt.Partitions = make([]kmsg.WriteTxnMarkersResponseMarkerTopicPartition, len(t.Partitions))
			for k, part := range t.Partitions {
				rp := &rt.Partitions[k]
				*rp = kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				rp.Partition = part
				mp := markerPartition{tp: kafka.TopicPartition{Topic: t.Topic, Partition: part}, commit: m.Committed, pid: m.ProducerID, rp: rp}
				if a, ok := h.writeMarker(m, mp); ok {
					mp.ack = a.sp
					pending = append(pending, a)
					written = append(written, mp)
				}
			}
		}
	}
	if pending = h.checkAcks(pending); len(pending) > 0 && !h.awaitAcks(ctx, pending, markerAckTimeout) {
		return nil, nil // the connection is closing: nothing to answer
	}
	for _, mp := range written {
		mp.rp.ErrorCode = mp.ack.ErrorCode
		if mp.rp.ErrorCode == 0 && mp.tp.Topic == OffsetsTopic && h.Groups != nil {
			h.Groups.CompleteTxn(mp.tp.Partition, mp.pid, mp.commit)
		}
	}
	return resp, nil
}

// writeMarker appends m's marker to one partition, setting its code on a
// refusal; ok with what the high watermark must reach.
func (h *Handler) writeMarker(m *kmsg.WriteTxnMarkersRequestMarker, mp markerPartition) (pendingAck, bool) {
	p := h.Partitions.Get(mp.tp)
	if p == nil {
		mp.rp.ErrorCode = h.missingPartitionCode(mp.tp.Topic, mp.tp.Partition)
		return pendingAck{}, false
	}
	info, err := p.AppendTxnMarker(m.ProducerID, m.ProducerEpoch, m.CoordinatorEpoch, m.Committed)
	if err != nil {
		mp.rp.ErrorCode = errorCode(err)
		h.Logger.Debug("transaction marker refused", "partition", mp.tp.String(), "producer", m.ProducerID, "err", err)
		return pendingAck{}, false
	}
	sp := kmsg.NewProduceResponseTopicPartition()
	return pendingAck{tp: mp.tp, p: p, required: info.LastOffset + 1, sp: &sp}, true
}
