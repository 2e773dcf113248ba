package storage

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/record"
)

// Sentinel errors; callers map them to Kafka error codes with errors.Is.
var (
	// ErrOffsetOutOfRange maps to OFFSET_OUT_OF_RANGE.
	ErrOffsetOutOfRange = errors.New("storage: offset out of range")
	// ErrOffsetOutOfOrder: a follower append below the log end offset
	// (Kafka's UnexpectedAppendOffsetException / OFFSET_OUT_OF_ORDER).
	ErrOffsetOutOfOrder = errors.New("storage: offset out of order")
	// ErrLogClosed: the log was deleted or the manager closed.
	ErrLogClosed = errors.New("storage: log closed")
	// ErrRecordSetTooLarge maps to RECORD_LIST_TOO_LARGE: the append does
	// not fit in one segment (segment.bytes).
	ErrRecordSetTooLarge = errors.New("storage: record set larger than a segment")
	// ErrLocked: another process holds a log directory.
	ErrLocked = errors.New("storage: log directory locked by another process")
)

// parseDirName splits "<topic>-<partition>"; topics may contain '-'.
func parseDirName(name string) (kafka.TopicPartition, bool) {
	i := strings.LastIndexByte(name, '-')
	if i <= 0 || i == len(name)-1 {
		return kafka.TopicPartition{}, false
	}
	p, err := strconv.ParseInt(name[i+1:], 10, 32)
	if err != nil || p < 0 {
		return kafka.TopicPartition{}, false
	}
	return kafka.TopicPartition{Topic: name[:i], Partition: int32(p)}, true
}

// LogConfig holds Kafka's topic-level log configs, resolved by the caller.
type LogConfig struct {
	SegmentBytes       int64 // segment.bytes
	SegmentMs          int64 // segment.ms
	SegmentJitterMs    int64 // segment.jitter.ms
	RetentionMs        int64 // retention.ms, -1 = forever
	RetentionBytes     int64 // retention.bytes, -1 = unlimited
	FlushMessages      int64 // flush.messages
	FlushMs            int64 // flush.ms
	IndexIntervalBytes int32 // index.interval.bytes
	SegmentIndexBytes  int32 // segment.index.bytes
	LogAppendTime      bool  // message.timestamp.type=LogAppendTime
	// message.timestamp.before/after.max.ms: the produced CreateTime
	// timestamps the topic accepts (checked by the produce path, with
	// record.CheckProduced, as Kafka's LogValidator does).
	Timestamps record.TimestampBounds
	// compression.type: the codec produced batches are stored in
	// (record.Compression*), -1 for the producer's (the produce path
	// recompresses with record.CheckProduced, as Kafka's LogValidator does).
	Compression int8

	// cleanup.policy: Compact if it holds compact, NoDelete if it lacks
	// delete (the zero value is Kafka's default, delete). Retention by
	// time and size deletes segments only under the delete policy.
	Compact, NoDelete  bool
	DeleteRetentionMs  int64   // delete.retention.ms: tombstones kept after cleaning
	MinCompactionLagMs int64   // min.compaction.lag.ms
	MaxCompactionLagMs int64   // max.compaction.lag.ms; <= 0: MaxInt64
	MinCleanableRatio  float64 // min.cleanable.dirty.ratio
}

// DefaultLogConfig returns Kafka's defaults.
func DefaultLogConfig() LogConfig {
	return LogConfig{
		SegmentBytes:       1 << 30,
		SegmentMs:          7 * 24 * 3600 * 1000,
		RetentionMs:        7 * 24 * 3600 * 1000,
		RetentionBytes:     -1,
		FlushMessages:      math.MaxInt64,
		FlushMs:            math.MaxInt64,
		IndexIntervalBytes: 4096,
		SegmentIndexBytes:  10 << 20,
		DeleteRetentionMs:  86400000,
		MaxCompactionLagMs: math.MaxInt64,
		MinCleanableRatio:  0.5,
		Timestamps:         record.TimestampBounds{Before: math.MaxInt64, After: math.MaxInt64},
		Compression:        -1,
	}
}

// defaultConfig is the config of a log found on disk until its owner sets
// one (shared: a Log's config is never modified in place).
var defaultConfig = DefaultLogConfig().sane()

// sane replaces unusable values by defaults so that bad configs cannot
// divide by zero or roll on every append.
func (c LogConfig) sane() LogConfig {
	d := DefaultLogConfig()
	if c.SegmentBytes <= 0 {
		c.SegmentBytes = d.SegmentBytes
	}
	if c.SegmentMs <= 0 {
		c.SegmentMs = d.SegmentMs
	}
	if c.FlushMessages <= 0 {
		c.FlushMessages = d.FlushMessages
	}
	if c.FlushMs <= 0 {
		c.FlushMs = d.FlushMs
	}
	if c.IndexIntervalBytes < 0 {
		c.IndexIntervalBytes = d.IndexIntervalBytes
	}
	if c.MaxCompactionLagMs <= 0 {
		c.MaxCompactionLagMs = d.MaxCompactionLagMs
	}
	if c.SegmentIndexBytes < offsetEntrySize*2 {
		c.SegmentIndexBytes = d.SegmentIndexBytes
	}
	return c
}
