package config

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"
)

// Broker is a broker's static configuration. Every field comes from the key
// named in its comment (or that key's synonym group, highest priority first);
// Load fills it from Kafka's defaults plus the explicitly set properties.
type Broker struct {
	BrokerID                int32      // broker.id; -1 (Kafka's default) is left for the caller to decide
	BrokerRack              string     // broker.rack; "" when unset
	Listeners               []Listener // listeners
	AdvertisedListeners     []Listener // advertised.listeners, defaulting to listeners; empty Host: caller fills
	InterBrokerListenerName string     // inter.broker.listener.name, default PLAINTEXT
	LogDirs                 []string   // log.dirs over log.dir

	// control.plane.listener.name; "": the controller uses the inter-broker listener
	ControlPlaneListenerName string

	NumPartitions            int32 // num.partitions
	DefaultReplicationFactor int32 // default.replication.factor
	AutoCreateTopicsEnable   bool  // auto.create.topics.enable
	DeleteTopicEnable        bool  // delete.topic.enable

	LogSegmentBytes            int32         // log.segment.bytes
	LogRoll                    time.Duration // log.roll.ms over log.roll.hours
	LogRollJitter              time.Duration // log.roll.jitter.ms over log.roll.jitter.hours
	LogRetention               time.Duration // log.retention.ms/.minutes/.hours; negative: unlimited
	LogRetentionBytes          int64         // log.retention.bytes; -1: unlimited
	LogRetentionCheckInterval  time.Duration // log.retention.check.interval.ms
	LogSegmentDeleteDelay      time.Duration // log.segment.delete.delay.ms (topic: file.delete.delay.ms)
	LogFlushIntervalMessages   int64         // log.flush.interval.messages
	LogFlushInterval           time.Duration // log.flush.interval.ms over log.flush.scheduler.interval.ms; Unlimited: never
	LogFlushSchedulerInterval  time.Duration // log.flush.scheduler.interval.ms
	ProducerIDExpiration       time.Duration // producer.id.expiration.ms
	QuotaWindowNum             int32         // quota.window.num
	QuotaWindowSize            time.Duration // quota.window.size.seconds
	ProducerIDExpirationCheck  time.Duration // producer.id.expiration.check.interval.ms
	LogIndexIntervalBytes      int32         // log.index.interval.bytes
	LogIndexSizeMaxBytes       int32         // log.index.size.max.bytes
	LogMessageTimestampType    string        // log.message.timestamp.type: CreateTime or LogAppendTime
	LogCleanupPolicy           []string      // log.cleanup.policy
	LogCleanerEnable           bool          // log.cleaner.enable
	LogCleanerThreads          int32         // log.cleaner.threads
	LogCleanerDedupeBufferSize int64         // log.cleaner.dedupe.buffer.size
	LogCleanerIOBufferSize     int32         // log.cleaner.io.buffer.size
	// log.cleaner.io.max.bytes.per.second (Double.MAX_VALUE: unlimited)
	LogCleanerIOMaxBytesPerSecond float64
	LogCleanerIOBufferLoadFactor  float64       // log.cleaner.io.buffer.load.factor
	LogCleanerBackoff             time.Duration // log.cleaner.backoff.ms
	HighWatermarkCheckpoint       time.Duration // replica.high.watermark.checkpoint.interval.ms
	MessageMaxBytes               int32         // message.max.bytes
	SocketRequestMaxBytes         int32         // socket.request.max.bytes
	ConnectionsMaxIdle            time.Duration // connections.max.idle.ms
	MaxConnections                int32         // max.connections
	MaxConnectionsPerIP           int32         // max.connections.per.ip
	MaxConnectionsPerIPOverrides  string        // max.connections.per.ip.overrides: host:count,… (ConnectionsPerIPOverrides)
	MaxConnectionCreationRate     int32         // max.connection.creation.rate
	FetchMaxBytes                 int32         // fetch.max.bytes
	MinInsyncReplicas             int32         // min.insync.replicas
	UncleanLeaderElection         bool          // unclean.leader.election.enable
	ReplicaLagTimeMax             time.Duration // replica.lag.time.max.ms
	ReplicaFetchMaxBytes          int32         // replica.fetch.max.bytes
	ReplicaFetchWaitMax           time.Duration // replica.fetch.wait.max.ms
	ReplicaFetchMinBytes          int32         // replica.fetch.min.bytes
	ReplicaFetchBackoff           time.Duration // replica.fetch.backoff.ms
	ReplicaFetchResponseMax       int32         // replica.fetch.response.max.bytes
	ReplicaSocketTimeout          time.Duration // replica.socket.timeout.ms
	NumReplicaFetchers            int32         // num.replica.fetchers
	ControllerSocketTimeout       time.Duration // controller.socket.timeout.ms
	ControlledShutdownEnable      bool          // controlled.shutdown.enable
	ControlledShutdownRetries     int32         // controlled.shutdown.max.retries
	ControlledShutdownBackoff     time.Duration // controlled.shutdown.retry.backoff.ms
	AutoLeaderRebalanceEnable     bool          // auto.leader.rebalance.enable
	LeaderImbalancePercentage     int32         // leader.imbalance.per.broker.percentage
	LeaderImbalanceCheck          time.Duration // leader.imbalance.check.interval.seconds
	OffsetsTopicReplication       int16         // offsets.topic.replication.factor
	OffsetsTopicNumPartitions     int32         // offsets.topic.num.partitions
	OffsetsTopicSegmentBytes      int32         // offsets.topic.segment.bytes
	OffsetsRetention              time.Duration // offsets.retention.minutes
	OffsetsRetentionCheck         time.Duration // offsets.retention.check.interval.ms
	OffsetsCommitTimeout          time.Duration // offsets.commit.timeout.ms
	OffsetMetadataMaxBytes        int32         // offset.metadata.max.bytes
	GroupInitialRebalanceDelay    time.Duration // group.initial.rebalance.delay.ms
	GroupMinSessionTimeout        time.Duration // group.min.session.timeout.ms
	GroupMaxSessionTimeout        time.Duration // group.max.session.timeout.ms
	GroupMaxSize                  int32         // group.max.size

	TxnStateReplication    int16         // transaction.state.log.replication.factor
	TxnStateMinISR         int32         // transaction.state.log.min.isr
	TxnStateNumPartitions  int32         // transaction.state.log.num.partitions
	TxnStateSegmentBytes   int32         // transaction.state.log.segment.bytes
	TxnMaxTimeout          time.Duration // transaction.max.timeout.ms
	TxnIDExpiration        time.Duration // transactional.id.expiration.ms
	TxnAbortCheckInterval  time.Duration // transaction.abort.timed.out.transaction.cleanup.interval.ms
	TxnExpireCheckInterval time.Duration // transaction.remove.expired.transaction.cleanup.interval.ms

	MetadataStoreConnect        string        // metadata.store.connect; "": embedded store
	MetadataStoreSessionTimeout time.Duration // metadata.store.session.timeout.ms
	MetadataStoreDataDir        string        // metadata.store.data.dir; "": caller decides
	MetadataStoreMaxTxnOps      int32         // metadata.store.max.txn.ops

	MetricsListener string // metrics.listener; "": no metrics served

	ZooKeeperConnect           string        // zookeeper.connect; "": not on ZooKeeper
	ZooKeeperSessionTimeout    time.Duration // zookeeper.session.timeout.ms
	ZooKeeperConnectionTimeout time.Duration // zookeeper.connection.timeout.ms; 0: the session timeout
	ZooKeeperMaxInFlight       int32         // zookeeper.max.in.flight.requests

	rawListeners, rawAdvertised, rawProtocolMap string

	// explicit holds every known key that was set, with its normalized value.
	explicit map[string]string
	// dynDefault and dynBroker are the validated dynamic layers
	// (/config/brokers/<default> and /config/brokers/<id>); nil for none.
	dynDefault, dynBroker map[string]string
}

// Explicit returns a copy of the keys that were set explicitly (normalized
// values), e.g. for logging the effective configuration.
func (b *Broker) Explicit() map[string]string {
	out := make(map[string]string, len(b.explicit))
	for k, v := range b.explicit {
		out[k] = v
	}
	return out
}

// ignoredPrefixes are families of Kafka keys accepted without effect or
// warning (security, ZooKeeper, internal topics, metrics).
var ignoredPrefixes = []string{
	"zookeeper.", "transaction.state.log.", "offsets.topic.", "ssl.", "sasl.",
	"listener.name.", "metric",
}

// Load builds a Broker from explicitly set properties over Kafka's defaults.
// Unknown keys yield one warning each; invalid values yield an error naming
// key and value (all of them, joined), wrapping ErrInvalidConfig.
func Load(props map[string]string) (*Broker, []string, error) {
	b := &Broker{explicit: map[string]string{}}
	var warnings []string
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(props)) {
		k, ok := brokerKeys[name]
		if !ok {
			if !hasIgnoredPrefix(name) {
				warnings = append(warnings, fmt.Sprintf("unknown config %q", name))
			}
			continue
		}
		v, err := k.normalize(props[name])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		b.explicit[name] = v
	}
	if len(errs) > 0 {
		return nil, warnings, errors.Join(errs...)
	}
	if err := b.resolve(); err != nil {
		return nil, warnings, err
	}
	return b, warnings, nil
}

// resolve fills every field from the layers and checks cross-key rules.
func (b *Broker) resolve() error {
	for _, s := range brokerSettings {
		if s.field == nil {
			continue
		}
		if k, v, ok := b.effective(s.keys); ok {
			if err := assign(s.field(b), k, v); err != nil {
				return err
			}
		}
	}
	return b.finish()
}

// LoadFile reads a server.properties file and applies overrides ("k=v", as
// given to --override) on top; overrides win.
func LoadFile(path string, overrides []string) (*Broker, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	props, err := ParseProperties(f)
	if err != nil {
		return nil, nil, err
	}
	for _, o := range overrides {
		k, v, err := ParseOverride(o)
		if err != nil {
			return nil, nil, err
		}
		props[k] = v
	}
	return Load(props)
}

// ParseOverride splits an override ("k=v", as given to --override): the
// key trimmed, the value as it is.
func ParseOverride(o string) (key, value string, err error) {
	k, v, ok := strings.Cut(o, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return "", "", errorf("invalid override %q: want key=value", o)
	}
	return strings.TrimSpace(k), v, nil
}

// effective picks the value of a synonym group: the first key set in any
// layer (dynamic per-broker over dynamic default over static, as Kafka merges
// them before applying synonym precedence), else the first key with a
// non-null default.
func (b *Broker) effective(keys []key) (k key, v string, ok bool) {
	for _, k := range keys {
		if v, _, ok := b.set(k.name); ok {
			return k, v, true
		}
	}
	for _, k := range keys {
		if k.hasDefault() {
			return k, k.dflt, true
		}
	}
	return key{}, "", false
}

// finish parses listeners and applies Kafka's cross-key requirements.
func (b *Broker) finish() error {
	if err := b.parseListeners(); err != nil {
		return err
	}
	if len(b.LogDirs) == 0 {
		return invalid("log.dirs", b.explicitOr("log.dirs"), "at least one log directory must be defined via log.dirs or log.dir")
	}
	if b.ZooKeeperConnect != "" && b.MetadataStoreConnect != "" {
		return invalid("zookeeper.connect", b.ZooKeeperConnect,
			"set either zookeeper.connect (ZooKeeper) or metadata.store.connect (etcd), not both")
	}
	if _, _, ok := b.set("metadata.store.session.timeout.ms"); b.ZooKeeperConnect != "" && !ok {
		// On ZooKeeper the broker's session is Kafka's.
		b.MetadataStoreSessionTimeout = b.ZooKeeperSessionTimeout
	}
	if b.ReplicaFetchWaitMax > b.ReplicaSocketTimeout {
		return invalid("replica.fetch.wait.max.ms", b.explicitOr("replica.fetch.wait.max.ms"),
			"must not exceed replica.socket.timeout.ms")
	}
	if b.ReplicaFetchWaitMax > b.ReplicaLagTimeMax {
		return invalid("replica.fetch.wait.max.ms", b.explicitOr("replica.fetch.wait.max.ms"),
			"must not exceed replica.lag.time.max.ms")
	}
	return nil
}

// explicitOr returns a key's value in the highest layer, or its default.
func (b *Broker) explicitOr(name string) string {
	if v, _, ok := b.set(name); ok {
		return v
	}
	return brokerKeys[name].dflt
}

func hasIgnoredPrefix(name string) bool {
	for _, p := range ignoredPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
