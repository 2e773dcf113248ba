package config

import "time"

// clusterSettings: replication, controller, leader balance, groups.
var clusterSettings = []setting{
	bind(func(b *Broker) any { return &b.MinInsyncReplicas },
		tInt("min.insync.replicas", "1", atLeast(1), "Minimum replicas that must acknowledge a write when acks=all.").cluster()),
	bind(func(b *Broker) any { return &b.UncleanLeaderElection },
		tBool("unclean.leader.election.enable", "false", "Allow replicas not in the ISR to be elected leader as a last resort, at the risk of data loss.").cluster()),
	bind(func(b *Broker) any { return &b.ReplicaLagTimeMax },
		ms("replica.lag.time.max.ms", "30000", nil, "A follower that has not caught up for this long is removed from the ISR.")),
	bind(func(b *Broker) any { return &b.ReplicaFetchMaxBytes },
		tInt("replica.fetch.max.bytes", "1048576", atLeast(0), "The number of bytes of messages to attempt to fetch for each partition.")),
	bind(func(b *Broker) any { return &b.ReplicaFetchWaitMax },
		msInt("replica.fetch.wait.max.ms", "500", nil, "The maximum wait time for each fetcher request issued by follower replicas.")),
	bind(func(b *Broker) any { return &b.ReplicaFetchMinBytes },
		tInt("replica.fetch.min.bytes", "1", nil, "Minimum bytes expected for each fetch response.")),
	bind(func(b *Broker) any { return &b.ReplicaFetchBackoff },
		msInt("replica.fetch.backoff.ms", "1000", atLeast(0), "The amount of time to sleep when a fetch partition error occurs.")),
	bind(func(b *Broker) any { return &b.ReplicaFetchResponseMax },
		tInt("replica.fetch.response.max.bytes", "10485760", atLeast(0), "Maximum bytes expected for the entire fetch response.")),
	bind(func(b *Broker) any { return &b.ReplicaSocketTimeout },
		msInt("replica.socket.timeout.ms", "30000", nil, "The socket timeout for network requests to the leader.")),
	bind(func(b *Broker) any { return &b.NumReplicaFetchers },
		tInt("num.replica.fetchers", "1", atLeast(1), "Number of fetcher threads used to replicate records from each source broker.").cluster()),
	bind(func(b *Broker) any { return &b.ControllerSocketTimeout },
		msInt("controller.socket.timeout.ms", "30000", nil, "The socket timeout for controller-to-broker channels.")),
	bind(func(b *Broker) any { return &b.ControlledShutdownEnable },
		tBool("controlled.shutdown.enable", "true", "Enable controlled shutdown of the server.")),
	bind(func(b *Broker) any { return &b.ControlledShutdownRetries },
		tInt("controlled.shutdown.max.retries", "3", nil, "Number of times controlled shutdown is retried before an unclean shutdown.")),
	bind(func(b *Broker) any { return &b.ControlledShutdownBackoff },
		ms("controlled.shutdown.retry.backoff.ms", "5000", nil, "Backoff between controlled shutdown retries.")),
	bind(func(b *Broker) any { return &b.AutoLeaderRebalanceEnable },
		tBool("auto.leader.rebalance.enable", "true", "Enables automatic preferred leader balancing.")),
	bind(func(b *Broker) any { return &b.LeaderImbalancePercentage },
		tInt("leader.imbalance.per.broker.percentage", "10", nil, "The ratio of leader imbalance allowed per broker, in percent.")),
	bind(func(b *Broker) any { return &b.LeaderImbalanceCheck },
		tLong("leader.imbalance.check.interval.seconds", "300", atLeast(1), "How often the controller checks leader imbalance.").in(time.Second)),
	bind(func(b *Broker) any { return &b.OffsetsTopicReplication },
		tShort("offsets.topic.replication.factor", "3", atLeast(1), "Replication factor of the offsets topic.")),
	bind(func(b *Broker) any { return &b.OffsetsTopicNumPartitions },
		tInt("offsets.topic.num.partitions", "50", atLeast(1), "Number of partitions of the offsets topic (should not change after deployment).")),
	bind(func(b *Broker) any { return &b.OffsetsTopicSegmentBytes },
		tInt("offsets.topic.segment.bytes", "104857600", atLeast(1), "Segment size of the offsets topic.")),
	bind(func(b *Broker) any { return &b.OffsetsRetention },
		tInt("offsets.retention.minutes", "10080", atLeast(1), "How long committed offsets of an empty group are kept.").in(time.Minute)),
	bind(func(b *Broker) any { return &b.OffsetsRetentionCheck },
		ms("offsets.retention.check.interval.ms", "600000", atLeast(1), "How often to check for stale offsets.")),
	bind(func(b *Broker) any { return &b.OffsetsCommitTimeout },
		msInt("offsets.commit.timeout.ms", "5000", atLeast(1), "Offset commits wait this long for the offsets topic replicas.")),
	bind(func(b *Broker) any { return &b.OffsetMetadataMaxBytes },
		tInt("offset.metadata.max.bytes", "4096", atLeast(0), "The maximum size of the metadata string of an offset commit.")),
	bind(func(b *Broker) any { return &b.GroupInitialRebalanceDelay },
		msInt("group.initial.rebalance.delay.ms", "3000", nil, "How long the coordinator waits for more members before the first rebalance of a new group.")),
	bind(func(b *Broker) any { return &b.GroupMinSessionTimeout },
		msInt("group.min.session.timeout.ms", "6000", nil, "The minimum allowed session timeout for registered consumers.")),
	bind(func(b *Broker) any { return &b.GroupMaxSessionTimeout },
		msInt("group.max.session.timeout.ms", "1800000", nil, "The maximum allowed session timeout for registered consumers.")),
	bind(func(b *Broker) any { return &b.GroupMaxSize },
		tInt("group.max.size", "2147483647", atLeast(1), "The maximum number of consumers a single group can hold.")),
}

// noEffectKeys are Kafka keys found in ordinary server.properties files that
// have no meaning in Samsa (Java threads, socket buffers, ZooKeeper,
// transactions); they load silently and are described with their defaults.
var noEffectKeys = accepted(
	msInt("log.flush.offset.checkpoint.interval.ms", "60000", atLeast(0), "How often the last flush (recovery point) is persisted (no effect in Samsa)."),
	msInt("log.flush.start.offset.checkpoint.interval.ms", "60000", atLeast(0), "How often log start offsets are persisted (no effect in Samsa: they are written with the high watermarks)."),
	tInt("num.network.threads", "3", atLeast(1), "Kafka: threads receiving requests (no effect in Samsa).").kafka(clusterWide),
	tInt("num.io.threads", "8", atLeast(1), "Kafka: threads processing requests (no effect in Samsa).").kafka(clusterWide),
	tInt("background.threads", "10", atLeast(1), "Kafka: threads for background tasks (no effect in Samsa).").kafka(clusterWide),
	tInt("queued.max.requests", "500", atLeast(1), "Kafka: queued requests before blocking network threads (no effect in Samsa)."),
	tInt("socket.send.buffer.bytes", "102400", nil, "SO_SNDBUF of sockets; -1: OS default (no effect in Samsa)."),
	tInt("socket.receive.buffer.bytes", "102400", nil, "SO_RCVBUF of sockets; -1: OS default (no effect in Samsa)."),
	tInt("replica.socket.receive.buffer.bytes", "65536", nil, "Socket receive buffer for replica fetches (no effect in Samsa)."),
	tBool("broker.id.generation.enable", "true", "Kafka: automatic broker id generation (no effect in Samsa)."),
	tInt("reserved.broker.max.id", "1000", atLeast(0), "Kafka: maximum number for a configured broker id (no effect in Samsa)."),
	tStr("inter.broker.protocol.version", "3.9-IV0", nil, "Kafka: inter-broker protocol version (no effect in Samsa)."),
	tInt("transaction.state.log.load.buffer.size", "5242880", atLeast(1), "Kafka: batch size when loading transactions (no effect in Samsa)."),
	tInt("offsets.load.buffer.size", "5242880", atLeast(1), "Kafka: batch size when loading offsets (no effect in Samsa)."),
	tInt("offsets.topic.compression.codec", "0", nil, "Kafka: compression codec of the offsets topic (no effect in Samsa)."),
	tShort("offsets.commit.required.acks", "-1", nil, "Deprecated Kafka setting (no effect in Samsa)."),
)

// brokerSettings is the whole broker table, in description order.
var brokerSettings = concat(serverSettings, logSettings, logExtraKeys, clusterSettings, txnSettings, noEffectKeys,
	sslKeys, saslKeys, kraftKeys, groupProtocolKeys, remoteLogKeys, runtimeKeys, quotaKeys)

// brokerKeys indexes every broker key by name; brokerGroup gives the synonym
// group a key is described with (Kafka's brokerConfigSynonyms).
var brokerKeys, brokerGroup = indexBroker(brokerSettings)

func concat(parts ...[]setting) []setting {
	var out []setting
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func indexBroker(settings []setting) (map[string]key, map[string][]key) {
	keys := map[string]key{}
	groups := map[string][]key{}
	for _, s := range settings {
		for i, k := range s.keys {
			keys[k.name] = k
			if _, seen := groups[k.name]; !seen || i == 0 {
				groups[k.name] = s.keys
			}
		}
	}
	return keys, groups
}
