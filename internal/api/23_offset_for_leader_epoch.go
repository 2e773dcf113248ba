package api

// OffsetForLeaderEpoch (key 23), v0–v4 (KIP-101, KIP-279, KIP-320): for
// each partition, the largest leader epoch <= the requested one this replica
// knows and the offset where it ends (the start of the next epoch, or the
// log end offset for the latest epoch), from the leader-epoch cache. A
// follower asks its leader before fetching to find where to truncate;
// consumers ask after a leader change to detect truncation.
//
// Errors per partition follow Kafka's Partition.getLocalLog: a partition not
// hosted here is UNKNOWN_TOPIC_OR_PARTITION or NOT_LEADER_OR_FOLLOWER; the
// current leader epoch (v2+, -1 skips it) is checked first (FENCED or
// UNKNOWN_LEADER_EPOCH), then leadership: only the leader answers
// (NOT_LEADER_OR_FOLLOWER), except for replica id -2, the debugging id
// (the default before v3), which any replica answers. An epoch this replica
// knows nothing about gives leader epoch -1 and end offset -1 with no error.

import (
	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// debuggingReplicaID may query followers (Kafka's DEBUGGING_REPLICA_ID).
const debuggingReplicaID = -2

func (h *Handler) offsetForLeaderEpoch(req *kmsg.OffsetForLeaderEpochRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	requireLeader := req.ReplicaID != debuggingReplicaID
	for _, rt := range req.Topics {
		st := kmsg.NewOffsetForLeaderEpochResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			sp.Partition = rp.Partition
			h.epochEndOffset(rt.Topic, rp, requireLeader, &sp)
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

func (h *Handler) epochEndOffset(topic string, rp kmsg.OffsetForLeaderEpochRequestTopicPartition, requireLeader bool, sp *kmsg.OffsetForLeaderEpochResponseTopicPartition) {
	sp.LeaderEpoch, sp.EndOffset = -1, -1
	p := h.Partitions.Get(kafka.TopicPartition{Topic: topic, Partition: rp.Partition})
	if p == nil {
		sp.ErrorCode = h.missingPartitionCode(topic, rp.Partition)
		return
	}
	if code := leaderEpochCode(rp.CurrentLeaderEpoch, p.LeaderEpoch()); code != 0 {
		sp.ErrorCode = code
		return
	}
	if requireLeader && !p.IsLeader() {
		sp.ErrorCode = kerr.NotLeaderForPartition.Code
		return
	}
	epoch, end := p.EndOffsetForEpoch(rp.LeaderEpoch)
	if end < 0 {
		return // undefined: Kafka answers (-1, -1)
	}
	sp.LeaderEpoch, sp.EndOffset = epoch, end
}
