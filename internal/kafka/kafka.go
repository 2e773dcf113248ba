// Package kafka is the vocabulary every layer shares for naming partitions:
// TopicPartition, the per-topic tables that the broker's layers keep their
// partitions in (Table holds pointers, ValueTable and Partitions hold
// values in place), and Kafka's sentinel values for partition state. It is
// a leaf: it imports nothing of Samsa's, and every package may import it.
//
// Invariants of the tables: a partition is in one place only (its topic's
// slice at its number, or aside in a map when far or negative); a topic
// whose last partition is deleted is forgotten. Goroutines: none; the
// tables are not safe for concurrent use (see each type).
package kafka

import "strconv"

// TopicPartition names one partition, as Kafka's TopicPartition does.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// String is Kafka's "<topic>-<partition>", also the partition's directory
// name.
func (p TopicPartition) String() string {
	return p.Topic + "-" + strconv.FormatInt(int64(p.Partition), 10)
}

// LeaderDuringDelete is the leader a partition is given while its topic is
// being deleted (Kafka's LeaderAndIsr.LeaderDuringDelete): LeaderAndIsr and
// UpdateMetadata carry it so that brokers stop serving the partition.
const LeaderDuringDelete = -2

// EpochDuringDelete is the leader epoch of a StopReplica that deletes a
// partition of a topic being deleted (Kafka's
// LeaderAndIsr.EpochDuringDelete): the broker deletes whatever epoch it
// holds.
const EpochDuringDelete = -2
