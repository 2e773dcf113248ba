package api

// ListOffsets (key 2), v1–v8.
//
// Timestamps: -1 latest, -2 earliest (log start offset), -3 the record with
// the largest timestamp (v7+, KIP-734), -4 earliest local (v8, KIP-1005: the
// log start offset, since there is no tiered storage). Any other timestamp
// finds the first record at or after it; none gives offset -1 and timestamp
// -1. Only the leader answers (NOT_LEADER_OR_FOLLOWER).
//
// For consumers (replica id -1) the last fetchable offset is the high
// watermark, or the last stable offset for isolation level 1
// (read_committed, KIP-98): latest is that offset and lookups finding an
// offset at or above it find nothing. Other replica ids (brokers)
// are bounded by the log end offset instead, as in Kafka. A leader whose
// high watermark has not yet reached the start of its leader epoch (just
// elected, its followers not caught up) answers consumers
// OFFSET_NOT_AVAILABLE for latest and for lookups beyond the high watermark
// (KIP-207), so that they retry rather than go back in time.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/replica"
)

func (h *Handler) listOffsets(req *kmsg.ListOffsetsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	for _, rt := range req.Topics {
		st := kmsg.NewListOffsetsResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewListOffsetsResponseTopicPartition()
			sp.Partition = rp.Partition
			h.listOffset(rt.Topic, rp, req.ReplicaID == -1, req.IsolationLevel == 1, &sp)
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

func (h *Handler) listOffset(topic string, rp kmsg.ListOffsetsRequestTopicPartition, consumer, committed bool, sp *kmsg.ListOffsetsResponseTopicPartition) {
	sp.Timestamp, sp.Offset, sp.LeaderEpoch = -1, -1, -1
	p := h.Partitions.Get(kafka.TopicPartition{Topic: topic, Partition: rp.Partition})
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
	lastFetchable, lagging := p.LogEndOffset(), false
	if consumer {
		lastFetchable = p.HighWatermark()
		lagging = hwBehindEpochStart(p, epoch, lastFetchable)
		if committed {
			lastFetchable = min(p.LastStableOffset(), lastFetchable)
		}
	}
	// beyond answers a lookup that found off at or past the last
	// fetchable offset: nothing, or OFFSET_NOT_AVAILABLE while lagging.
	beyond := func(off int64) bool {
		if off < lastFetchable {
			return false
		}
		if lagging {
			sp.ErrorCode = kerr.OffsetNotAvailable.Code
		}
		return true
	}
	switch rp.Timestamp {
	case -1:
		if lagging {
			sp.ErrorCode = kerr.OffsetNotAvailable.Code
			return
		}
		sp.Offset, sp.LeaderEpoch = lastFetchable, epoch
	case -2, -4:
		sp.Offset, sp.LeaderEpoch = p.LogStartOffset(), epoch
	case -3:
		ts, off, err := p.Log().MaxTimestamp()
		if err != nil {
			sp.ErrorCode = errorCode(err)
			return
		}
		if off >= 0 && !beyond(off) {
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
		if found && !beyond(off) {
			sp.Timestamp, sp.Offset, sp.LeaderEpoch = ts, off, epoch
		}
	}
}

// hwBehindEpochStart reports a leader whose high watermark hw is below the
// first offset of its current leader epoch (Kafka's leaderEpochStartOffsetOpt
// check): the epoch's start is where the previous epoch ends in the cache.
func hwBehindEpochStart(p *replica.Partition, epoch int32, hw int64) bool {
	if latest, ok := p.LatestEpoch(); !ok || latest != epoch || epoch <= 0 {
		return false
	}
	_, start := p.EndOffsetForEpoch(epoch - 1)
	return start > hw
}
