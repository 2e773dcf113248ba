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
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/group"
)

func (h *Handler) offsetCommit(ctx context.Context, req *kmsg.OffsetCommitRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	gen, member := req.Generation, req.MemberID
	if req.Version == 0 {
		gen, member = -1, ""
	}
	var b commitBatch
	for i, rt := range req.Topics {
		st := kmsg.NewOffsetCommitResponseTopic()
		st.Topic = rt.Topic
		t, known := h.Meta.Topic(rt.Topic)
		for _, rp := range rt.Partitions {
			sp := kmsg.NewOffsetCommitResponseTopicPartition()
			sp.Partition = rp.Partition
			epoch := int32(-1)
			if req.Version >= 6 {
				epoch = rp.LeaderEpoch
			}
			sp.ErrorCode = h.addCommit(&b, commitSlot{i, len(st.Partitions)}, t, known,
				rp.Partition, rp.Offset, epoch, rp.Metadata)
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	if len(b.commits) == 0 {
		return resp
	}
	errs := h.Groups.CommitOffsets(ctx, req.Group, member, req.InstanceID, gen, b.commits)
	for i, s := range b.slots {
		resp.Topics[s.t].Partitions[s.p].ErrorCode = errorCode(errs[i])
	}
	return resp
}

// commitBatch is what an OffsetCommit or TxnOffsetCommit asks the
// coordinator to commit, and where each commit's answer goes in the
// response (topic and partition index).
type commitBatch struct {
	commits []group.Commit
	slots   []commitSlot
}

type commitSlot struct{ t, p int }

// addCommit checks one requested partition of topic t (known: the cluster
// has it): it is queued in b, answered at, and 0 returned, or the code it
// answers now is returned.
func (h *Handler) addCommit(b *commitBatch, at commitSlot, t TopicInfo, known bool, partition int32, offset int64,
	leaderEpoch int32, metadata *string) int16 {
	switch {
	case h.Groups == nil:
		return errorCode(errNoCoordinator)
	case !known || partition < 0 || int(partition) >= len(t.Partitions):
		return kerr.UnknownTopicOrPartition.Code
	}
	md := ""
	if metadata != nil {
		md = *metadata
	}
	b.commits = append(b.commits, group.Commit{TP: group.TP{Topic: t.Name, Partition: partition},
		Offset: offset, LeaderEpoch: leaderEpoch, Metadata: md})
	b.slots = append(b.slots, at)
	return 0
}
