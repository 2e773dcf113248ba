package storage

import (
	"encoding/binary"
	"os"
	"time"

	"github.com/samsa-kafka/samsa/internal/record"
)

// enforceRetention deletes the oldest segments past retention.ms or beyond
// retention.bytes, as Kafka's deleteOldSegments does (only under the
// delete cleanup policy: a compact-only log keeps every segment): time first, then size
// (delete the oldest while the rest still holds at least retention.bytes).
// Segments reaching above the high watermark stay (followers may still need
// them). If every segment is due, the active one is rolled first so the log keeps
// one (empty) segment; LogStartOffset moves to the first remaining base,
// the leader-epoch cache forgets what lies below it (truncateFromStart) and
// the high watermark is raised to it if below. Segments wholly below the
// log start offset (logstart.go) go under any cleanup policy. moved
// reports whether the log start offset moved.
func (l *Log) enforceRetention(now time.Time) (moved bool, err error) {
	defer func() { err = l.dirs.failed(err) }()
	if err := l.lockLoaded(); err != nil {
		return false, err
	}
	defer l.mu.Unlock()
	if l.lazy.Load() {
		return false, nil
	}
	n := l.breachedCount()
	if !l.config().NoDelete {
		expired, err := l.expiredBelowHW(now)
		if err != nil {
			return false, err
		}
		n = max(n, expired)
	}
	start := l.startLocked()
	err = l.deleteSegmentsLocked(n)
	return l.startLocked() != start, err
}

// expiredBelowHW is the count of oldest segments past retention.ms or
// beyond retention.bytes that every in-sync replica holds (Kafka deletes a
// segment only when the next one starts at or below the high watermark).
func (l *Log) expiredBelowHW(now time.Time) (int, error) {
	sizes := make([]int64, len(l.segs))
	for i, s := range l.segs {
		sizes[i] = s.size
	}
	n, err := expiredCount(*l.config(), now.UnixMilli(), sizes, func(i int) (int64, error) {
		s := l.segs[i]
		ts, _, err := s.timestamps()
		if err == nil && ts < 0 {
			ts = mtimeMs(s.path + ".log")
		}
		return ts, err
	})
	if err != nil {
		return 0, err
	}
	for n > 0 && l.segmentEnd(n-1) > l.hw.Load() {
		n--
	}
	return n, nil
}

// deleteSegmentsLocked deletes the n oldest segments (mu held for writing),
// rolling first if that is all of them.
func (l *Log) deleteSegmentsLocked(n int) error {
	if n == 0 {
		return nil
	}
	if n == len(l.segs) {
		if err := l.rollLocked(l.leo()); err != nil {
			return err
		}
	}
	for _, s := range l.segs[:n] {
		if err := s.remove(); err != nil {
			return err
		}
	}
	l.segs = append([]*segment(nil), l.segs[n:]...)
	l.recoveryPoint = max(l.recoveryPoint, l.segs[0].base)
	l.dirs.markDirty()
	if l.epochs.truncateFromStart(l.segs[0].base) {
		l.persistTruncatedEpochsLocked()
	}
	l.clampHWLocked()
	if err := l.dropSnapshotsBelowLocked(l.segs[0].base); err != nil {
		l.dirs.log.Warn("storage: producer snapshots after retention", "partition", l.tp, "err", err)
	}
	if err := l.dropTxnsBelowLocked(l.segs[0].base); err != nil {
		l.dirs.log.Warn("storage: transaction index after retention", "partition", l.tp, "err", err)
	}
	l.dirs.log.Info("storage: deleted segments by retention", "partition", l.tp, "count", n, "logStartOffset", l.segs[0].base)
	return nil
}

// segmentEnd is the offset after segment i: the next segment's base, or the
// log end offset for the active one.
func (l *Log) segmentEnd(i int) int64 {
	if i+1 < len(l.segs) {
		return l.segs[i+1].base
	}
	return l.leo()
}

// expiredCount is the retention rule over segments described by their
// sizes and their largest timestamps (looked up only as needed): the count
// of leading segments older than retention.ms, extended by the oldest ones
// that can go while the rest still holds retention.bytes. An empty active
// (last) segment never goes.
func expiredCount(cfg LogConfig, nowMs int64, sizes []int64, largestTS func(int) (int64, error)) (int, error) {
	deletable := func(i int) bool { return i < len(sizes)-1 || sizes[i] > 0 }
	n := 0
	if cfg.RetentionMs >= 0 {
		for ; n < len(sizes) && deletable(n); n++ {
			ts, err := largestTS(n)
			if err != nil {
				return n, err
			}
			if nowMs-ts <= cfg.RetentionMs {
				break
			}
		}
	}
	if cfg.RetentionBytes < 0 {
		return n, nil
	}
	var total int64
	for _, sz := range sizes[n:] {
		total += sz
	}
	for ; n < len(sizes) && deletable(n); n++ {
		if total-sizes[n] < cfg.RetentionBytes {
			break
		}
		total -= sizes[n]
	}
	return n, nil
}

// mtimeMs is the file's modification time in unix ms, -1 if unknown.
func mtimeMs(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return fi.ModTime().UnixMilli()
}

// retentionDue tells, for a log not loaded yet, whether a retention pass
// could delete anything, from a listing of its directory, the sizes and
// modification times of its .log files and the last entry of their
// .timeindex files, without loading it. It errs on the side of true (load
// and decide for real): file sizes are at least the valid sizes a load
// finds, and a time index entry is at most the segment's largest
// timestamp. A segment without time index entries is judged by its .log
// mtime, Kafka's fallback for segments without a known largest timestamp.
func (l *Log) retentionDue(nowMs int64) bool {
	l.mu.RLock()
	cfg, closed, lazy := l.config(), l.closed, l.lazy.Load()
	raised := l.onDisk != nil && l.logStart > 0 // may breach a segment: load and see
	l.mu.RUnlock()
	if raised && !closed && !lazy {
		return true
	}
	if closed || lazy || cfg.NoDelete || (cfg.RetentionMs < 0 && cfg.RetentionBytes < 0) {
		return false
	}
	bases, err := listSegments(l.dir())
	if err != nil {
		return true // the real pass reports it
	}
	sizes := make([]int64, len(bases))
	mtimes := make([]int64, len(bases))
	for i, b := range bases {
		fi, err := os.Stat(segmentPath(l.dir(), b) + ".log")
		if err != nil {
			return true
		}
		sizes[i], mtimes[i] = fi.Size(), fi.ModTime().UnixMilli()
	}
	n, err := expiredCount(*cfg, nowMs, sizes, func(i int) (int64, error) {
		path := segmentPath(l.dir(), bases[i])
		ts := lastTimeIndexEntry(path + ".timeindex")
		if ts < 0 && i == len(bases)-1 {
			ts = maxBatchTimestamp(path+".log", sizes[i])
		}
		if ts < 0 {
			ts = mtimes[i]
		}
		return ts, nil
	})
	return n > 0 || err != nil
}

// lastTimeIndexEntry reads the timestamp of the last entry of a time index
// file, -1 if there is none or the file is unreadable.
func lastTimeIndexEntry(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return -1
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() < timeEntrySize || fi.Size()%timeEntrySize != 0 {
		return -1
	}
	var b [timeEntrySize]byte
	if _, err := f.ReadAt(b[:], fi.Size()-timeEntrySize); err != nil {
		return -1
	}
	return int64(binary.BigEndian.Uint64(b[:]))
}

// maxBatchTimestamp hops over the batch headers of a .log file of size
// bytes and returns their largest MaxTimestamp, -1 if none. It stops at
// the first header that does not parse or does not fit.
func maxBatchTimestamp(path string, size int64) int64 {
	f, err := os.Open(path)
	if err != nil {
		return -1
	}
	defer f.Close()
	ts := int64(-1)
	var hb [record.HeaderSize]byte
	for pos := int64(0); size-pos >= record.HeaderSize; {
		if _, err := f.ReadAt(hb[:], pos); err != nil {
			break
		}
		h, err := record.ReadHeader(hb[:])
		if err != nil || h.BatchLength < record.HeaderSize-12 || int64(h.Size()) > size-pos {
			break
		}
		ts = max(ts, h.MaxTimestamp)
		pos += int64(h.Size())
	}
	return ts
}
