package kafka

import (
	"sync"
	"sync/atomic"
)

// BrokerTopicStats are Kafka's BrokerTopicMetrics as counters, over all
// topics (kafka.server:type=BrokerTopicMetrics without a topic tag) and per
// topic (with topic=<name>): the record bytes a broker's clients and
// followers moved, counted where they move (the produce and fetch
// handlers, the replica fetchers) and read by the broker's metrics. As
// Kafka's, the replication bytes are counted over all topics only, and a
// topic's counters appear with its first bytes and go when the broker
// deletes its last partition of the topic (RemoveTopic).
type BrokerTopicStats struct {
	TopicStats                       // all topics
	ReplicationBytesIn  atomic.Int64 // ReplicationBytesInPerSec: record bytes the followers here appended
	ReplicationBytesOut atomic.Int64 // ReplicationBytesOutPerSec: record bytes of fetch responses to followers

	topics sync.Map // topic name → *TopicStats
}

// TopicStats are the counters kept per topic and over all topics.
type TopicStats struct {
	BytesIn       atomic.Int64 // BytesInPerSec: record bytes of client produce requests appended by leaders here (a retried batch the log holds is not)
	MessagesIn    atomic.Int64 // MessagesInPerSec: their records
	BytesOut      atomic.Int64 // BytesOutPerSec: record bytes of fetch responses to consumers
	TotalProduce  atomic.Int64 // TotalProduceRequestsPerSec: partitions of produce requests to partitions hosted here
	FailedProduce atomic.Int64 // FailedProduceRequestsPerSec: those answered with an error Kafka counts (api.failedProduce)
	TotalFetch    atomic.Int64 // TotalFetchRequestsPerSec: partitions hosted here read for fetch responses, consumers' and followers'
	FailedFetch   atomic.Int64 // FailedFetchRequestsPerSec: those answered with an error Kafka counts (api.failedFetch)
}

// Topic is topic's counters, created on first use.
func (s *BrokerTopicStats) Topic(topic string) *TopicStats {
	if t, ok := s.topics.Load(topic); ok {
		return t.(*TopicStats)
	}
	t, _ := s.topics.LoadOrStore(topic, new(TopicStats))
	return t.(*TopicStats)
}

// CountIn counts a client's batch appended by a leader here to the topic
// whose counters t are.
func (s *BrokerTopicStats) CountIn(t *TopicStats, bytes, records int) {
	s.BytesIn.Add(int64(bytes))
	s.MessagesIn.Add(int64(records))
	t.BytesIn.Add(int64(bytes))
	t.MessagesIn.Add(int64(records))
}

// CountProduce counts a partition of a produce request to the topic whose
// counters t are, and whether it failed.
func (s *BrokerTopicStats) CountProduce(t *TopicStats, failed bool) {
	s.TotalProduce.Add(1)
	t.TotalProduce.Add(1)
	if failed {
		s.FailedProduce.Add(1)
		t.FailedProduce.Add(1)
	}
}

// CountFetch counts n partitions of the topic whose counters t are read
// for a fetch response, failed of them with an error.
func (s *BrokerTopicStats) CountFetch(t *TopicStats, n, failed int) {
	s.TotalFetch.Add(int64(n))
	t.TotalFetch.Add(int64(n))
	if failed > 0 {
		s.FailedFetch.Add(int64(failed))
		t.FailedFetch.Add(int64(failed))
	}
}

// RemoveTopic forgets topic's counters (Kafka's removeMetrics when the
// broker no longer hosts the deleted topic).
func (s *BrokerTopicStats) RemoveTopic(topic string) { s.topics.Delete(topic) }

// EachTopic calls fn with each topic's counters, in no order.
func (s *BrokerTopicStats) EachTopic(fn func(topic string, t *TopicStats)) {
	s.topics.Range(func(k, v any) bool {
		fn(k.(string), v.(*TopicStats))
		return true
	})
}
