package config

// topicKey is one topic-level config: its Kafka definition, the broker keys
// it falls back to (Kafka's ServerTopicConfigSynonyms, highest priority
// first) and the Topic field it fills (nil: stored, no field).
type topicKey struct {
	key
	synonyms []string
	field    func(*Topic) any
}

func tk(k key, field func(*Topic) any, synonyms ...string) topicKey {
	return topicKey{key: k, synonyms: synonyms, field: field}
}

// topicKeys lists every Kafka topic config, in name order.
var topicKeys = []topicKey{
	tk(tList("cleanup.policy", "delete", listOf("delete", "compact"), "delete and/or compact old segments."),
		func(t *Topic) any { return &t.CleanupPolicy }, "log.cleanup.policy"),
	tk(tInt("compression.gzip.level", "-1", either(oneOf("-1"), between(1, 9)), "The compression level for gzip (no effect in Samsa: the codec's default)."),
		nil, "compression.gzip.level"),
	tk(tInt("compression.lz4.level", "9", between(1, 17), "The compression level for lz4 (no effect in Samsa: the codec's default)."),
		nil, "compression.lz4.level"),
	tk(tStr("compression.type", "producer", oneOf(compressionTypes...), "Final compression type; producer keeps the producer's codec."),
		func(t *Topic) any { return &t.CompressionType }, "compression.type"),
	tk(tInt("compression.zstd.level", "3", between(-131072, 22), "The compression level for zstd (no effect in Samsa: the codec's default)."),
		nil, "compression.zstd.level"),
	tk(ms("delete.retention.ms", "86400000", atLeast(0), "How long tombstones are retained on compacted topics."),
		func(t *Topic) any { return &t.DeleteRetention }, "log.cleaner.delete.retention.ms"),
	tk(ms("file.delete.delay.ms", "60000", atLeast(0), "Time to wait before deleting a file from the filesystem."),
		func(t *Topic) any { return &t.FileDeleteDelay }, "log.segment.delete.delay.ms"),
	tk(tLong("flush.messages", longMax, atLeast(1), "Force an fsync after this many messages."),
		func(t *Topic) any { return &t.FlushMessages }, "log.flush.interval.messages"),
	tk(ms("flush.ms", longMax, atLeast(0), "Force an fsync after this much time."),
		func(t *Topic) any { return &t.Flush }, "log.flush.interval.ms", "log.flush.scheduler.interval.ms"),
	tk(tList("follower.replication.throttled.replicas", "", nil, "Replicas whose follower replication is throttled (no effect in Samsa)."),
		nil),
	tk(tInt("index.interval.bytes", "4096", atLeast(0), "How often an entry is added to the offset index."),
		func(t *Topic) any { return &t.IndexIntervalBytes }, "log.index.interval.bytes"),
	tk(tList("leader.replication.throttled.replicas", "", nil, "Replicas whose leader replication is throttled (no effect in Samsa)."),
		nil),
	tk(tLong("local.retention.bytes", "-2", atLeast(-2), "Tiered storage: local retention size (no effect in Samsa)."),
		nil, "log.local.retention.bytes"),
	tk(ms("local.retention.ms", "-2", atLeast(-2), "Tiered storage: local retention time (no effect in Samsa)."),
		nil, "log.local.retention.ms"),
	tk(ms("max.compaction.lag.ms", longMax, atLeast(1), "The maximum time a message remains ineligible for compaction."),
		func(t *Topic) any { return &t.MaxCompactionLag }, "log.cleaner.max.compaction.lag.ms"),
	tk(tInt("max.message.bytes", "1048588", atLeast(0), "The largest record batch size allowed."),
		func(t *Topic) any { return &t.MaxMessageBytes }, "message.max.bytes"),
	tk(tBool("message.downconversion.enable", "true", "Whether down-conversion of message formats is enabled."),
		nil, "log.message.downconversion.enable"),
	tk(tStr("message.format.version", "3.0-IV1", nil, "Deprecated message format version."),
		nil, "log.message.format.version"),
	tk(ms("message.timestamp.after.max.ms", longMax, atLeast(0), "Maximum allowed time a record timestamp may lead the broker's time."),
		func(t *Topic) any { return &t.MessageTimestampAfterMax }, "log.message.timestamp.after.max.ms"),
	tk(ms("message.timestamp.before.max.ms", longMax, atLeast(0), "Maximum allowed time a record timestamp may lag the broker's time."),
		func(t *Topic) any { return &t.MessageTimestampBeforeMax }, "log.message.timestamp.before.max.ms"),
	tk(ms("message.timestamp.difference.max.ms", longMax, atLeast(0), "Deprecated: maximum difference between record and broker timestamps."),
		func(t *Topic) any { return &t.MessageTimestampDifferenceMax }, "log.message.timestamp.difference.max.ms"),
	tk(tStr("message.timestamp.type", "CreateTime", oneOf("CreateTime", "LogAppendTime"), "CreateTime or LogAppendTime."),
		func(t *Topic) any { return &t.MessageTimestampType }, "log.message.timestamp.type"),
	tk(tDouble("min.cleanable.dirty.ratio", "0.5", between(0, 1), "How frequently the log compactor attempts to clean the log."),
		func(t *Topic) any { return &t.MinCleanableDirtyRatio }, "log.cleaner.min.cleanable.ratio"),
	tk(ms("min.compaction.lag.ms", "0", atLeast(0), "The minimum time a message remains uncompacted."),
		func(t *Topic) any { return &t.MinCompactionLag }, "log.cleaner.min.compaction.lag.ms"),
	tk(tInt("min.insync.replicas", "1", atLeast(1), "Minimum replicas that must acknowledge a write when acks=all."),
		func(t *Topic) any { return &t.MinInsyncReplicas }, "min.insync.replicas"),
	tk(tBool("preallocate", "false", "Preallocate the file when creating a new segment (no effect in Samsa)."),
		nil, "log.preallocate"),
	tk(tBool("remote.log.copy.disable", "false", "Tiered storage: stop copying to remote storage (no effect in Samsa)."),
		nil),
	tk(tBool("remote.log.delete.on.disable", "false", "Tiered storage: delete remote data when disabled (no effect in Samsa)."),
		nil),
	tk(tBool("remote.storage.enable", "false", "Tiered storage for the topic (not supported by Samsa)."),
		nil),
	tk(tLong("retention.bytes", "-1", nil, "The maximum size of a partition before old segments are discarded; -1: no limit."),
		func(t *Topic) any { return &t.RetentionBytes }, "log.retention.bytes"),
	tk(ms("retention.ms", "604800000", atLeast(-1), "The maximum time a log is retained before old segments are discarded; -1: no limit."),
		func(t *Topic) any { return &t.Retention }, "log.retention.ms", "log.retention.minutes", "log.retention.hours"),
	tk(tInt("segment.bytes", "1073741824", atLeast(14), "The segment file size for the log."),
		func(t *Topic) any { return &t.SegmentBytes }, "log.segment.bytes"),
	tk(tInt("segment.index.bytes", "10485760", atLeast(4), "The size of the offset index."),
		func(t *Topic) any { return &t.SegmentIndexBytes }, "log.index.size.max.bytes"),
	tk(ms("segment.jitter.ms", "0", atLeast(0), "The maximum random jitter subtracted from the segment roll time."),
		func(t *Topic) any { return &t.SegmentJitter }, "log.roll.jitter.ms", "log.roll.jitter.hours"),
	tk(ms("segment.ms", "604800000", atLeast(1), "Roll the log after this time even if the segment is not full."),
		func(t *Topic) any { return &t.Segment }, "log.roll.ms", "log.roll.hours"),
	tk(tBool("unclean.leader.election.enable", "false", "Allow replicas not in the ISR to be elected leader as a last resort."),
		func(t *Topic) any { return &t.UncleanLeaderElection }, "unclean.leader.election.enable"),
}

var topicIndex = indexTopic(topicKeys)

func indexTopic(keys []topicKey) map[string]topicKey {
	m := make(map[string]topicKey, len(keys))
	for _, k := range keys {
		m[k.name] = k
	}
	return m
}
