package api

// TxnOffsetCommit (key 28), v0–v4 (KIP-98; v3+ KIP-447).
//
// A transactional producer's offsets for a group, after AddOffsetsToTxn
// added the group's __consumer_offsets partition to its transaction.
// Partitions of topics this cluster does not have answer
// UNKNOWN_TOPIC_OR_PARTITION, metadata longer than
// offset.metadata.max.bytes OFFSET_METADATA_TOO_LARGE; the others are
// validated against the group (v3+: generation, member id and
// group.instance.id as OffsetCommit, KIP-447; v0–v2 carry none and any
// group takes them), written as one transactional batch of the producer
// (id and epoch) to __consumer_offsets with acks=all and answered then;
// they stay pending, invisible to OffsetFetch, until the producer's
// COMMIT or ABORT marker reaches the partition
// (group.Coordinator.CommitTxnOffsets, CompleteTxn). A group the
// coordinator does not know is created Empty, as Kafka. Coordinator
// errors are every partition's: COORDINATOR_NOT_AVAILABLE,
// NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, and INVALID_GROUP_ID for
// an empty group id; a producer epoch older than the partition has seen
// is INVALID_PRODUCER_EPOCH. v2+ carry the leader epoch. There are no
// ACLs, so no authorization errors.
//
// KIP-890 part 1, as Kafka 3.6+: unless the producer already has a
// transaction open on the group's __consumer_offsets partition, its
// transaction coordinator must say that partition is in the transaction
// (Config.TxnVerifier, AddOffsetsToTxn added it), so that a zombie's late
// commit cannot open a transaction there that nothing would end; a
// refusal is every partition's code, converted as Kafka's
// maybeConvertOffsetCommitError (NOT_ENOUGH_REPLICAS:
// COORDINATOR_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER: NOT_COORDINATOR).
// Unlike Kafka's verification guard, the check is not repeated at the
// append: a marker landing between the two lets the commit through.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/group"
	"github.com/samsa-kafka/samsa/internal/kafka"
)

func (h *Handler) txnOffsetCommit(ctx context.Context, req *kmsg.TxnOffsetCommitRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	gen, member, instance := req.Generation, req.MemberID, req.InstanceID
	if req.Version < 3 {
		gen, member, instance = -1, "", nil
	}
	var b commitBatch
	for i, rt := range req.Topics {
		st := kmsg.NewTxnOffsetCommitResponseTopic()
		st.Topic = rt.Topic
		t, known := h.Meta.Topic(rt.Topic)
		for _, rp := range rt.Partitions {
			sp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			sp.Partition = rp.Partition
			epoch := int32(-1)
			if req.Version >= 2 {
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
	if code := h.verifyTxnOffsets(ctx, req); code != 0 {
		for _, s := range b.slots {
			resp.Topics[s.t].Partitions[s.p].ErrorCode = code
		}
		return resp
	}
	errs := h.Groups.CommitTxnOffsets(ctx, req.Group, group.TxnProducer{ID: req.ProducerID, Epoch: req.ProducerEpoch},
		member, instance, gen, b.commits)
	for i, s := range b.slots {
		resp.Topics[s.t].Partitions[s.p].ErrorCode = errorCode(errs[i])
	}
	return resp
}

// verifyTxnOffsets is KIP-890 part 1 for the group's __consumer_offsets
// partition: 0, or the code every partition answers.
func (h *Handler) verifyTxnOffsets(ctx context.Context, req *kmsg.TxnOffsetCommitRequest) int16 {
	if h.TxnVerifier == nil || req.Group == "" {
		return 0
	}
	if err := h.Groups.Serves(req.Group); err != nil {
		return errorCode(err) // the coordinator's own answer first, as Kafka's validateGroupStatus
	}
	tp := kafka.TopicPartition{Topic: OffsetsTopic, Partition: h.Groups.PartitionFor(req.Group)}
	p := h.Partitions.Get(tp)
	if p == nil || p.HasOpenTxn(req.ProducerID) {
		return 0 // not led here: the coordinator answers NOT_COORDINATOR
	}
	code := h.TxnVerifier.VerifyPartition(ctx, req.TransactionalID, req.ProducerID, req.ProducerEpoch, tp)
	switch code {
	case kerr.NetworkException.Code:
		return kerr.CoordinatorLoadInProgress.Code
	case kerr.UnknownTopicOrPartition.Code, kerr.NotEnoughReplicas.Code, kerr.NotEnoughReplicasAfterAppend.Code:
		return kerr.CoordinatorNotAvailable.Code
	case kerr.NotLeaderForPartition.Code, kerr.KafkaStorageError.Code:
		return kerr.NotCoordinator.Code
	}
	return code
}
