package config

import (
	"errors"
	"maps"
	"slices"
	"time"
)

// Topic is a topic's effective configuration: per-topic overrides over the
// broker's values (and their synonyms) over Kafka's defaults.
type Topic struct {
	CleanupPolicy                 []string      // cleanup.policy
	CompressionType               string        // compression.type: producer, uncompressed or a codec
	DeleteRetention               time.Duration // delete.retention.ms
	FileDeleteDelay               time.Duration // file.delete.delay.ms
	FlushMessages                 int64         // flush.messages
	Flush                         time.Duration // flush.ms; Unlimited: never
	IndexIntervalBytes            int32         // index.interval.bytes
	MaxCompactionLag              time.Duration // max.compaction.lag.ms
	MaxMessageBytes               int32         // max.message.bytes
	MessageTimestampAfterMax      time.Duration // message.timestamp.after.max.ms
	MessageTimestampBeforeMax     time.Duration // message.timestamp.before.max.ms
	MessageTimestampDifferenceMax time.Duration // message.timestamp.difference.max.ms
	MessageTimestampType          string        // message.timestamp.type
	MinCleanableDirtyRatio        float64       // min.cleanable.dirty.ratio
	MinCompactionLag              time.Duration // min.compaction.lag.ms
	MinInsyncReplicas             int32         // min.insync.replicas
	RetentionBytes                int64         // retention.bytes; -1: unlimited
	Retention                     time.Duration // retention.ms; negative: unlimited
	SegmentBytes                  int32         // segment.bytes
	SegmentIndexBytes             int32         // segment.index.bytes
	SegmentJitter                 time.Duration // segment.jitter.ms
	Segment                       time.Duration // segment.ms
	UncleanLeaderElection         bool          // unclean.leader.election.enable

	// Overrides are the validated per-topic overrides (normalized values),
	// as they should be stored in /config/topics/<topic>.
	Overrides map[string]string
}

// ValidateTopicConfigs checks per-topic overrides the way CreateTopics and
// AlterConfigs do: an unknown name or an invalid value is an error wrapping
// ErrInvalidConfig. It returns the overrides with normalized values.
func ValidateTopicConfigs(overrides map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(overrides))
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(overrides)) {
		k, ok := topicIndex[name]
		if !ok {
			errs = append(errs, errorf("unknown topic config %q", name))
			continue
		}
		v, err := k.normalize(overrides[name])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out[name] = v
	}
	return out, errors.Join(errs...)
}

// ResolveTopic returns the effective configuration of a topic with the given
// overrides; see ValidateTopicConfigs for the errors.
func (b *Broker) ResolveTopic(overrides map[string]string) (Topic, error) {
	norm, err := ValidateTopicConfigs(overrides)
	if err != nil {
		return Topic{}, err
	}
	t := Topic{Overrides: norm}
	for _, k := range topicKeys {
		if k.field == nil {
			continue
		}
		v, ok := b.topicValue(k, norm)
		if !ok {
			continue
		}
		if err := assign(k.field(&t), k.key, v); err != nil {
			return Topic{}, err
		}
	}
	return t, nil
}

// topicValue returns a topic config's effective value in the topic key's
// unit: the override, else its broker synonyms' value, else its default.
func (b *Broker) topicValue(k topicKey, overrides map[string]string) (string, bool) {
	if v, ok := overrides[k.name]; ok {
		return v, true
	}
	if len(k.synonyms) > 0 {
		if bk, v, ok := b.effective(brokerKeysNamed(k.synonyms)); ok {
			return convert(v, bk.unit, k.unit), true
		}
	}
	return k.dflt, k.hasDefault()
}

func brokerKeysNamed(names []string) []key {
	out := make([]key, len(names))
	for i, n := range names {
		out[i] = brokerKeys[n]
	}
	return out
}
