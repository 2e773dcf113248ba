package broker

// The log cleaner's dynamic configs (Kafka's LogCleaner as a
// BrokerReconfigurable): log.cleaner.threads, .dedupe.buffer.size,
// .io.buffer.size, .io.buffer.load.factor, .io.max.bytes.per.second and
// .backoff.ms. A write that changes them is checked against the running
// cleaner (storage.Manager.ValidateCleanerConfig, Kafka's
// validateReconfiguration) before it is stored; once applied
// (dynconfig.go), the cleaner threads are stopped and started again with
// them (storage.Manager.ReconfigureCleaner).

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-kafka/samsa/internal/config"
	"github.com/samsa-kafka/samsa/internal/storage"
)

// cleanerConfig is the cleaner's part of a broker configuration.
func cleanerConfig(cfg *config.Broker) storage.CleanerConfig {
	return storage.CleanerConfig{
		Threads:             int(cfg.LogCleanerThreads),
		DedupeBufferSize:    cfg.LogCleanerDedupeBufferSize,
		IOBufferSize:        int(cfg.LogCleanerIOBufferSize),
		IOBufferLoadFactor:  cfg.LogCleanerIOBufferLoadFactor,
		IOMaxBytesPerSecond: cfg.LogCleanerIOMaxBytesPerSecond,
		Backoff:             cfg.LogCleanerBackoff,
	}
}

// validateCleanerConfig checks next's cleaner settings, when this broker's
// cleaner is enabled (Kafka registers the LogCleaner as reconfigurable
// only then). The error is INVALID_CONFIG with Kafka's message.
func (b *Broker) validateCleanerConfig(next *config.Broker) error {
	if b.logs == nil || !b.cfg.LogCleanerEnable {
		return nil
	}
	if err := b.logs.ValidateCleanerConfig(cleanerConfig(next)); err != nil {
		return fmt.Errorf("%w: %s", kerr.InvalidConfig, strings.TrimPrefix(err.Error(), storage.ErrInvalidCleanerConfig.Error()+": "))
	}
	return nil
}

// reconfigureCleaner restarts the cleaner with cur's settings when they
// differ from prev's.
func (b *Broker) reconfigureCleaner(prev, cur *config.Broker) {
	if b.logs == nil || cleanerConfig(prev) == cleanerConfig(cur) {
		return
	}
	b.logs.ReconfigureCleaner(cleanerConfig(cur))
}
