package kafka

import "sync/atomic"

// BrokerTopicStats are Kafka's BrokerTopicMetrics over all topics
// (kafka.server:type=BrokerTopicMetrics without a topic tag, as counters):
// the record bytes a broker's clients and followers moved, counted where
// they move (the produce and fetch handlers, the replica fetchers) and
// read by the broker's metrics.
type BrokerTopicStats struct {
	BytesIn             atomic.Int64 // BytesInPerSec: record bytes of client produce requests appended by leaders here (a retried batch the log holds is not)
	MessagesIn          atomic.Int64 // MessagesInPerSec: their records
	BytesOut            atomic.Int64 // BytesOutPerSec: record bytes of fetch responses to consumers
	ReplicationBytesIn  atomic.Int64 // ReplicationBytesInPerSec: record bytes the followers here appended
	ReplicationBytesOut atomic.Int64 // ReplicationBytesOutPerSec: record bytes of fetch responses to followers
}
