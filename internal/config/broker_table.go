package config

import (
	"time"
)

// setting binds one Broker field to its synonym group, highest priority
// first. A nil field means Samsa accepts the keys but they have no effect.
type setting struct {
	keys  []key
	field func(*Broker) any
}

func bind(field func(*Broker) any, keys ...key) setting {
	return setting{keys: keys, field: field}
}

// accepted declares keys Samsa takes without effect (and without warning),
// each its own group. Having no effect, they change at run time wherever
// Kafka lets them (their update mode is Kafka's).
func accepted(keys ...key) []setting {
	out := make([]setting, len(keys))
	for i, k := range keys {
		k.mode = k.kafkaMode
		out[i] = setting{keys: []key{k}}
	}
	return out
}

var protocols = []string{"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"}

// serverSettings: identity, network, topics by default, the metadata store.
var serverSettings = []setting{
	bind(func(b *Broker) any { return &b.BrokerID },
		tInt("broker.id", "-1", nil, "The broker id for this server; -1 lets the caller choose.")),
	bind(func(b *Broker) any { return &b.BrokerRack },
		tStr("broker.rack", none, nil, "Rack of the broker, used for rack-aware replica assignment.")),
	bind(func(b *Broker) any { return &b.rawListeners },
		tStr("listeners", "PLAINTEXT://:9092", nil, "Comma-separated URIs NAME://host:port to listen on; an empty host binds all interfaces.").broker()),
	bind(func(b *Broker) any { return &b.rawAdvertised },
		tStr("advertised.listeners", none, nil, "Listeners published to clients, if different from listeners.").broker()),
	bind(func(b *Broker) any { return &b.rawProtocolMap },
		tStr("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL", nil,
			"Map between listener names and security protocols.").broker()),
	bind(func(b *Broker) any { return &b.InterBrokerListenerName },
		tStr("inter.broker.listener.name", none, nil, "Name of the listener brokers use to talk to each other."),
		tStr("security.inter.broker.protocol", "PLAINTEXT", oneOf("PLAINTEXT"), "Security protocol between brokers; only PLAINTEXT is supported.")),
	bind(func(b *Broker) any { return &b.ControlPlaneListenerName },
		tStr("control.plane.listener.name", none, nil, "Name of the listener the controller and brokers use for controller requests "+
			"(LeaderAndIsr, UpdateMetadata, StopReplica, AlterPartition, ControlledShutdown); unset: the inter-broker listener.")),
	bind(func(b *Broker) any { return &b.NumPartitions },
		tInt("num.partitions", "1", atLeast(1), "The default number of log partitions per topic.")),
	bind(func(b *Broker) any { return &b.DefaultReplicationFactor },
		tInt("default.replication.factor", "1", atLeast(1), "The default replication factor for automatically created topics.")),
	bind(func(b *Broker) any { return &b.AutoCreateTopicsEnable },
		tBool("auto.create.topics.enable", "true", "Enable auto creation of topic on the server.")),
	bind(func(b *Broker) any { return &b.DeleteTopicEnable },
		tBool("delete.topic.enable", "true", "Enables delete topic; deleting through the admin tool has no effect when off.")),
	bind(func(b *Broker) any { return &b.MessageMaxBytes },
		tInt("message.max.bytes", "1048588", atLeast(0), "The largest record batch size allowed.").cluster()),
	bind(func(b *Broker) any { return &b.SocketRequestMaxBytes },
		tInt("socket.request.max.bytes", "104857600", atLeast(1), "The maximum number of bytes in a socket request.")),
	bind(func(b *Broker) any { return &b.ConnectionsMaxIdle },
		ms("connections.max.idle.ms", "600000", nil, "Idle connections timeout.")),
	bind(func(b *Broker) any { return &b.MaxConnections },
		tInt("max.connections", "2147483647", atLeast(0), "Connections allowed on the broker over its listeners; at the limit a listener "+
			"waits before taking a new one, the inter-broker listener excepted.").cluster()),
	bind(func(b *Broker) any { return &b.MaxConnectionsPerIP },
		tInt("max.connections.per.ip", "2147483647", atLeast(0), "Connections allowed from one IP address; a new one beyond is closed.").cluster()),
	bind(func(b *Broker) any { return &b.MaxConnectionsPerIPOverrides },
		tStr("max.connections.per.ip.overrides", "", perIPOverrides, "Per-IP or host name overrides of max.connections.per.ip, as host:count,host:count.").cluster()),
	bind(func(b *Broker) any { return &b.MaxConnectionCreationRate },
		tInt("max.connection.creation.rate", "2147483647", atLeast(0), "Connections the broker takes on per second over its listeners, "+
			"the inter-broker listener excepted; over it a listener waits before taking the next.").cluster()),
	bind(func(b *Broker) any { return &b.FetchMaxBytes },
		tInt("fetch.max.bytes", "57671680", atLeast(1024), "The maximum number of bytes returned for a fetch request.")),
	bind(func(b *Broker) any { return &b.MetadataStoreConnect },
		tStr("metadata.store.connect", "", nil, "Samsa: comma-separated endpoints of an external metadata store; empty runs the embedded store.")),
	bind(func(b *Broker) any { return &b.MetadataStoreSessionTimeout },
		msInt("metadata.store.session.timeout.ms", "6000", atLeast(2000), "Samsa: session (lease) timeout with the metadata store.")),
	bind(func(b *Broker) any { return &b.MetadataStoreMaxTxnOps },
		tInt("metadata.store.max.txn.ops", "128", atLeast(4), "Samsa: the external metadata store's --max-txn-ops (etcd's default is 128; `samsa store` and the embedded store allow 2048).")),
	bind(func(b *Broker) any { return &b.ZooKeeperConnect },
		tStr("zookeeper.connect", "", nil, "ZooKeeper ensemble as host:port[,host:port...][/chroot] to keep the metadata in (the chroot is created if missing); exclusive with metadata.store.connect.")),
	bind(func(b *Broker) any { return &b.ZooKeeperSessionTimeout },
		msInt("zookeeper.session.timeout.ms", "18000", atLeast(1000), "ZooKeeper session timeout: a broker whose session expires loses its registration.")),
	bind(func(b *Broker) any { return &b.ZooKeeperConnectionTimeout },
		msInt("zookeeper.connection.timeout.ms", none, atLeast(1), "Wait for the first ZooKeeper session at startup; unset: zookeeper.session.timeout.ms.")),
	bind(func(b *Broker) any { return &b.ZooKeeperMaxInFlight },
		tInt("zookeeper.max.in.flight.requests", "10", atLeast(1), "ZooKeeper requests a listing or a watch's walk pipelines at once.")),
	bind(func(b *Broker) any { return &b.MetadataStoreDataDir },
		tStr("metadata.store.data.dir", "", nil, "Samsa: data directory of the embedded metadata store; empty lets the caller decide.")),
	bind(func(b *Broker) any { return &b.MetricsListener },
		tStr("metrics.listener", "", hostPort, "Samsa: host:port on which `samsa server` serves the broker's Prometheus metrics at /metrics "+
			"(requests by API and by phase, as Kafka's RequestMetrics; connections; the Go runtime and the process); empty serves none.")),
}

// logSettings: segments, retention, flushing, indexes, message format.
var logSettings = []setting{
	bind(func(b *Broker) any { return &b.LogDirs },
		tStr("log.dirs", none, nil, "Comma-separated directories where log data is stored; log.dir is used when unset."),
		tStr("log.dir", "/tmp/kafka-logs", nil, "The directory in which the log data is kept (supplemental for log.dirs).")),
	bind(func(b *Broker) any { return &b.LogSegmentBytes },
		tInt("log.segment.bytes", "1073741824", atLeast(14), "The maximum size of a single log file.").cluster()),
	bind(func(b *Broker) any { return &b.LogRoll },
		ms("log.roll.ms", none, atLeast(1), "Maximum time before a new log segment is rolled out (in milliseconds).").cluster(),
		tInt("log.roll.hours", "168", atLeast(1), "Maximum time before a new log segment is rolled out (in hours).").in(time.Hour)),
	bind(func(b *Broker) any { return &b.LogRollJitter },
		ms("log.roll.jitter.ms", none, atLeast(0), "Maximum jitter subtracted from segment roll time (in milliseconds).").cluster(),
		tInt("log.roll.jitter.hours", "0", atLeast(0), "Maximum jitter subtracted from segment roll time (in hours).").in(time.Hour)),
	bind(func(b *Broker) any { return &b.LogRetention },
		ms("log.retention.ms", none, nil, "Time to keep a log file before deleting it (in milliseconds); -1: no limit.").cluster(),
		tInt("log.retention.minutes", none, nil, "Time to keep a log file before deleting it (in minutes).").in(time.Minute),
		tInt("log.retention.hours", "168", nil, "Time to keep a log file before deleting it (in hours).").in(time.Hour)),
	bind(func(b *Broker) any { return &b.LogRetentionBytes },
		tLong("log.retention.bytes", "-1", nil, "The maximum size of the log before deleting it; -1: no limit.").cluster()),
	bind(func(b *Broker) any { return &b.LogRetentionCheckInterval },
		ms("log.retention.check.interval.ms", "300000", atLeast(1), "How often the log cleaner checks whether any log is eligible for deletion.")),
	bind(func(b *Broker) any { return &b.LogSegmentDeleteDelay },
		ms("log.segment.delete.delay.ms", "60000", atLeast(0), "Time to wait before deleting a file from the filesystem.").cluster(),
		ms("file.delete.delay.ms", none, atLeast(0), "Samsa: alias of log.segment.delete.delay.ms (the topic-level name).")),
	bind(func(b *Broker) any { return &b.LogFlushIntervalMessages },
		tLong("log.flush.interval.messages", longMax, atLeast(1), "Number of messages accumulated on a log partition before they are flushed to disk.").cluster()),
	bind(func(b *Broker) any { return &b.LogFlushInterval },
		ms("log.flush.interval.ms", none, nil, "Maximum time a message stays in memory before being flushed; unset: log.flush.scheduler.interval.ms.").cluster(),
		ms("log.flush.scheduler.interval.ms", longMax, nil, "How often the log flusher checks whether any log needs flushing.")),
	bind(func(b *Broker) any { return &b.LogFlushSchedulerInterval },
		ms("log.flush.scheduler.interval.ms", longMax, nil, "How often the log flusher checks whether any log needs flushing.")),
	bind(func(b *Broker) any { return &b.LogIndexIntervalBytes },
		tInt("log.index.interval.bytes", "4096", atLeast(0), "The interval with which an entry is added to the offset index.").cluster()),
	bind(func(b *Broker) any { return &b.LogIndexSizeMaxBytes },
		tInt("log.index.size.max.bytes", "10485760", atLeast(4), "The maximum size in bytes of the offset index.").cluster()),
	bind(func(b *Broker) any { return &b.LogMessageTimestampType },
		tStr("log.message.timestamp.type", "CreateTime", oneOf("CreateTime", "LogAppendTime"), "Whether record timestamps are the producer's or the append time.").cluster()),
	bind(func(b *Broker) any { return &b.LogCleanupPolicy },
		tList("log.cleanup.policy", "delete", listOf("delete", "compact"), "The default cleanup policy for segments beyond the retention window.").cluster()),
	bind(func(b *Broker) any { return &b.LogCleanerEnable },
		tBool("log.cleaner.enable", "true", "Enable the log cleaner process.")),
	bind(func(b *Broker) any { return &b.LogCleanerThreads },
		tInt("log.cleaner.threads", "1", atLeast(0), "The number of background threads to use for log cleaning.").cluster()),
	bind(func(b *Broker) any { return &b.LogCleanerDedupeBufferSize },
		tLong("log.cleaner.dedupe.buffer.size", "134217728", nil, "The total memory used for log deduplication across all cleaner threads.").cluster()),
	bind(func(b *Broker) any { return &b.LogCleanerIOBufferSize },
		tInt("log.cleaner.io.buffer.size", "524288", atLeast(0), "The total memory used for log cleaner I/O buffers across all cleaner threads.").cluster()),
	bind(func(b *Broker) any { return &b.LogCleanerIOBufferLoadFactor },
		tDouble("log.cleaner.io.buffer.load.factor", "0.9", nil, "Log cleaner dedupe buffer load factor. The percentage full the dedupe buffer can become. A higher value will allow more log to be cleaned at once but will lead to more hash collisions.").cluster()),
	bind(func(b *Broker) any { return &b.LogCleanerIOMaxBytesPerSecond },
		tDouble("log.cleaner.io.max.bytes.per.second", "1.7976931348623157E308", nil, "The log cleaner will be throttled so that the sum of its read and write i/o will be less than this value on average.").cluster()),
	bind(func(b *Broker) any { return &b.LogCleanerBackoff },
		ms("log.cleaner.backoff.ms", "15000", atLeast(0), "The amount of time to sleep when there are no logs to clean.").cluster()),
	// No effect, and kept read-only although Kafka's is cluster-wide.
	{keys: []key{tInt("num.recovery.threads.per.data.dir", "1", atLeast(1), "Threads per data directory for log recovery at startup and flushing at shutdown (no effect in Samsa).").kafka(clusterWide)}},
	bind(func(b *Broker) any { return &b.HighWatermarkCheckpoint },
		ms("replica.high.watermark.checkpoint.interval.ms", "5000", nil, "How often the high watermark is saved to disk.")),
	bind(func(b *Broker) any { return &b.ProducerIDExpiration },
		msInt("producer.id.expiration.ms", "86400000", atLeast(1), "The time a partition keeps an idempotent producer's state after its last write.").kafka(clusterWide)),
	bind(func(b *Broker) any { return &b.ProducerIDExpirationCheck },
		msInt("producer.id.expiration.check.interval.ms", "600000", atLeast(1), "How often idle producer ids are expired.")),
}

var compressionTypes = []string{"uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"}

// logExtraKeys are broker-side synonyms of topic configs, with no Broker
// field: they act through the topic configs they default (the
// log.cleaner.* ones through delete.retention.ms, min/max.compaction.lag.ms
// and min.cleanable.dirty.ratio), or not at all yet.
var logExtraKeys = accepted(
	ms("log.cleaner.delete.retention.ms", "86400000", atLeast(0), "How long delete records (tombstones) are retained.").cluster(),
	ms("log.cleaner.min.compaction.lag.ms", "0", atLeast(0), "The minimum time a message remains uncompacted in the log.").cluster(),
	ms("log.cleaner.max.compaction.lag.ms", longMax, atLeast(1), "The maximum time a message remains ineligible for compaction.").cluster(),
	tDouble("log.cleaner.min.cleanable.ratio", "0.5", between(0, 1), "The minimum ratio of dirty log to total log for a log to be eligible for cleaning.").cluster(),
	tStr("compression.type", "producer", oneOf(compressionTypes...), "Final compression type for a topic; producer keeps the producer's codec.").cluster(),
	tInt("compression.gzip.level", "-1", either(oneOf("-1"), between(1, 9)), "The compression level for gzip (no effect in Samsa: the codec's default).").cluster(),
	tInt("compression.lz4.level", "9", between(1, 17), "The compression level for lz4 (no effect in Samsa: the codec's default).").cluster(),
	tInt("compression.zstd.level", "3", between(-131072, 22), "The compression level for zstd (no effect in Samsa: the codec's default).").cluster(),
	tStr("log.message.format.version", "3.0-IV1", nil, "Deprecated message format version."),
	ms("log.message.timestamp.difference.max.ms", longMax, atLeast(0), "Deprecated: maximum difference between record and broker timestamps.").cluster(),
	ms("log.message.timestamp.before.max.ms", longMax, atLeast(0), "Maximum allowed time a record timestamp may lag the broker's time.").cluster(),
	ms("log.message.timestamp.after.max.ms", longMax, atLeast(0), "Maximum allowed time a record timestamp may lead the broker's time.").cluster(),
	tBool("log.message.downconversion.enable", "true", "Whether down-conversion of message formats is enabled.").cluster(),
	tBool("log.preallocate", "false", "Preallocate the file when creating a new segment (no effect in Samsa).").cluster(),
	ms("log.local.retention.ms", "-2", atLeast(-2), "Tiered storage: local retention time; -2: use log.retention.ms.").cluster(),
	tLong("log.local.retention.bytes", "-2", atLeast(-2), "Tiered storage: local retention size; -2: use log.retention.bytes.").cluster(),
)

// quotaKeys are the sampled rate windows of Kafka's ClientQuotaManager
// (broker/quotas.go).
var quotaKeys = []setting{
	bind(func(b *Broker) any { return &b.QuotaWindowNum },
		tInt("quota.window.num", "11", atLeast(1), "The number of samples to retain in memory for client quotas.")),
	bind(func(b *Broker) any { return &b.QuotaWindowSize },
		tInt("quota.window.size.seconds", "1", atLeast(1), "The time span of each sample for client quotas.").in(time.Second)),
}
