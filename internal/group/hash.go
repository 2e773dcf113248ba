package group

import "github.com/samsa-kafka/samsa/internal/kafka"

// PartitionFor is the __consumer_offsets partition of a group, as Kafka's
// GroupMetadataManager.partitionFor (kafka.CoordinatorPartition, shared
// with the transaction coordinator).
func PartitionFor(groupID string, partitions int32) int32 {
	return kafka.CoordinatorPartition(groupID, partitions)
}
