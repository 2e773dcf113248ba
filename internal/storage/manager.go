package storage

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// ManagerConfig configures the log manager (Kafka broker log.* settings).
type ManagerConfig struct {
	Dirs                   []string      // log.dirs
	RetentionCheckInterval time.Duration // log.retention.check.interval.ms, default 5m
	FileDeleteDelay        time.Duration // file.delete.delay.ms, default 1m
	FlushCheckInterval     time.Duration // log.flush.scheduler.interval.ms, 0 = only in RunOnce
	MaxOpenFiles           int           // budget of open segment fds, default 2048
	// replica.high.watermark.checkpoint.interval.ms, default 5s: how often
	// Run writes the replication-offset-checkpoint of dirs whose high
	// watermarks changed.
	HighWatermarkCheckpointInterval time.Duration
	// producer.id.expiration.ms, default 86400000: an idempotent producer
	// idle that long is forgotten by every partition
	// (producer.id.expiration.check.interval.ms, default 600000, apart).
	ProducerIDExpiration              time.Duration
	ProducerIDExpirationCheckInterval time.Duration
	// The log cleaner (cleaner.go), Kafka's log.cleaner.* settings; zero
	// values take Kafka's defaults, but CleanerEnable (false: Run starts
	// no cleaner thread; CleanOnce still cleans).
	CleanerEnable              bool
	CleanerThreads             int           // log.cleaner.threads, default 1
	CleanerDedupeBufferSize    int64         // log.cleaner.dedupe.buffer.size, default 128 MiB
	CleanerIOBufferSize        int           // log.cleaner.io.buffer.size, default 512 KiB
	CleanerIOBufferLoadFactor  float64       // log.cleaner.io.buffer.load.factor, default 0.9
	CleanerIOMaxBytesPerSecond float64       // log.cleaner.io.max.bytes.per.second, default unlimited
	CleanerBackoff             time.Duration // log.cleaner.backoff.ms, default 15 s
	Logger                     *slog.Logger
	Now                        func() time.Time
	// OnDirFailure is called once for each log dir an I/O error takes
	// offline (offline.go), on the goroutine that hit the error, after the
	// dir's logs refuse reads and writes. It must not call back into a log
	// of that goroutine's (the log's lock may be held).
	OnDirFailure func(DirFailure)
	// OnLogStartMoved is called after a retention pass (RunOnce) with the
	// partitions whose log start offset it moved (a broker has its
	// followers among them report theirs to their leaders).
	OnLogStartMoved func([]kafka.TopicPartition)
}

// logDir is one of the configured log directories.
type logDir struct {
	path           string
	lock           *os.File
	clean          bool // the previous shutdown was clean
	recoveryPoints map[kafka.TopicPartition]int64
	dirty          atomic.Bool                    // recovery points changed since the last checkpoint
	hws            map[kafka.TopicPartition]int64 // high watermarks read at open, for scanDir
	cleanerPoints  map[kafka.TopicPartition]int64 // cleaner-offset-checkpoint read at open
	cleanerDirty   atomic.Bool                    // a log's firstDirty changed since the last write
	hwDirty        atomic.Bool                    // high watermarks changed since the last checkpoint
	logStarts      map[kafka.TopicPartition]int64 // log-start-offset-checkpoint read at open
	logStartDirty  atomic.Bool                    // log start offsets changed since the last checkpoint
	count          int                            // partitions, guarded by Manager.mu
	cache          *fdCache                       // the manager's, for the logs in this dir
	log            *slog.Logger
	now            func() time.Time // the manager's clock
	offline        atomic.Bool      // an I/O error took the dir offline (offline.go)
	onFail         func(*logDir, error)
	// producer.id.expiration.ms: producers idle longer are not loaded
	producerExpirationMs int64
}

func (d *logDir) markDirty()   { d.dirty.Store(true) }
func (d *logDir) markHWDirty() { d.hwDirty.Store(true) }

func (d *logDir) markLogStartDirty() { d.logStartDirty.Store(true) }

type pendingDelete struct {
	path string
	at   time.Time
}

// Manager owns the log directories and every partition log in them.
type Manager struct {
	cfg   ManagerConfig
	log   *slog.Logger
	now   func() time.Time
	cache *fdCache
	dirs  []*logDir

	mu   sync.Mutex
	logs kafka.Table[Log]
	// creating holds the new logs CreateTopics calls are registering;
	// created is signalled whenever one such call ends.
	creating kafka.Table[Log]
	created  sync.Cond
	deletes  []pendingDelete
	// deleteQueued wakes Run when a directory is queued for removal, so
	// that it is removed file.delete.delay.ms later, as Kafka's
	// kafka-delete-logs task does, not at the next retention pass.
	deleteQueued chan struct{}
	closed       bool

	cleaning    map[*Log]bool // logs a cleaner thread is cleaning
	cleanerCkpt sync.Mutex    // one cleaner-offset-checkpoint write at a time
	testCleaner *cleaner      // CleanOnce's
	throttle    *throttle     // the cleaner threads'
	cleanerCfg  CleanerConfig // the cleaner's settings, changed by ReconfigureCleaner
	cleanerRun  *cleanerRun   // the running cleaner threads, nil when none
	reconfigMu  sync.Mutex    // one ReconfigureCleaner at a time
}

// OpenManager locks each directory, notes and removes the clean-shutdown
// marker, reads the recovery checkpoints and lists partition directories
// without opening any segment. Directories ending in -delete or -stray are
// scheduled for removal.
func OpenManager(cfg ManagerConfig) (*Manager, error) {
	if len(cfg.Dirs) == 0 {
		return nil, errors.New("storage: no log directories")
	}
	if cfg.RetentionCheckInterval <= 0 {
		cfg.RetentionCheckInterval = 5 * time.Minute
	}
	if cfg.FileDeleteDelay < 0 {
		cfg.FileDeleteDelay = time.Minute
	}
	if cfg.MaxOpenFiles <= 0 {
		cfg.MaxOpenFiles = 2048
	}
	if cfg.HighWatermarkCheckpointInterval <= 0 {
		cfg.HighWatermarkCheckpointInterval = 5 * time.Second
	}
	if cfg.ProducerIDExpiration <= 0 {
		cfg.ProducerIDExpiration = 24 * time.Hour
	}
	if cfg.ProducerIDExpirationCheckInterval <= 0 {
		cfg.ProducerIDExpirationCheckInterval = 10 * time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.cleanerDefaults()
	m := &Manager{cfg: cfg, log: cfg.Logger, now: cfg.Now, cache: newFDCache(cfg.MaxOpenFiles), deleteQueued: make(chan struct{}, 1)}
	m.throttle = &throttle{rate: cfg.CleanerIOMaxBytesPerSecond, now: time.Now}
	m.cleanerCfg = cfg.cleanerConfig()
	m.created.L = &m.mu
	for _, p := range cfg.Dirs {
		// Absolute, as Kafka's LogManager holds them: DescribeLogDirs
		// reports them so and AlterReplicaLogDirs names them so.
		abs, err := filepath.Abs(p)
		if err != nil {
			m.releaseLocks()
			return nil, fmt.Errorf("storage: log dir %s: %w", p, err)
		}
		d, err := m.openDir(abs)
		if err != nil {
			m.releaseLocks()
			return nil, err
		}
		m.dirs = append(m.dirs, d)
	}
	return m, nil
}

func (m *Manager) openDir(path string) (_ *logDir, err error) {
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, fmt.Errorf("storage: create log dir: %w", err)
	}
	lf, err := os.OpenFile(filepath.Join(path, lockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("storage: lock file: %w", err)
	}
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lf.Close()
		return nil, fmt.Errorf("%w: %s", ErrLocked, path)
	}
	defer func() {
		if err != nil {
			lf.Close()
		}
	}()
	d := &logDir{path: path, lock: lf, recoveryPoints: map[kafka.TopicPartition]int64{}, cache: m.cache, log: m.log,
		now: m.now, onFail: m.dirFailed, producerExpirationMs: m.cfg.ProducerIDExpiration.Milliseconds()}
	marker := filepath.Join(path, cleanShutdownFile)
	if _, err := os.Stat(marker); err == nil {
		d.clean = true
		if err := os.Remove(marker); err != nil {
			return nil, fmt.Errorf("storage: remove clean-shutdown marker: %w", err)
		}
		syncDir(path)
	}
	if data, err := os.ReadFile(filepath.Join(path, recoveryCheckpointFile)); err == nil {
		if d.recoveryPoints, err = parseCheckpoint(data); err != nil {
			m.log.Warn("storage: ignoring corrupt recovery checkpoint", "dir", path, "err", err)
			d.recoveryPoints = map[kafka.TopicPartition]int64{}
		}
	}
	m.readHWCheckpoint(d)
	m.readCleanerCheckpoint(d)
	m.readLogStartCheckpoint(d)
	err = m.scanDir(d)
	d.hws, d.cleanerPoints, d.logStarts = nil, nil, nil // handed to the logs
	return d, err
}

// scanDir registers the partition directories of d, unopened.
func (m *Manager) scanDir(d *logDir) error {
	ents, err := os.ReadDir(d.path)
	if err != nil {
		return fmt.Errorf("storage: list log dir: %w", err)
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		name := e.Name()
		if strings.HasSuffix(name, deleteDirSuffix) || strings.HasSuffix(name, strayDirSuffix) {
			m.deletes = append(m.deletes, pendingDelete{filepath.Join(d.path, name), m.now().Add(m.cfg.FileDeleteDelay)})
			continue
		}
		tp, ok := parseDirName(name)
		if !ok || !validTopic(tp.Topic) {
			continue
		}
		if m.logs.Get(tp.Topic, tp.Partition) != nil {
			return fmt.Errorf("storage: partition %s found in two log dirs", tp)
		}
		m.logs.Put(tp.Topic, tp.Partition, newLog(d, tp, &defaultConfig))
		d.count++
	}
	return nil
}

// Partitions lists the partitions the manager holds, sorted.
func (m *Manager) Partitions() []kafka.TopicPartition {
	m.mu.Lock()
	out := make([]kafka.TopicPartition, 0, m.logs.Len())
	for k := range m.logs.All() {
		out = append(out, kafka.TopicPartition(k))
	}
	m.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out
}

// Get returns the partition's log, nil if absent. It opens no file; a log
// found on disk has DefaultLogConfig until the caller sets its config.
func (m *Manager) Get(tp kafka.TopicPartition) *Log {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.logs.Get(tp.Topic, tp.Partition)
}

// Create returns the partition's log, registering a lazy one (see lazy.go:
// no directory until its first append, in the log dir holding the fewest
// partitions) if absent. An existing log gets cfg.
func (m *Manager) Create(tp kafka.TopicPartition, topicID [16]byte, cfg LogConfig) (*Log, error) {
	logs, err := m.CreateMany([]CreateRequest{{TopicPartition: tp, TopicID: topicID, Config: cfg}})
	if err != nil {
		return nil, err
	}
	return logs[0], nil
}

// Delete closes the log, renames its directory to
// <topic>-<partition>.<uuid>-delete and schedules its removal after
// FileDeleteDelay. A lazy log has no directory: it is only forgotten.
func (m *Manager) Delete(tp kafka.TopicPartition) error {
	return m.DeleteMany([]kafka.TopicPartition{tp})
}

// DeleteMany is Delete for many partitions: every directory is renamed,
// then each touched log dir is fsynced once (a rename is durable once its
// parent directory is synced), so a StopReplica for thousands of
// partitions costs one fsync per log dir, not one per partition.
func (m *Manager) DeleteMany(tps []kafka.TopicPartition) error {
	return m.deleteAs(tps, deleteDirSuffix, "")
}

// MarkStray is DeleteMany for the logs of partitions the broker holds no
// replica of (KRaft's stray logs, KAFKA-14616): their directories are
// renamed <topic>-<partition>.<uuid>-stray and removed after
// FileDeleteDelay, each with a warning that gives why (reason). A lazy log
// has no directory: it is only forgotten.
func (m *Manager) MarkStray(tps []kafka.TopicPartition, reason string) error {
	return m.deleteAs(tps, strayDirSuffix, reason)
}

// The suffixes of directories being deleted: DeleteMany's and MarkStray's.
const (
	deleteDirSuffix = "-delete"
	strayDirSuffix  = "-stray"
)

// deleteAs closes the logs of tps, renames each directory
// <dir>.<uuid><suffix> (with a warning giving reason, if any) and schedules
// its removal after FileDeleteDelay; then each touched log dir is fsynced
// once.
func (m *Manager) deleteAs(tps []kafka.TopicPartition, suffix, reason string) error {
	var errs []error
	touched := map[*logDir]bool{}
	for _, tp := range tps {
		l := m.detach(tp)
		if l == nil {
			continue
		}
		resume := l.pauseCleaning()
		if err := l.closeLog(false); err != nil {
			m.log.Warn("storage: close on delete", "partition", tp, "err", err)
		}
		resume()
		if l.lazy.Load() { // closed: no append can materialize it now
			continue // nothing on disk
		}
		id := uuid.New()
		dst := fmt.Sprintf("%s.%s%s", l.dir(), hex.EncodeToString(id[:]), suffix)
		if err := os.Rename(l.dir(), dst); err != nil {
			errs = append(errs, fmt.Errorf("storage: rename for delete: %w", err))
			continue
		}
		touched[l.dirs] = true
		if reason != "" {
			m.log.Warn("storage: a stray partition log is set aside for deletion", "dir", dst, "reason", reason,
				"delete_after", m.cfg.FileDeleteDelay)
		}
		m.mu.Lock()
		m.deletes = append(m.deletes, pendingDelete{dst, m.now().Add(m.cfg.FileDeleteDelay)})
		m.mu.Unlock()
		select {
		case m.deleteQueued <- struct{}{}:
		default:
		}
	}
	for d := range touched {
		if err := syncDir(d.path); err != nil {
			errs = append(errs, err)
		}
		d.markDirty()
		d.markHWDirty()
	}
	return errors.Join(errs...)
}

// detach removes tp from the manager (after any CreateMany writing it) and
// returns its log, nil if absent.
func (m *Manager) detach(tp kafka.TopicPartition) *Log {
	m.mu.Lock()
	defer m.mu.Unlock()
	for m.creating.Get(tp.Topic, tp.Partition) != nil {
		m.created.Wait()
	}
	l := m.logs.Delete(tp.Topic, tp.Partition)
	if l == nil {
		return nil
	}
	l.dirs.count--
	return l
}

// RunOnce runs one pass of retention, time-based flush, due directory
// deletions, recovery and high watermark checkpoints, at time now. Lazy logs are skipped
// (retentionDue says no, they hold nothing to flush). A log not loaded yet is
// loaded only if a look at its files (retentionDue) shows segments to
// delete, so a pass over 100k idle partitions costs a few system calls each
// and opens no segment.
func (m *Manager) RunOnce(now time.Time) {
	var moved []kafka.TopicPartition
	for _, l := range m.snapshot() {
		if l.dirs.offline.Load() {
			continue
		}
		if !l.loaded.Load() && !l.retentionDue(now.UnixMilli()) {
			continue // not worth loading: nothing to delete
		}
		ok, err := l.enforceRetention(now)
		if err != nil && !errors.Is(err, ErrLogClosed) {
			m.log.Warn("storage: retention", "partition", l.tp, "err", err)
		}
		if ok {
			moved = append(moved, l.tp)
		}
	}
	if len(moved) > 0 && m.cfg.OnLogStartMoved != nil {
		m.cfg.OnLogStartMoved(moved)
	}
	m.flushDue(now)
	m.removeDue(now)
	m.checkpoint(false)
	m.checkpointHWs()
	m.checkpointLogStarts()
}

// Run runs the log cleaner threads if enabled (stopped and waited for
// when ctx is done), calls RunOnce every RetentionCheckInterval, the time-based flush
// every FlushCheckInterval if set, writes changed high watermark
// checkpoints every HighWatermarkCheckpointInterval and expires idle
// producers every ProducerIDExpirationCheckInterval, until ctx is done.
func (m *Manager) Run(ctx context.Context) {
	if m.cfg.CleanerEnable {
		done := make(chan struct{})
		go func() {
			defer close(done)
			m.runCleaners(ctx)
		}()
		defer func() { <-done }()
	}
	ret := time.NewTicker(m.cfg.RetentionCheckInterval)
	defer ret.Stop()
	pidt := time.NewTicker(m.cfg.ProducerIDExpirationCheckInterval)
	defer pidt.Stop()
	hwt := time.NewTicker(m.cfg.HighWatermarkCheckpointInterval)
	defer hwt.Stop()
	// del fires when the earliest queued directory removal is due.
	del := time.NewTimer(time.Hour)
	defer del.Stop()
	armDelete := func() {
		del.Stop()
		if at, ok := m.nextDeleteDue(); ok {
			del.Reset(max(at.Sub(m.now()), 0))
		}
	}
	armDelete()
	var flushC <-chan time.Time
	if m.cfg.FlushCheckInterval > 0 {
		ft := time.NewTicker(m.cfg.FlushCheckInterval)
		defer ft.Stop()
		flushC = ft.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-ret.C:
			m.RunOnce(m.now())
		case <-flushC:
			m.flushDue(m.now())
		case <-hwt.C:
			m.checkpointHWs()
			m.checkpointLogStarts()
		case <-pidt.C:
			m.ExpireProducers(m.now())
		case <-m.deleteQueued:
			armDelete()
		case <-del.C:
			m.removeDue(m.now())
			armDelete()
		}
	}
}

// nextDeleteDue is when the earliest queued directory removal is due.
func (m *Manager) nextDeleteDue() (at time.Time, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, d := range m.deletes {
		if !ok || d.at.Before(at) {
			at, ok = d.at, true
		}
	}
	return at, ok
}

// ExpireProducers removes, from every loaded log, the idempotent producers
// idle for ProducerIDExpiration at now (Kafka's removeExpiredProducers).
// Logs not loaded keep theirs until they load and the next pass.
func (m *Manager) ExpireProducers(now time.Time) {
	n := 0
	for _, l := range m.snapshot() {
		n += l.ExpireProducers(now.UnixMilli(), m.cfg.ProducerIDExpiration.Milliseconds())
	}
	if n > 0 {
		m.log.Info("storage: expired idle producers", "count", n)
	}
}

func (m *Manager) snapshot() []*Log {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*Log, 0, m.logs.Len())
	for _, l := range m.logs.All() {
		out = append(out, l)
	}
	return out
}

func (m *Manager) flushDue(now time.Time) {
	for _, l := range m.snapshot() {
		if l.dirs.offline.Load() {
			continue
		}
		if err := l.flushIfDue(now.UnixMilli()); err != nil && !errors.Is(err, ErrLogClosed) {
			m.log.Warn("storage: flush", "partition", l.tp, "err", err)
		}
	}
}

func (m *Manager) removeDue(now time.Time) {
	m.mu.Lock()
	var due []string
	keep := m.deletes[:0]
	for _, d := range m.deletes {
		if now.Before(d.at) {
			keep = append(keep, d)
		} else {
			due = append(due, d.path)
		}
	}
	m.deletes = keep
	m.mu.Unlock()
	for _, p := range due {
		if err := os.RemoveAll(p); err != nil {
			m.log.Warn("storage: remove deleted log", "dir", p, "err", err)
		}
	}
}

// checkpoint writes recovery-point-offset-checkpoint of dirty dirs (all if
// force). Lazy logs are left out.
func (m *Manager) checkpoint(force bool) error {
	byDir := make(map[*logDir]map[kafka.TopicPartition]int64)
	for _, l := range m.snapshot() {
		l.mu.RLock()
		lazy := l.lazy.Load()
		var rp int64
		if !lazy {
			rp = l.recoveryPoint
		}
		l.mu.RUnlock()
		if lazy {
			continue // not on disk: absent after a restart
		}
		if byDir[l.dirs] == nil {
			byDir[l.dirs] = map[kafka.TopicPartition]int64{}
		}
		byDir[l.dirs][l.tp] = rp
	}
	var errs []error
	for _, d := range m.dirs {
		if !d.dirty.Swap(false) && !force || d.offline.Load() {
			continue
		}
		if err := d.failed(writeFileSync(filepath.Join(d.path, recoveryCheckpointFile), encodeCheckpoint(byDir[d]))); err != nil {
			d.markDirty()
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Close flushes and closes every log, writes the recovery and high
// watermark checkpoints and the clean-shutdown marker, and releases the directory locks. Lazy logs
// leave nothing behind: the broker creates them again after a restart. A dir keeps
// no marker while it holds a log that still awaits recovery from an earlier
// unclean shutdown (never opened since), so that recovery is not skipped.
// An offline dir (offline.go) is left as it is: no flush, no checkpoint, no
// marker.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.mu.Unlock()
	var errs []error
	unrecovered := map[*logDir]bool{}
	logs := m.snapshot()
	for _, l := range logs {
		resume := l.pauseCleaning()
		if err := l.closeLog(!l.dirs.offline.Load()); err != nil {
			errs = append(errs, err)
		}
		resume()
		if l.onDisk != nil && l.needRecovery { // closed: neither changes any more
			unrecovered[l.dirs] = true
		}
	}
	if err := m.checkpoint(true); err != nil {
		errs = append(errs, err)
	}
	if err := m.checkpointHW(true); err != nil {
		errs = append(errs, err)
	}
	if err := m.checkpointCleaner(false); err != nil {
		errs = append(errs, err)
	}
	if err := m.checkpointLogStart(true); err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		for _, d := range m.dirs {
			if unrecovered[d] || d.offline.Load() {
				continue // recovered at the next start
			}
			if err := writeFileSync(filepath.Join(d.path, cleanShutdownFile), nil); err != nil {
				errs = append(errs, err)
			}
		}
	}
	m.releaseLocks()
	return errors.Join(errs...)
}

func (m *Manager) releaseLocks() {
	for _, d := range m.dirs {
		if d.lock != nil {
			d.lock.Close()
			d.lock = nil
		}
	}
}
