package api

// Produce (key 0), v3–v11: record batch v2 only.
//
// acks must be -1, 0 or 1 (else INVALID_REQUIRED_ACKS on every partition).
// Each partition's payload must be exactly one v2 batch, checked by
// record.Validate (CRC32C, structure, max.message.bytes) before the log
// assigns offsets. On one broker acks=-1 is answered like acks=1; the
// replication issue adds the purgatory. acks=0 gets no response at all.

import (
	"time"

	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/samsa-kafka/samsa/internal/storage"
)

func (h *Handler) produce(req *kmsg.ProduceRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	badAcks := req.Acks != -1 && req.Acks != 0 && req.Acks != 1
	now := h.Now()
	for _, rt := range req.Topics {
		st := kmsg.NewProduceResponseTopic()
		st.Topic = rt.Topic
		st.TopicID = rt.TopicID
		for _, rp := range rt.Partitions {
			sp := kmsg.NewProduceResponseTopicPartition()
			sp.Partition = rp.Partition
			if badAcks {
				sp.ErrorCode = kerr.InvalidRequiredAcks.Code
			} else {
				h.produceOne(rt.Topic, &rp, &sp, now)
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	if req.Acks == 0 {
		return nil, nil
	}
	return resp, nil
}

func (h *Handler) produceOne(topic string, rp *kmsg.ProduceRequestTopicPartition, sp *kmsg.ProduceResponseTopicPartition, now time.Time) {
	sp.BaseOffset, sp.LogAppendTime, sp.LogStartOffset = -1, -1, -1
	p := h.Partitions.Get(storage.TopicPartition{Topic: topic, Partition: rp.Partition})
	if p == nil {
		sp.ErrorCode = h.missingPartitionCode(topic, rp.Partition)
		return
	}
	hdrs, err := record.Validate(rp.Records, p.Config().MaxMessageBytes)
	switch {
	case err != nil:
	case len(hdrs) != 1:
		err = fmt.Errorf("%w: produce must carry exactly one record batch, got %d", record.ErrInvalidRecord, len(hdrs))
	case hdrs[0].Control():
		err = fmt.Errorf("%w: clients may not produce control batches", record.ErrInvalidRecord)
	}
	if err != nil {
		h.Logger.Debug("produce rejected", "topic", topic, "partition", rp.Partition, "err", err)
		sp.ErrorCode, sp.ErrorMessage = errorCode(err), errorMessage(err)
		return
	}
	info, err := p.AppendAsLeader(rp.Records, hdrs, now)
	if err != nil {
		h.Logger.Warn("append failed", "topic", topic, "partition", rp.Partition, "err", err)
		sp.ErrorCode, sp.ErrorMessage = errorCode(err), errorMessage(err)
		return
	}
	sp.BaseOffset = info.FirstOffset
	sp.LogAppendTime = info.LogAppendTime
	sp.LogStartOffset = info.LogStartOffset
}

// missingPartitionCode is the error for a partition not hosted here: the
// topic or partition does not exist, or another broker leads it.
func (h *Handler) missingPartitionCode(topic string, partition int32) int16 {
	if t, ok := h.Meta.Topic(topic); ok && partition >= 0 && int(partition) < len(t.Partitions) {
		return kerr.NotLeaderForPartition.Code
	}
	return kerr.UnknownTopicOrPartition.Code
}
