package storage

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Reconfiguring the cleaner at run time (Kafka's LogCleaner as a
// BrokerReconfigurable): ValidateCleanerConfig checks a new configuration
// against the running one with Kafka's rules, ReconfigureCleaner takes
// it: the shared throttle gets the new rate at once, and the cleaner
// threads of Manager.Run are stopped — a pass in progress aborts at its
// next batch, before any swap, its .cleaned files removed, as a pass
// aborted by truncation — and started again with the new settings.

// ErrInvalidCleanerConfig is wrapped by ValidateCleanerConfig's errors,
// whose text after it is Kafka's message.
var ErrInvalidCleanerConfig = errors.New("storage: invalid cleaner config")

// CleanerConfig is what of the cleaner changes at run time (Kafka's
// LogCleaner.ReconfigurableConfigs).
type CleanerConfig struct {
	Threads             int           // log.cleaner.threads
	DedupeBufferSize    int64         // log.cleaner.dedupe.buffer.size, split between the threads
	IOBufferSize        int           // log.cleaner.io.buffer.size, split between the threads
	IOBufferLoadFactor  float64       // log.cleaner.io.buffer.load.factor: how full the offset maps get
	IOMaxBytesPerSecond float64       // log.cleaner.io.max.bytes.per.second, all threads together
	Backoff             time.Duration // log.cleaner.backoff.ms: the sleep when no log is due
}

// cleanerDefaults fills the cleaner settings left zero with Kafka's
// defaults.
func (c *ManagerConfig) cleanerDefaults() {
	if c.CleanerThreads <= 0 {
		c.CleanerThreads = 1
	}
	if c.CleanerDedupeBufferSize <= 0 {
		c.CleanerDedupeBufferSize = 128 << 20
	}
	if c.CleanerIOBufferSize <= 0 {
		c.CleanerIOBufferSize = 512 << 10
	}
	if c.CleanerIOBufferLoadFactor <= 0 {
		c.CleanerIOBufferLoadFactor = 0.9
	}
	if c.CleanerIOMaxBytesPerSecond <= 0 {
		c.CleanerIOMaxBytesPerSecond = math.MaxFloat64
	}
	if c.CleanerBackoff <= 0 {
		c.CleanerBackoff = 15 * time.Second
	}
}

// cleanerConfig is the manager config's cleaner part.
func (c *ManagerConfig) cleanerConfig() CleanerConfig {
	return CleanerConfig{Threads: c.CleanerThreads, DedupeBufferSize: c.CleanerDedupeBufferSize,
		IOBufferSize: c.CleanerIOBufferSize, IOBufferLoadFactor: c.CleanerIOBufferLoadFactor,
		IOMaxBytesPerSecond: c.CleanerIOMaxBytesPerSecond, Backoff: c.CleanerBackoff}
}

// CleanerConfig is the cleaner's current configuration.
func (m *Manager) CleanerConfig() CleanerConfig {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cleanerCfg
}

// ValidateCleanerConfig checks next against the running configuration as
// Kafka does (LogCleaner.validateReconfiguration, and KafkaConfig's
// per-thread dedupe buffer floor): at least one thread, no fewer than half
// and no more than double the current count, more than 1 MiB of dedupe
// buffer per thread.
func (m *Manager) ValidateCleanerConfig(next CleanerConfig) error {
	cur := m.CleanerConfig().Threads
	switch {
	case next.Threads < 1:
		return fmt.Errorf("%w: Log cleaner threads should be at least 1", ErrInvalidCleanerConfig)
	case next.Threads < cur/2:
		return fmt.Errorf("%w: Log cleaner threads cannot be reduced to less than half the current value %d", ErrInvalidCleanerConfig, cur)
	case next.Threads > cur*2:
		return fmt.Errorf("%w: Log cleaner threads cannot be increased to more than double the current value %d", ErrInvalidCleanerConfig, cur)
	case next.DedupeBufferSize/int64(next.Threads) <= 1<<20:
		return fmt.Errorf("%w: log.cleaner.dedupe.buffer.size must be at least 1MB per cleaner thread.", ErrInvalidCleanerConfig)
	}
	return nil
}

// ReconfigureCleaner makes next the cleaner's configuration (Kafka's
// LogCleaner.reconfigure): the throttle takes its rate, CleanOnce a
// cleaner built with it, and the running cleaner threads, if any, are
// stopped — waited for — and Run starts next.Threads new ones. Values
// left zero take Kafka's defaults; the caller validated next.
func (m *Manager) ReconfigureCleaner(next CleanerConfig) {
	mc := ManagerConfig{CleanerThreads: next.Threads, CleanerDedupeBufferSize: next.DedupeBufferSize,
		CleanerIOBufferSize: next.IOBufferSize, CleanerIOBufferLoadFactor: next.IOBufferLoadFactor,
		CleanerIOMaxBytesPerSecond: next.IOMaxBytesPerSecond, CleanerBackoff: next.Backoff}
	mc.cleanerDefaults()
	next = mc.cleanerConfig()
	m.reconfigMu.Lock()
	defer m.reconfigMu.Unlock()
	m.mu.Lock()
	prev := m.cleanerCfg
	m.cleanerCfg, m.testCleaner = next, nil
	run := m.cleanerRun
	m.cleanerRun = nil
	m.mu.Unlock()
	if next.IOMaxBytesPerSecond != prev.IOMaxBytesPerSecond {
		m.throttle.setRate(next.IOMaxBytesPerSecond)
	}
	if run != nil {
		run.halt()
		<-run.done
	}
	m.log.Info("storage: log cleaner reconfigured", "threads", next.Threads, "dedupeBufferSize", next.DedupeBufferSize,
		"ioBufferSize", next.IOBufferSize, "loadFactor", next.IOBufferLoadFactor,
		"ioMaxBytesPerSecond", next.IOMaxBytesPerSecond, "backoff", next.Backoff, "restarted", run != nil)
}
