// Configuration and the types the fetcher is driven with: the follower
// partition interface (implemented by *replica.Partition) and the targets
// AddPartitions receives. Zero Config values take Kafka's replica.fetch.*
// defaults.
package fetcher

import (
	"log/slog"
	"time"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/storage"
)

// Partition is a follower replica's log as the fetcher drives it.
type Partition interface {
	LogEndOffset() int64
	LogStartOffset() int64
	// LatestEpoch is the latest leader epoch in the epoch cache; ok is
	// false when the cache is empty.
	LatestEpoch() (epoch int32, ok bool)
	// EndOffsetForEpoch is Kafka's LeaderEpochFileCache.endOffsetFor.
	EndOffsetForEpoch(epoch int32) (leaderEpoch int32, endOffset int64)
	AppendAsFollower(records []byte) (storage.AppendInfo, error)
	TruncateTo(offset int64) error
	TruncateFullyAndStartAt(offset int64) error
	SetFollowerHighWatermark(leaderHW int64)
	// RaiseLogStartOffset raises the log start offset towards the
	// leader's (Kafka's follower maybeIncrementLogStartOffset), no further
	// than the high watermark.
	RaiseLogStartOffset(leaderLogStart int64)
}

// Target says which broker leads a partition, at which leader epoch.
type Target struct {
	TP          kafka.TopicPartition
	TopicID     [16]byte
	Leader      int32
	LeaderEpoch int32
	Partition   Partition
}

// Config configures a Manager.
type Config struct {
	NodeID int32 // this broker: the ReplicaID of every request
	// BrokerAddr resolves a broker id to "host:port"; called before every
	// request, so a leader restarted on a new address is found.
	BrokerAddr       func(id int32) (addr string, ok bool)
	MaxBytes         int32         // replica.fetch.max.bytes (per partition)
	ResponseMaxBytes int32         // replica.fetch.response.max.bytes
	MinBytes         int32         // replica.fetch.min.bytes
	MaxWait          time.Duration // replica.fetch.wait.max.ms
	Backoff          time.Duration // replica.fetch.backoff.ms
	// SocketTimeout is replica.socket.timeout.ms: how long a request may
	// go unanswered beyond MaxWait before the connection is dropped and
	// the request sent again on a new one (a leader cut off, or its
	// answer stuck in TCP retransmission), and the most a connection to
	// the leader may take to set up (at most dialTimeout).
	SocketTimeout time.Duration
	NumFetchers   int          // num.replica.fetchers, per source broker (below 1: 1); see Manager.Resize
	Logger        *slog.Logger // nil: discard
	// Stats counts the record bytes appended (ReplicationBytesIn); nil:
	// counted for nobody.
	Stats *kafka.BrokerTopicStats
}

// Kafka's defaults.
const (
	DefaultMaxBytes         = 1 << 20
	DefaultResponseMaxBytes = 10 << 20
	DefaultMinBytes         = 1
	DefaultMaxWait          = 500 * time.Millisecond
	DefaultBackoff          = time.Second
	DefaultSocketTimeout    = 30 * time.Second
)

func (c Config) withDefaults() Config {
	if c.MaxBytes <= 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.ResponseMaxBytes <= 0 {
		c.ResponseMaxBytes = DefaultResponseMaxBytes
	}
	if c.MinBytes <= 0 {
		c.MinBytes = DefaultMinBytes
	}
	if c.MaxWait <= 0 {
		c.MaxWait = DefaultMaxWait
	}
	if c.Backoff <= 0 {
		c.Backoff = DefaultBackoff
	}
	if c.SocketTimeout <= 0 {
		c.SocketTimeout = DefaultSocketTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Stats == nil {
		c.Stats = &kafka.BrokerTopicStats{}
	}
	if c.BrokerAddr == nil {
		c.BrokerAddr = func(int32) (string, bool) { return "", false }
	}
	return c
}
