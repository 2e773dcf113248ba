package storage

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/record"
)

// Log is one partition's log: a directory of segments. It opens its files
// on first use. Safe for concurrent use: appends, truncation and retention
// take mu for writing (one at a time), reads take it for reading.
//
// A broker holds hundreds of thousands of logs, mostly lazy ones, so a Log
// keeps only what it needs: its directory's path is derived when used (from
// dirs, which also holds the fd cache and the logger), its config is a
// pointer to an immutable value that the logs created together share, and
// what only a log with files needs is behind a pointer (onDisk), nil while
// the log is lazy.
type Log struct {
	tp   kafka.TopicPartition
	dirs *logDir // the log directory holding this log
	// cfg is sane, replaced (under mu held for writing), never modified:
	// read without a lock it is the config of a moment.
	cfg atomic.Pointer[LogConfig]
	// onDisk is nil exactly while the log is lazy (lazy.go); set and
	// cleared under mu held for writing. Its fields are guarded by mu.
	*onDisk

	mu sync.RWMutex
	// cleanMu is held by a cleaning pass (cleanlog.go), before mu;
	// cleanPauses counts truncations and deletions waiting for it.
	cleanMu     sync.Mutex
	cleanPauses atomic.Int32
	epochs      epochCache // leader epochs (epoch.go), guarded by mu
	// txnGuards: KIP-890 verification guards by producer id (txnlog.go),
	// guarded by mu; nil unless a transaction is being verified.
	txnGuards map[int64]uint64
	hw        atomic.Int64 // high watermark (hw.go); written under mu
	// gen counts the changes of bytes in place (truncations), bumped
	// under mu held for writing before the change (section.go).
	gen atomic.Uint64
	// topicID is immutable once idKnown is set; before, it is read from
	// partition.metadata under mu.
	topicID [16]byte

	loaded atomic.Bool
	// lazy: created but never written, so no directory exists yet (see
	// lazy.go). Set before the log is shared, cleared only under mu held
	// for writing; read under mu, or without it as a hint.
	lazy    atomic.Bool
	idKnown atomic.Bool
	closed  bool
}

// onDisk is the state of a log that has a directory: every log but a lazy
// one.
type onDisk struct {
	segs []*segment // sorted by base; the last is active

	recoveryPoint int64 // offsets below are known flushed
	needRecovery  bool  // unclean shutdown and not yet recovered
	unflushed     int64 // records appended since the last flush
	lastFlushMs   int64

	producers *producerStates // idempotent producers (producerlog.go), nil if none
	snapshots []int64         // offsets of the producer snapshot files, sorted
	aborted   txnIndex        // aborted transactions, by marker offset (txnindex.go)
	txnFiles  []int64         // base offsets of the .txnindex files, sorted

	// logStart: the log start offset (logstart.go) when above the first
	// segment's base; startLocked is the one to read.
	logStart int64

	// firstDirty: the log cleaner's checkpoint, offsets below were
	// cleaned (cleaner-offset-checkpoint); -1 none.
	firstDirty int64
	// tombstoneHorizon: the earliest delete horizon of the tombstones the
	// last cleaning pass kept, 0 none (in memory only: after a restart
	// they go with the next pass that dirt triggers).
	tombstoneHorizon int64
}

// newLog returns the log of a partition directory found in d, not loaded.
// cfg must be sane.
func newLog(d *logDir, tp kafka.TopicPartition, cfg *LogConfig) *Log {
	fd, ok := d.cleanerPoints[tp]
	if !ok {
		fd = -1
	}
	l := &Log{tp: tp, dirs: d, onDisk: &onDisk{recoveryPoint: d.recoveryPoints[tp], needRecovery: !d.clean, firstDirty: fd, logStart: d.logStarts[tp]}}
	l.cfg.Store(cfg)
	l.hw.Store(d.hws[tp])
	return l
}

// segments lists the log's segments: none while it is lazy.
func (l *Log) segments() []*segment {
	if l.onDisk == nil {
		return nil
	}
	return l.segs
}

// dir is the log's partition directory (which a lazy log has not made yet).
func (l *Log) dir() string { return partitionDir(l.dirs.path, l.tp) }

// partitionDir is filepath.Join(dirPath, tp.String()), without cleaning
// the joined path when dirPath is clean already (a partition's directory
// name holds no separator and is neither "." nor ".."): 100k partitions
// created at once spend noticeably in Clean otherwise.
func partitionDir(dirPath string, tp kafka.TopicPartition) string {
	if dirPath != "" && dirPath != "." && !os.IsPathSeparator(dirPath[len(dirPath)-1]) && filepath.Clean(dirPath) == dirPath {
		// One allocation: the number is formatted on the stack.
		var num [12]byte
		return dirPath + string(filepath.Separator) + tp.Topic + "-" + string(strconv.AppendInt(num[:0], int64(tp.Partition), 10))
	}
	return filepath.Join(dirPath, tp.String())
}

// TopicID returns the topic id from partition.metadata (zero if unknown).
// Once known it is read without a lock.
func (l *Log) TopicID() [16]byte {
	if l.idKnown.Load() {
		return l.topicID
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.idKnown.Load() {
		id, err := readPartitionMetadata(l.dir())
		if err != nil {
			l.dirs.log.Warn("storage: read partition.metadata", "partition", l.tp, "err", err)
			return id
		}
		l.setTopicIDLocked(id)
	}
	return l.topicID
}

// setTopicIDLocked makes id the log's known topic id (mu held for writing,
// id not known yet).
func (l *Log) setTopicIDLocked(id [16]byte) {
	l.topicID = id
	l.idKnown.Store(true)
}

// SetConfig replaces the log's topic config; it applies to later appends
// and retention passes.
//
// The common case, a log re-created with its config, takes no lock: a
// config equal to the log's sane one is sane already.
func (l *Log) SetConfig(cfg LogConfig) {
	if *l.config() == cfg {
		return
	}
	sane := cfg.sane()
	l.mu.Lock()
	defer l.mu.Unlock()
	if *l.config() == sane {
		return
	}
	c := new(LogConfig) // not &sane: that would allocate on every call
	*c = sane
	l.cfg.Store(c)
	for _, s := range l.segments() {
		s.interval = c.IndexIntervalBytes
	}
}

// config is the log's config (sane; not to be modified).
func (l *Log) config() *LogConfig { return l.cfg.Load() }

// Open loads the log now (it otherwise loads on first use) and reports a
// load error.
func (l *Log) Open() error {
	if l.dirs.offline.Load() {
		return l.offlineErr()
	}
	if l.ready() {
		l.mu.RLock()
		defer l.mu.RUnlock()
		if l.closed {
			return ErrLogClosed
		}
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrLogClosed
	}
	if l.loaded.Load() || l.lazy.Load() {
		return nil
	}
	if err := l.loadLocked(); err != nil {
		for _, s := range l.segs {
			s.closeFiles()
		}
		l.segs = nil
		return fmt.Errorf("storage: load %s: %w", l.tp, err)
	}
	l.loaded.Store(true)
	return nil
}

// loadLocked lists the segments, recovers the ones from the recovery point
// on after an unclean shutdown and checks the active segment's tail, then
// loads the leader-epoch cache and clamps the high watermark.
func (l *Log) loadLocked() error {
	bases, snaps, txns, leftover, err := scanDir(l.dir())
	if err == nil && leftover {
		if err = recoverSwaps(l.dir()); err == nil {
			bases, snaps, txns, _, err = scanDir(l.dir())
		}
	}
	if err != nil {
		return err
	}
	if len(bases) == 0 {
		bases = []int64{l.recoveryPoint}
		if err := createFiles(segmentPath(l.dir(), bases[0])); err != nil {
			return err
		}
		syncDir(l.dir())
	}
	l.segs = make([]*segment, len(bases))
	for i, b := range bases {
		s := newSegment(l.dir(), b, l.dirs.cache, l.config().IndexIntervalBytes)
		fi, err := os.Stat(s.path + ".log")
		if err != nil {
			return fmt.Errorf("storage: stat segment: %w", err)
		}
		s.size = fi.Size()
		s.next = b + math.MaxInt32
		if i+1 < len(bases) {
			s.next = bases[i+1]
		}
		l.segs[i] = s
	}
	l.active().active = true
	unclean := l.needRecovery
	if l.needRecovery {
		if err := l.recoverLocked(); err != nil {
			return err
		}
		l.needRecovery = false
	} else if err := l.checkTailLocked(); err != nil {
		return err
	}
	l.recoveryPoint = min(max(l.recoveryPoint, l.segs[0].base), l.leo())
	l.logStart = min(max(l.logStart, l.segs[0].base), l.leo())
	if err := l.loadProducersLocked(snaps, txns, unclean); err != nil {
		return err
	}
	if !l.lazy.Load() { // a materializing log keeps its in-memory epochs
		if err := l.loadEpochsLocked(); err != nil {
			return err
		}
	}
	l.clampHWLocked()
	return nil
}

// recoverLocked rescans, with CRC checks, every segment holding offsets at or
// above the recovery point; at the first bad batch the segment is truncated
// and all later segments are deleted.
func (l *Log) recoverLocked() error {
	first := 0
	for i, s := range l.segs {
		if s.base <= l.recoveryPoint {
			first = i
		}
	}
	for i := first; i < len(l.segs); i++ {
		s := l.segs[i]
		if err := s.acquire(); err != nil {
			return err
		}
		fileSize := s.size
		s.mu.Lock()
		end, next, err := s.rebuildLocked(true, fileSize)
		s.mu.Unlock()
		if err == nil && end < fileSize {
			l.dirs.log.Warn("storage: truncating torn or corrupt tail", "partition", l.tp,
				"segment", s.base, "at", end, "size", fileSize)
			l.rewriting()
			s.mu.Lock()
			err = s.f.Truncate(end)
			s.mu.Unlock()
		}
		s.release()
		if err != nil {
			return fmt.Errorf("storage: recover segment %d: %w", s.base, err)
		}
		s.size, s.next = end, next
		if end < fileSize && i+1 < len(l.segs) {
			return l.dropAfterLocked(i)
		}
	}
	return nil
}

// dropAfterLocked deletes the segments after index i, which becomes active.
func (l *Log) dropAfterLocked(i int) error {
	for _, s := range l.segs[i+1:] {
		if err := s.remove(); err != nil {
			return err
		}
	}
	l.segs = l.segs[:i+1]
	s := l.segs[i]
	s.active = true
	if err := s.acquire(); err != nil {
		return err
	}
	defer s.release()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.openAppendersLocked()
}

// checkTailLocked rescans the active segment from its last index entry with
// CRC checks, indexing what the index misses and truncating a torn tail.
func (l *Log) checkTailLocked() error {
	s := l.active()
	if err := s.acquire(); err != nil {
		return err
	}
	defer s.release()
	s.mu.Lock()
	defer s.mu.Unlock()
	from := int64(0)
	if n := len(s.idx); n > 0 {
		from = int64(s.idx[n-1].pos)
	}
	s.sinceIdx = 0
	var ib, tb []byte
	end, next, err := s.scanLocked(from, s.size, s.base, true, func(pos int64, h record.Header) {
		ib, tb = s.trackLocked(pos, h, ib, tb)
	})
	if err != nil {
		return err
	}
	if from > 0 && end == from {
		// The indexed batch itself is bad: rescan the whole segment.
		s.idx, s.tidx, ib, tb = nil, nil, nil, nil
		if end, next, err = s.rebuildLocked(true, s.size); err != nil {
			return err
		}
	}
	if end < s.size {
		l.dirs.log.Warn("storage: truncating torn tail", "partition", l.tp, "segment", s.base, "at", end, "size", s.size)
		l.rewriting()
		if err := s.f.Truncate(end); err != nil {
			return fmt.Errorf("storage: truncate: %w", err)
		}
	}
	s.size, s.next = end, next
	return s.appendIndexesLocked(ib, tb)
}

func (l *Log) active() *segment { return l.segs[len(l.segs)-1] }
func (l *Log) leo() int64       { return l.active().next }

// listSegments returns the base offsets of the .log files in dir, sorted.
func listSegments(dir string) ([]int64, error) {
	bases, _, err := listDir(dir)
	return bases, err
}

// listDir returns the base offsets of the .log files in dir and the
// offsets of its producer snapshots, both sorted.
func listDir(dir string) (bases, snaps []int64, err error) {
	bases, snaps, _, _, err = scanDir(dir)
	return bases, snaps, err
}

// scanDir is listDir, also listing the .txnindex files and telling whether
// files of an interrupted cleaner swap are present (cleanswap.go).
func scanDir(dir string) (bases, snaps, txns []int64, leftover bool, err error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, nil, false, fmt.Errorf("storage: list segments: %w", err)
	}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		if swapLeftover(e.Name()) {
			leftover = true
			continue
		}
		if off, ok := parseSnapshotName(e.Name()); ok {
			snaps = append(snaps, off)
			continue
		}
		if off, ok := parseTxnIndexName(e.Name()); ok {
			txns = append(txns, off)
			continue
		}
		name, ok := strings.CutSuffix(e.Name(), ".log")
		if !ok {
			continue
		}
		b, err := strconv.ParseInt(name, 10, 64)
		if err != nil || b < 0 {
			continue
		}
		bases = append(bases, b)
	}
	slices.Sort(bases)
	slices.Sort(snaps)
	slices.Sort(txns)
	return bases, snaps, txns, leftover, nil
}

func createFiles(path string) error {
	for _, ext := range []string{".log", ".index", ".timeindex"} {
		f, err := os.OpenFile(path+ext, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return fmt.Errorf("storage: create segment: %w", err)
		}
		f.Close()
	}
	return nil
}

// LogEndOffset is the offset the next appended record gets; -1 if the log
// cannot be loaded.
func (l *Log) LogEndOffset() int64 {
	if l.rlockLoaded() != nil {
		return -1
	}
	defer l.mu.RUnlock()
	if l.lazy.Load() {
		return 0
	}
	return l.leo()
}

// LogStartOffset is the first offset still in the log; -1 if the log cannot
// be loaded.
func (l *Log) LogStartOffset() int64 {
	if l.rlockLoaded() != nil {
		return -1
	}
	defer l.mu.RUnlock()
	if l.lazy.Load() {
		return 0
	}
	return l.startLocked()
}

// ready says whether the log needs no loading: it is loaded, or lazy
// (nothing to load). A log stays ready until closed, which holders of mu
// check.
func (l *Log) ready() bool { return l.loaded.Load() || l.lazy.Load() }

// lockLoaded loads the log and takes mu for writing; ErrKafkaStorage if
// its dir is offline.
func (l *Log) lockLoaded() error {
	if l.dirs.offline.Load() {
		return l.offlineErr()
	}
	if !l.ready() {
		if err := l.Open(); err != nil {
			return err
		}
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrLogClosed
	}
	return nil
}

// rlockLoaded loads the log and takes mu for reading; ErrKafkaStorage if
// its dir is offline.
func (l *Log) rlockLoaded() error {
	if l.dirs.offline.Load() {
		return l.offlineErr()
	}
	if !l.ready() {
		if err := l.Open(); err != nil {
			return err
		}
	}
	l.mu.RLock()
	if l.closed {
		l.mu.RUnlock()
		return ErrLogClosed
	}
	return nil
}

// closeLog closes all files for good, flushing them first when flush is
// set (not for a log about to be deleted: its data is going away).
func (l *Log) closeLog(flush bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	var err error
	if flush && l.loaded.Load() && !l.lazy.Load() {
		// Flushed first: a snapshot at offset X is only ever written once
		// the log below X is durable (a roll fsyncs the segment before), so
		// a recovered log never ends below a snapshot it keeps.
		if err = l.flushLocked(0); err == nil {
			err = l.snapshotOnCloseLocked()
		}
	}
	for _, s := range l.segments() {
		s.closeFiles()
	}
	l.closed = true
	return err
}
