package config

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestResolveTopic(t *testing.T) {
	tests := []struct {
		name      string
		broker    map[string]string
		overrides map[string]string
		check     func(Topic) any
		want      any
	}{
		{"default retention from log.retention.hours", nil, nil,
			func(t Topic) any { return t.Retention }, 168 * time.Hour},
		{"broker minutes", map[string]string{"log.retention.minutes": "5"}, nil,
			func(t Topic) any { return t.Retention }, 5 * time.Minute},
		{"override beats broker", map[string]string{"log.retention.ms": "5"}, map[string]string{"retention.ms": "7"},
			func(t Topic) any { return t.Retention }, 7 * time.Millisecond},
		{"unlimited retention", nil, map[string]string{"retention.ms": "-1"},
			func(t Topic) any { return t.Retention < 0 }, true},
		{"broker unlimited hours", map[string]string{"log.retention.hours": "-1"}, nil,
			func(t Topic) any { return t.Retention }, -time.Millisecond},
		{"segment.bytes from log.segment.bytes", map[string]string{"log.segment.bytes": "1024"}, nil,
			func(t Topic) any { return t.SegmentBytes }, int32(1024)},
		{"segment.ms from log.roll.hours", map[string]string{"log.roll.hours": "2"}, nil,
			func(t Topic) any { return t.Segment }, 2 * time.Hour},
		{"segment.ms override", nil, map[string]string{"segment.ms": "100"},
			func(t Topic) any { return t.Segment }, 100 * time.Millisecond},
		{"max.message.bytes from message.max.bytes", map[string]string{"message.max.bytes": "100"}, nil,
			func(t Topic) any { return t.MaxMessageBytes }, int32(100)},
		{"segment.index.bytes from log.index.size.max.bytes", map[string]string{"log.index.size.max.bytes": "4096"}, nil,
			func(t Topic) any { return t.SegmentIndexBytes }, int32(4096)},
		{"file.delete.delay.ms from log.segment.delete.delay.ms", map[string]string{"log.segment.delete.delay.ms": "0"}, nil,
			func(t Topic) any { return t.FileDeleteDelay }, time.Duration(0)},
		{"flush.ms default never", nil, nil,
			func(t Topic) any { return t.Flush }, Unlimited},
		{"flush.ms from scheduler interval", map[string]string{"log.flush.scheduler.interval.ms": "3000"}, nil,
			func(t Topic) any { return t.Flush }, 3 * time.Second},
		{"flush.messages", nil, map[string]string{"flush.messages": "1"},
			func(t Topic) any { return t.FlushMessages }, int64(1)},
		{"timestamp type", map[string]string{"log.message.timestamp.type": "LogAppendTime"}, nil,
			func(t Topic) any { return t.MessageTimestampType }, "LogAppendTime"},
		{"unclean from broker", map[string]string{"unclean.leader.election.enable": "true"}, nil,
			func(t Topic) any { return t.UncleanLeaderElection }, true},
		{"unclean override off", map[string]string{"unclean.leader.election.enable": "true"}, map[string]string{"unclean.leader.election.enable": "false"},
			func(t Topic) any { return t.UncleanLeaderElection }, false},
		{"min.insync.replicas", nil, map[string]string{"min.insync.replicas": " 2 "},
			func(t Topic) any { return t.MinInsyncReplicas }, int32(2)},
		{"cleanup.policy list", nil, map[string]string{"cleanup.policy": "compact,delete"},
			func(t Topic) any { return strings.Join(t.CleanupPolicy, "+") }, "compact+delete"},
		{"dirty ratio", nil, map[string]string{"min.cleanable.dirty.ratio": "0.25"},
			func(t Topic) any { return t.MinCleanableDirtyRatio }, 0.25},
		{"index.interval.bytes", nil, nil,
			func(t Topic) any { return t.IndexIntervalBytes }, int32(4096)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := load(t, tt.broker)
			topic, err := b.ResolveTopic(tt.overrides)
			if err != nil {
				t.Fatal(err)
			}
			if got := tt.check(topic); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestResolveTopicStoresOverrides(t *testing.T) {
	b := load(t, nil)
	in := map[string]string{"retention.ms": " 1000", "leader.replication.throttled.replicas": "*", "message.downconversion.enable": "false"}
	topic, err := b.ResolveTopic(in)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"retention.ms": "1000", "leader.replication.throttled.replicas": "*", "message.downconversion.enable": "false"}
	if !maps.Equal(topic.Overrides, want) {
		t.Errorf("overrides = %v, want %v", topic.Overrides, want)
	}
}

func TestResolveTopicErrors(t *testing.T) {
	b := load(t, nil)
	tests := []struct {
		overrides map[string]string
		want      string
	}{
		{map[string]string{"retention.hours": "1"}, `config: unknown topic config "retention.hours"`},
		{map[string]string{"log.retention.ms": "1"}, `unknown topic config "log.retention.ms"`},
		{map[string]string{"segment.bytes": "10"}, `invalid value "10" for segment.bytes: must be at least 14`},
		{map[string]string{"retention.ms": "-2"}, `for retention.ms: must be at least -1`},
		{map[string]string{"cleanup.policy": "archive"}, `for cleanup.policy: element "archive"`},
		{map[string]string{"compression.type": "brotli"}, `for compression.type: must be one of`},
		{map[string]string{"min.cleanable.dirty.ratio": "NaN"}, `must be between 0 and 1`},
		{map[string]string{"compression.gzip.level": "0"}, `for compression.gzip.level: must be between 1 and 9`},
		{map[string]string{"preallocate": "1"}, `for preallocate: expected true or false`},
		{map[string]string{"max.message.bytes": "x"}, `invalid value "x" for max.message.bytes: not a number`},
	}
	for _, tt := range tests {
		_, err := b.ResolveTopic(tt.overrides)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ResolveTopic(%v) = %v, want %q", tt.overrides, err, tt.want)
			continue
		}
		if !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%v does not wrap ErrInvalidConfig", err)
		}
	}
}

func TestAllKafkaTopicConfigsAccepted(t *testing.T) {
	// Kafka 3.9's TopicConfig names.
	names := []string{
		"cleanup.policy", "compression.gzip.level", "compression.lz4.level", "compression.type",
		"compression.zstd.level", "delete.retention.ms", "file.delete.delay.ms", "flush.messages",
		"flush.ms", "follower.replication.throttled.replicas", "index.interval.bytes",
		"leader.replication.throttled.replicas", "local.retention.bytes", "local.retention.ms",
		"max.compaction.lag.ms", "max.message.bytes", "message.downconversion.enable",
		"message.format.version", "message.timestamp.after.max.ms", "message.timestamp.before.max.ms",
		"message.timestamp.difference.max.ms", "message.timestamp.type", "min.cleanable.dirty.ratio",
		"min.compaction.lag.ms", "min.insync.replicas", "preallocate", "remote.log.copy.disable",
		"remote.log.delete.on.disable", "remote.storage.enable", "retention.bytes", "retention.ms",
		"segment.bytes", "segment.index.bytes", "segment.jitter.ms", "segment.ms",
		"unclean.leader.election.enable",
	}
	var got []string
	for _, e := range load(t, nil).DescribeTopic(nil) {
		got = append(got, e.Name)
	}
	if !slices.Equal(got, names) {
		t.Errorf("topic configs = %v\nwant %v", got, names)
	}
}
