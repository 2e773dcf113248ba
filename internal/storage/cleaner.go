package storage

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// The log cleaner's shell (Kafka's LogCleaner and LogCleanerManager):
// CleanerThreads goroutines, run by Manager.Run, each with its own offset
// map (CleanerDedupeBufferSize split between them), pick the filthiest
// compacted log (cleanrules.go) that no other thread is cleaning, clean it
// (cleanlog.go) and sleep CleanerBackoff when none is due. They share one
// throttle of CleanerIOMaxBytesPerSecond. ReconfigureCleaner
// (cleanerconfig.go) stops them and Run starts them again. After each pass the log dir's
// cleaner-offset-checkpoint is rewritten. CleanOnce is the same pass on
// the caller's goroutine, at a given time, for tests.

const cleanerCheckpointFile = "cleaner-offset-checkpoint"

// newCleaner is one cleaner thread's state under cfg; a closed stop
// aborts its pass in progress and cuts its throttle sleeps short.
func (m *Manager) newCleaner(cfg CleanerConfig, stop <-chan struct{}) *cleaner {
	n := int64(cfg.Threads)
	c := newCleaner(cfg.DedupeBufferSize/n, cfg.IOBufferSize/int(n), cfg.IOBufferLoadFactor,
		func(bytes int) { m.throttle.wait(bytes, stop) })
	c.stop = stop
	return c
}

// CleanOnce runs one cleaning pass at now on the caller's goroutine: the
// filthiest due compacted log, if any, is cleaned. It reports whether a
// log was cleaned.
func (m *Manager) CleanOnce(now time.Time) (bool, error) {
	m.mu.Lock()
	if m.testCleaner == nil {
		m.testCleaner = m.newCleaner(m.cleanerCfg, nil)
	}
	c := m.testCleaner
	m.mu.Unlock()
	return m.cleanPass(c, now)
}

// cleanPass picks the filthiest log and cleans it with c.
func (m *Manager) cleanPass(c *cleaner, now time.Time) (bool, error) {
	nowMs := now.UnixMilli()
	var logs []*Log
	var cands []cleanable
	var cfgs []LogConfig
	for _, l := range m.snapshot() {
		if !l.config().Compact || l.lazy.Load() || m.isCleaning(l) {
			continue
		}
		cl, cfg, ok := l.cleanableNow(nowMs)
		if ok {
			logs, cands, cfgs = append(logs, l), append(cands, cl), append(cfgs, cfg)
		}
	}
	i := filthiest(cands, cfgs)
	if i < 0 || !m.startCleaning(logs[i]) {
		return false, nil
	}
	defer m.doneCleaning(logs[i])
	cleaned, err := c.clean(logs[i], nowMs)
	err = logs[i].dirs.failed(err)
	if errors.Is(err, errCleanAborted) || errors.Is(err, ErrLogClosed) {
		return false, nil
	}
	if cleaned {
		m.log.Info("storage: cleaned log", "partition", logs[i].tp, "dirtyRatio", cands[i].ratio(),
			"read", c.stats.bytesRead, "written", c.stats.bytesWritten)
		err = errors.Join(err, m.checkpointCleaner(false))
	}
	return cleaned, err
}

// cleanableNow computes the log's dirty section at nowMs; ok is false if
// it cannot be loaded.
func (l *Log) cleanableNow(nowMs int64) (cleanable, LogConfig, bool) {
	if err := l.lockLoaded(); err != nil {
		return cleanable{}, LogConfig{}, false
	}
	defer l.mu.Unlock()
	cfg := *l.config()
	if l.lazy.Load() {
		return cleanable{}, cfg, false
	}
	stats, err := l.segStatsLocked(cfg)
	if err != nil {
		l.dirs.log.Warn("storage: cleaner", "partition", l.tp, "err", err)
		return cleanable{}, cfg, false
	}
	return cleanableOffsets(stats, l.active().base, max(l.firstDirty, l.startLocked()), l.lsoLocked(), l.tombstoneHorizon, cfg, nowMs), cfg, true
}

func (m *Manager) isCleaning(l *Log) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cleaning[l]
}

func (m *Manager) startCleaning(l *Log) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cleaning[l] {
		return false
	}
	if m.cleaning == nil {
		m.cleaning = map[*Log]bool{}
	}
	m.cleaning[l] = true
	return true
}

func (m *Manager) doneCleaning(l *Log) {
	m.mu.Lock()
	delete(m.cleaning, l)
	m.mu.Unlock()
}

// cleanerRun is one start of the cleaner threads, with one configuration.
type cleanerRun struct {
	stop chan struct{} // closed by halt
	once sync.Once
	done chan struct{} // closed once every thread returned
}

// halt stops the run's threads: ReconfigureCleaner's, or Run's end.
func (r *cleanerRun) halt() { r.once.Do(func() { close(r.stop) }) }

// runCleaners runs the cleaner threads until ctx is done, started again
// with the new configuration after every ReconfigureCleaner.
func (m *Manager) runCleaners(ctx context.Context) {
	for ctx.Err() == nil {
		run := &cleanerRun{stop: make(chan struct{}), done: make(chan struct{})}
		m.mu.Lock()
		cfg := m.cleanerCfg
		m.cleanerRun = run
		m.mu.Unlock()
		m.runCleanerThreads(ctx, cfg, run)
		m.mu.Lock()
		if m.cleanerRun == run {
			m.cleanerRun = nil
		}
		m.mu.Unlock()
		close(run.done)
	}
}

// runCleanerThreads runs cfg.Threads cleaner threads until ctx is done or
// the run is halted, and waits for them.
func (m *Manager) runCleanerThreads(ctx context.Context, cfg CleanerConfig, run *cleanerRun) {
	stop := run.stop
	var wg sync.WaitGroup
	for range cfg.Threads {
		c := m.newCleaner(cfg, stop)
		wg.Go(func() {
			for ctx.Err() == nil && !c.stopped() {
				cleaned, err := m.cleanPass(c, m.now())
				if err != nil {
					m.log.Warn("storage: log cleaner", "err", err)
				}
				if cleaned && err == nil {
					continue
				}
				select {
				case <-ctx.Done():
				case <-stop:
				case <-time.After(cfg.Backoff):
				}
			}
		})
	}
	select {
	case <-ctx.Done():
		run.halt() // the threads' throttle sleeps and passes end too
	case <-stop:
	}
	wg.Wait()
}

// readCleanerCheckpoint reads d's cleaner-offset-checkpoint, if any.
func (m *Manager) readCleanerCheckpoint(d *logDir) {
	d.cleanerPoints = map[kafka.TopicPartition]int64{}
	data, err := os.ReadFile(filepath.Join(d.path, cleanerCheckpointFile))
	if err != nil {
		return
	}
	if d.cleanerPoints, err = parseCheckpoint(data); err != nil {
		m.log.Warn("storage: ignoring corrupt cleaner checkpoint", "dir", d.path, "err", err)
		d.cleanerPoints = map[kafka.TopicPartition]int64{}
	}
}

// checkpointCleaner writes cleaner-offset-checkpoint in the dirs whose
// logs' firstDirty changed (all if force), in Kafka's format.
func (m *Manager) checkpointCleaner(force bool) error {
	m.cleanerCkpt.Lock() // cleaner threads write the same files
	defer m.cleanerCkpt.Unlock()
	byDir := map[*logDir]map[kafka.TopicPartition]int64{}
	for _, l := range m.snapshot() {
		l.mu.RLock()
		fd := int64(-1)
		if l.onDisk != nil && !l.lazy.Load() {
			fd = l.firstDirty
		}
		l.mu.RUnlock()
		if fd < 0 {
			continue
		}
		if byDir[l.dirs] == nil {
			byDir[l.dirs] = map[kafka.TopicPartition]int64{}
		}
		byDir[l.dirs][l.tp] = fd
	}
	var errs []error
	for _, d := range m.dirs {
		if !d.cleanerDirty.Swap(false) && !force || d.offline.Load() {
			continue
		}
		if err := d.failed(writeFileSync(filepath.Join(d.path, cleanerCheckpointFile), encodeCheckpoint(byDir[d]))); err != nil {
			d.cleanerDirty.Store(true)
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// throttle is Kafka's Throttler, shared by the cleaner threads: once the
// bytes read since the start of a window exceed rate per second, the
// caller sleeps until they do not.
type throttle struct {
	now   func() time.Time
	mu    sync.Mutex
	rate  float64 // bytes per second
	start time.Time
	bytes float64
}

// throttleDelay is how long to sleep after bytes in elapsed at rate.
func throttleDelay(bytes float64, elapsed time.Duration, rate float64) time.Duration {
	want := time.Duration(bytes / rate * float64(time.Second))
	return max(want-elapsed, 0)
}

// setRate changes the rate from the next wait on (Kafka's
// updateDesiredRatePerSec).
func (t *throttle) setRate(rate float64) {
	t.mu.Lock()
	t.rate = rate
	t.mu.Unlock()
}

// wait counts n bytes and sleeps as long as the rate asks, or until stop
// is closed.
func (t *throttle) wait(n int, stop <-chan struct{}) {
	t.mu.Lock()
	if t.rate >= math.MaxFloat64 {
		t.mu.Unlock()
		return
	}
	now := t.now()
	if t.start.IsZero() || now.Sub(t.start) > time.Second {
		t.start, t.bytes = now, 0
	}
	t.bytes += float64(n)
	d := throttleDelay(t.bytes, now.Sub(t.start), t.rate)
	t.mu.Unlock()
	if d <= 0 {
		return
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-stop:
	}
}
