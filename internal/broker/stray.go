package broker

// Stray logs (KRaft's, KAFKA-14616): a broker that was down while its
// replica of a partition was reassigned away keeps that partition's log on
// its disk: the controller completes the move without waiting for the
// removed replica's StopReplica, as Kafka's does. And a snapshot taken
// while a topic's deletion is under way may lack the topic (its
// partitions' states go first) while a broker still holds a log of it.
//
// The controller's full metadata snapshot (the UpdateMetadata marked full
// that a broker gets when it registers, and every live broker at a
// failover) lists every partition with its replicas, so on one the broker
// compares it with the logs it holds but does not host: a log whose
// partition does not list this broker among its replicas, or whose topic
// the snapshot does not have, is stray (a log of another topic id than a
// LeaderAndIsr names is caught then: replica.Manager). A hosted partition
// is never stray here: the controller's LeaderAndIsr stands until its
// StopReplica. As KRaft brokers do, a stray log's directory is renamed
// <topic>-<partition>.<uuid>-stray, with a warning, and removed after
// log.segment.delete.delay.ms (storage.MarkStray); its data is a copy of a
// partition whose replicas hold it, or of a topic being deleted.
// (ZooKeeper-era brokers migrating to KRaft keep them for the operator,
// KAFKA-15605.)

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// strayLogs returns the logs of unhosted that the full snapshot full does
// not give to broker nodeID.
func strayLogs(nodeID int32, full *kmsg.UpdateMetadataRequest, unhosted []kafka.TopicPartition) []kafka.TopicPartition {
	if len(unhosted) == 0 {
		return nil
	}
	topics := make(map[string]*kmsg.UpdateMetadataRequestTopicState, len(full.TopicStates))
	for i := range full.TopicStates {
		topics[full.TopicStates[i].Topic] = &full.TopicStates[i]
	}
	var stray []kafka.TopicPartition
	var mine map[int32]bool // of the topic last looked at
	last := ""
	for _, tp := range unhosted {
		if tp.Topic != last || mine == nil {
			last, mine = tp.Topic, map[int32]bool{}
			if t := topics[tp.Topic]; t != nil {
				for _, ps := range t.PartitionStates {
					if slices.Contains(ps.Replicas, nodeID) {
						mine[ps.Partition] = true
					}
				}
			}
		}
		if !mine[tp.Partition] {
			stray = append(stray, tp)
		}
	}
	return stray
}

// setAsideStrays marks stray the logs that a full snapshot does not give
// to this broker. The control plane's lock is held: no LeaderAndIsr hosts
// a partition meanwhile.
func (c *controlPlane) setAsideStrays(full *kmsg.UpdateMetadataRequest) {
	var unhosted []kafka.TopicPartition
	for _, tp := range c.logs.Partitions() { // sorted: a topic's partitions together
		if c.replicas.Get(tp) == nil {
			unhosted = append(unhosted, tp)
		}
	}
	stray := strayLogs(c.nodeID, full, unhosted)
	if len(stray) == 0 {
		return
	}
	if err := c.logs.MarkStray(stray, "the controller's full metadata does not make this broker a replica of its partition"); err != nil {
		c.log.Warn("setting stray logs aside", "err", err)
	}
}
