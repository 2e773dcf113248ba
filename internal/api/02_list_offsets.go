package api

// ListOffsets (key 2), v1–v8.
//
// Timestamps: -1 latest (the high watermark; the last stable offset is the
// same until transactions exist), -2 earliest (log start offset), -3 the
// record with the largest timestamp (v7+, KIP-734), -4 earliest local (v8,
// KIP-1005: the log start offset, since there is no tiered storage). Any
// other timestamp finds the first record at or after it; none gives
// offset -1 and timestamp -1.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/storage"
)

func (h *Handler) listOffsets(req *kmsg.ListOffsetsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	for _, rt := range req.Topics {
		st := kmsg.NewListOffsetsResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewListOffsetsResponseTopicPartition()
			sp.Partition = rp.Partition
			h.listOffset(rt.Topic, rp, &sp)
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

func (h *Handler) listOffset(topic string, rp kmsg.ListOffsetsRequestTopicPartition, sp *kmsg.ListOffsetsResponseTopicPartition) {
	sp.Timestamp, sp.Offset, sp.LeaderEpoch = -1, -1, -1
	p := h.Partitions.Get(storage.TopicPartition{Topic: topic, Partition: rp.Partition})
	if p == nil {
		sp.ErrorCode = h.missingPartitionCode(topic, rp.Partition)
		return
	}
	if !p.IsLeader() {
		sp.ErrorCode = kerr.NotLeaderForPartition.Code
		return
	}
	if code := leaderEpochCode(rp.CurrentLeaderEpoch, p.LeaderEpoch()); code != 0 {
		sp.ErrorCode = code
		return
	}
	epoch := p.LeaderEpoch()
	switch rp.Timestamp {
	case -1:
		sp.Offset, sp.LeaderEpoch = p.HighWatermark(), epoch
	case -2, -4:
		sp.Offset, sp.LeaderEpoch = p.LogStartOffset(), epoch
	case -3:
		ts, off, err := p.Log().MaxTimestamp()
		if err != nil {
			sp.ErrorCode = errorCode(err)
			return
		}
		if off >= 0 && off < p.HighWatermark() {
			sp.Timestamp, sp.Offset, sp.LeaderEpoch = ts, off, epoch
		}
	default:
		if rp.Timestamp < 0 {
			sp.ErrorCode = kerr.InvalidRequest.Code
			return
		}
		off, ts, found, err := p.Log().OffsetForTimestamp(rp.Timestamp)
		if err != nil {
			sp.ErrorCode = errorCode(err)
			return
		}
		if found && off < p.HighWatermark() {
			sp.Timestamp, sp.Offset, sp.LeaderEpoch = ts, off, epoch
		}
	}
}
