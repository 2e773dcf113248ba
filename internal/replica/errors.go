package replica

import "errors"

// Errors of the replica layer; internal/api maps each to a Kafka error code
// (named beside each).
var (
	// ErrNotLeader: this broker does not lead the partition
	// (NOT_LEADER_OR_FOLLOWER).
	ErrNotLeader = errors.New("replica: not leader for partition")
	// ErrNotFollower: a follower-only operation (replicated append,
	// truncation) on a partition this broker leads (NOT_LEADER_OR_FOLLOWER).
	ErrNotFollower = errors.New("replica: not follower for partition")
	// ErrNotAssigned: a follower fetch from a broker outside the partition's
	// replicas (Kafka answers NOT_LEADER_OR_FOLLOWER).
	ErrNotAssigned = errors.New("replica: fetching broker is not a replica of the partition")
	// ErrNotEnoughReplicas: acks=all produce while the ISR is smaller than
	// min.insync.replicas; nothing was appended (NOT_ENOUGH_REPLICAS).
	ErrNotEnoughReplicas = errors.New("replica: ISR smaller than min.insync.replicas")
	// ErrNotEnoughReplicasAfterAppend: the records were appended and are
	// committed, but the ISR shrank below min.insync.replicas meanwhile
	// (NOT_ENOUGH_REPLICAS_AFTER_APPEND).
	ErrNotEnoughReplicasAfterAppend = errors.New("replica: ISR smaller than min.insync.replicas after append")
	// ErrFencedLeaderEpoch: the request's current leader epoch is older than
	// this broker's (FENCED_LEADER_EPOCH).
	ErrFencedLeaderEpoch = errors.New("replica: leader epoch of the request is fenced")
	// ErrUnknownLeaderEpoch: the request's current leader epoch is newer than
	// this broker's (UNKNOWN_LEADER_EPOCH).
	ErrUnknownLeaderEpoch = errors.New("replica: leader epoch of the request is newer than this broker's")
	// ErrStaleLeaderEpoch: the decision's leader epoch is not newer than the
	// one the partition holds (Kafka answers STALE_CONTROLLER_EPOCH).
	ErrStaleLeaderEpoch = errors.New("replica: leader epoch is not newer than the current one")
	// ErrInconsistentTopicID: the partition or its log on disk belongs to
	// another topic with the same name (Kafka: INCONSISTENT_TOPIC_ID).
	ErrInconsistentTopicID = errors.New("replica: topic id differs from the partition's")
)
