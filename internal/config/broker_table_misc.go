package config

// Kafka broker keys for tiered storage, throttling windows, connection
// limits, purgatories, metrics, policies and Java thread pools: accepted
// with Kafka's types, defaults and update modes, without effect in Samsa.

var remoteLogKeys = acceptedNoEffect(
	clusterKey(msInt("remote.fetch.max.wait.ms", "500", atLeast(1), "Maximum wait before answering a remote fetch.")),
	tInt("remote.log.manager.copier.thread.pool.size", "-1", nil, "Threads copying segments to remote storage; -1: remote.log.manager.thread.pool.size."),
	clusterKey(tLong("remote.log.manager.copy.max.bytes.per.second", longMax, atLeast(1), "Bytes per second copied to remote storage.")),
	tInt("remote.log.manager.copy.quota.window.num", "11", atLeast(1), "Samples kept for the remote copy quota."),
	tInt("remote.log.manager.copy.quota.window.size.seconds", "1", atLeast(1), "Time span of a remote copy quota sample."),
	tInt("remote.log.manager.expiration.thread.pool.size", "-1", nil, "Threads cleaning up remote segments; -1: remote.log.manager.thread.pool.size."),
	clusterKey(tLong("remote.log.manager.fetch.max.bytes.per.second", longMax, atLeast(1), "Bytes per second fetched from remote storage.")),
	tInt("remote.log.manager.fetch.quota.window.num", "11", atLeast(1), "Samples kept for the remote fetch quota."),
	tInt("remote.log.manager.fetch.quota.window.size.seconds", "1", atLeast(1), "Time span of a remote fetch quota sample."),
	tInt("remote.log.manager.thread.pool.size", "10", atLeast(1), "Deprecated: threads of the remote log manager."),
	tStr("remote.log.metadata.manager.class.name", "org.apache.kafka.server.log.remote.metadata.storage.TopicBasedRemoteLogMetadataManager", nil,
		"RemoteLogMetadataManager implementation."),
	tStr("remote.log.metadata.manager.class.path", none, nil, "Class path of the RemoteLogMetadataManager."),
	tStr("remote.log.metadata.manager.impl.prefix", "rlmm.config.", nil, "Prefix of properties passed to the RemoteLogMetadataManager."),
	tStr("remote.log.metadata.manager.listener.name", none, nil, "Listener the RemoteLogMetadataManager connects to."),
	tInt("remote.log.reader.max.pending.tasks", "100", atLeast(1), "Queue size of the remote log reader pool."),
	tInt("remote.log.reader.threads", "10", atLeast(1), "Threads reading remote logs."),
	tStr("remote.log.storage.manager.class.name", none, nil, "RemoteStorageManager implementation."),
	tStr("remote.log.storage.manager.class.path", none, nil, "Class path of the RemoteStorageManager."),
	tStr("remote.log.storage.manager.impl.prefix", "rsm.config.", nil, "Prefix of properties passed to the RemoteStorageManager."),
	tBool("remote.log.storage.system.enable", "false", "Enable tiered storage on the broker."),
	clusterKey(tLong("remote.log.index.file.cache.total.size.bytes", "1073741824", atLeast(1), "Local space for index files fetched from remote storage.")),
	ms("remote.log.manager.task.interval.ms", "30000", atLeast(1), "Interval of the remote log manager's tasks."),
	tInt("remote.log.metadata.custom.metadata.max.bytes", "128", atLeast(0), "Largest custom metadata accepted from a remote storage plugin."),
)

var runtimeKeys = acceptedNoEffect(
	tInt("num.replica.alter.log.dirs.threads", none, nil, "Threads moving replicas between log directories."),
	msInt("request.timeout.ms", "30000", nil, "Time the broker's clients wait for a response."),
	tInt("delete.records.purgatory.purge.interval.requests", "1", nil, "Purge interval of the DeleteRecords purgatory."),
	tInt("fetch.purgatory.purge.interval.requests", "1000", nil, "Purge interval of the fetch purgatory."),
	tInt("producer.purgatory.purge.interval.requests", "1000", nil, "Purge interval of the produce purgatory."),
	clusterKey(tDouble("log.cleaner.io.buffer.load.factor", "0.9", nil, "Load factor of the cleaner's dedupe buffer.")),
	clusterKey(tInt("max.connection.creation.rate", "2147483647", atLeast(0), "Connections created per second on the broker.")),
	clusterKey(tInt("max.connections", "2147483647", atLeast(0), "Connections allowed on the broker.")),
	clusterKey(tInt("max.connections.per.ip", "2147483647", atLeast(0), "Connections allowed from one IP address.")),
	clusterKey(tStr("max.connections.per.ip.overrides", "", nil, "Per-IP or host name overrides of max.connections.per.ip.")),
	tInt("max.incremental.fetch.session.cache.slots", "1000", atLeast(0), "Incremental fetch sessions kept."),
	tInt("max.request.partition.size.limit", "2000", atLeast(1), "Partitions served in one request."),
	tLong("queued.max.request.bytes", "-1", nil, "Queued bytes before no more requests are read."),
	tStr("replica.selector.class", none, nil, "ReplicaSelector implementation choosing a preferred read replica."),
	ms("socket.connection.setup.timeout.max.ms", "30000", nil, "Maximum connection setup timeout of the broker's clients."),
	ms("socket.connection.setup.timeout.ms", "10000", nil, "Initial connection setup timeout of the broker's clients."),
	tInt("socket.listen.backlog.size", "50", atLeast(1), "Pending connections on a listening socket."),
	tInt("alter.log.dirs.replication.quota.window.num", "11", atLeast(1), "Samples kept for alter-log-dirs replication quotas."),
	tInt("alter.log.dirs.replication.quota.window.size.seconds", "1", atLeast(1), "Time span of an alter-log-dirs replication quota sample."),
	tInt("controller.quota.window.num", "11", atLeast(1), "Samples kept for controller mutation quotas."),
	tInt("controller.quota.window.size.seconds", "1", atLeast(1), "Time span of a controller mutation quota sample."),
	tInt("replication.quota.window.num", "11", atLeast(1), "Samples kept for replication quotas."),
	tInt("replication.quota.window.size.seconds", "1", atLeast(1), "Time span of a replication quota sample."),
	tClass("client.quota.callback.class", none, "ClientQuotaCallback implementation."),
	tClass("alter.config.policy.class.name", none, "AlterConfigPolicy implementation validating config changes."),
	tBool("alter.config.policy.kraft.compatibility.enable", "false", "Invoke the alter config policy for SUBTRACT and DELETE on LIST configs as in KRaft."),
	tClass("create.topic.policy.class.name", none, "CreateTopicPolicy implementation validating topic creation."),
	tBool("auto.include.jmx.reporter", "true", "Deprecated: always include the JmxReporter."),
	tInt("kafka.metrics.polling.interval.secs", "10", atLeast(1), "Polling interval of kafka.metrics.reporters."),
	tList("kafka.metrics.reporters", "", nil, "Yammer metrics reporter classes."),
	clusterKey(tList("metric.reporters", "", nil, "Metrics reporter classes.")),
	tInt("metrics.num.samples", "2", atLeast(1), "Samples kept to compute metrics."),
	tStr("metrics.recording.level", "INFO", nil, "Highest metrics recording level."),
	ms("metrics.sample.window.ms", "30000", atLeast(1), "Time window of a metrics sample."),
	tInt("telemetry.max.bytes", "1048576", atLeast(1), "Largest client telemetry push."),
	clusterKey(tBool("transaction.partition.verification.enable", "true", "Verify a partition was added to the transaction before transactional writes.")),
)

// quotaKeys are read by the client quota manager (broker/quotas.go, through
// Explicit): the sampled rate windows of Kafka's ClientQuotaManager.
var quotaKeys = accepted(
	tInt("quota.window.num", "11", atLeast(1), "The number of samples to retain in memory for client quotas."),
	tInt("quota.window.size.seconds", "1", atLeast(1), "The time span of each sample for client quotas."),
)
