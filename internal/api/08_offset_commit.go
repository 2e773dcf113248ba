package api

// OffsetCommit (key 8), v0–v9.
//
// Partitions of topics this cluster does not have answer
// UNKNOWN_TOPIC_OR_PARTITION, metadata longer than
// offset.metadata.max.bytes OFFSET_METADATA_TOO_LARGE; the others are
// validated against the group (member, generation; v7+ group.instance.id),
// written to __consumer_offsets and answered once committed
// (group.Coordinator.CommitOffsets). v0 has no generation or member (a
// commit outside group management); v2–v4's retention time is ignored, as
// Kafka 2.1+ does (offsets.retention.minutes applies); v6+ carry the
// leader epoch. Topics may not be named by id (v10+ are not served).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/group"
)

func (h *Handler) offsetCommit(req *kmsg.OffsetCommitRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	gen, member := req.Generation, req.MemberID
	if req.Version == 0 {
		gen, member = -1, ""
	}
	var commits []group.Commit
	type slot struct{ t, p int }
	var slots []slot
	for i, rt := range req.Topics {
		st := kmsg.NewOffsetCommitResponseTopic()
		st.Topic = rt.Topic
		t, known := h.Meta.Topic(rt.Topic)
		for _, rp := range rt.Partitions {
			sp := kmsg.NewOffsetCommitResponseTopicPartition()
			sp.Partition = rp.Partition
			switch {
			case h.Groups == nil:
				sp.ErrorCode = errorCode(errNoCoordinator)
			case !known || rp.Partition < 0 || int(rp.Partition) >= len(t.Partitions):
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			default:
				md := ""
				if rp.Metadata != nil {
					md = *rp.Metadata
				}
				epoch := int32(-1)
				if req.Version >= 6 {
					epoch = rp.LeaderEpoch
				}
				commits = append(commits, group.Commit{TP: group.TP{Topic: rt.Topic, Partition: rp.Partition},
					Offset: rp.Offset, LeaderEpoch: epoch, Metadata: md})
				slots = append(slots, slot{i, len(st.Partitions)})
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	if len(commits) == 0 {
		return resp
	}
	errs := h.Groups.CommitOffsets(req.Group, member, req.InstanceID, gen, commits)
	for i, s := range slots {
		resp.Topics[s.t].Partitions[s.p].ErrorCode = errorCode(errs[i])
	}
	return resp
}
