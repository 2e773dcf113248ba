package storage

import (
	"errors"
	"fmt"
	"sort"

	"github.com/samsa-kafka/samsa/internal/record"
)

// Truncation, as Kafka's UnifiedLog.truncateTo and truncateFullyAndStartAt:
// a follower drops its divergent tail (KIP-101/279), or restarts its log at
// the leader's start offset. The segments past the truncation point are
// deleted (and the directory fsynced), the segment holding it is cut before
// the first batch reaching it, its offset and time indexes are cut to match
// (in memory and on disk, no rescan) and it becomes the active segment, and
// every changed file is fsynced before returning: a restart, clean or not,
// finds the truncated log. Then the leader-epoch cache is truncated from
// the end, and the high watermark and recovery point are clamped to the
// new log end offset.

// TruncateTo removes every batch holding an offset >= offset; a batch
// straddling offset goes whole, so the end may fall below offset. A no-op
// if offset >= LogEndOffset. At or below the log start offset the log is
// emptied and restarts at offset (a negative offset counts as 0). A lazy
// log is empty at 0 already and stays lazy.
func (l *Log) TruncateTo(offset int64) (err error) {
	defer func() { err = l.dirs.failed(err) }()
	defer l.pauseCleaning()()
	if err := l.lockLoaded(); err != nil {
		return err
	}
	defer l.mu.Unlock()
	if l.lazy.Load() || offset >= l.leo() {
		return nil
	}
	offset = max(offset, 0)
	l.rewriting() // before any file changes (section.go)
	if offset <= l.startLocked() {
		return l.truncateFullyLocked(offset)
	}
	defer l.afterTruncateLocked()
	i := l.segmentFor(offset)
	var errs []error
	for _, s := range l.segs[i+1:] {
		errs = append(errs, s.remove())
	}
	if len(l.segs) > i+1 {
		l.segs = l.segs[:i+1]
		errs = append(errs, syncDir(l.dir()))
	}
	s := l.segs[i]
	s.active, s.rollWall, s.rollKnown = true, -1, false
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := s.acquire(); err != nil {
		return err
	}
	defer s.release()
	return s.truncateTail(offset)
}

// TruncateFullyAndStartAt empties the log and restarts it at offset (a
// follower whose fetch offset fell below the leader's log start): one empty
// segment at offset, the leader-epoch cache cleared, the high watermark and
// recovery point at offset. A lazy log restarted at 0 stays lazy; at any
// other offset it is materialized first.
func (l *Log) TruncateFullyAndStartAt(offset int64) (err error) {
	defer func() { err = l.dirs.failed(err) }()
	if offset < 0 {
		return fmt.Errorf("storage: truncate %s to negative offset %d", l.tp, offset)
	}
	defer l.pauseCleaning()()
	if err := l.lockLoaded(); err != nil {
		return err
	}
	defer l.mu.Unlock()
	if l.lazy.Load() {
		if offset == 0 {
			l.epochs.clear()
			l.hw.Store(0)
			return nil
		}
		if err := l.materializeLocked(); err != nil {
			return err
		}
	}
	return l.truncateFullyLocked(offset)
}

// truncateFullyLocked replaces every segment by one empty segment at
// offset.
func (l *Log) truncateFullyLocked(offset int64) error {
	l.rewriting()
	for _, s := range l.segs {
		if err := s.remove(); err != nil {
			return err
		}
	}
	l.segs = nil
	err := createFiles(segmentPath(l.dir(), offset))
	s := newSegment(l.dir(), offset, l.dirs.cache, l.config().IndexIntervalBytes)
	s.active, s.tsKnown = true, true
	l.segs = []*segment{s}
	if err == nil {
		err = syncDir(l.dir())
	}
	l.recoveryPoint = offset
	if l.logStart != offset {
		l.logStart = offset
		l.dirs.markLogStartDirty()
	}
	l.unflushed = 0
	if l.firstDirty >= 0 {
		l.firstDirty = offset
		l.dirs.cleanerDirty.Store(true)
	}
	l.dirs.markDirty()
	err = errors.Join(err, l.producersAfterFullTruncateLocked())
	if l.epochs.clear() {
		l.persistTruncatedEpochsLocked()
	}
	l.hw.Store(offset)
	l.dirs.markHWDirty()
	return err
}

// afterTruncateLocked brings the leader-epoch cache, the high watermark and
// the recovery point in line with a lower log end offset.
func (l *Log) afterTruncateLocked() {
	leo := l.leo()
	if l.epochs.truncateFromEnd(leo) {
		l.persistTruncatedEpochsLocked()
	}
	l.clampHWLocked()
	l.recoveryPoint = min(l.recoveryPoint, leo)
	l.dirs.markDirty()
	if l.firstDirty > leo {
		l.firstDirty = leo
		l.dirs.cleanerDirty.Store(true)
	}
	if err := l.producersAfterTruncateLocked(); err != nil {
		l.dirs.log.Warn("storage: producer state after truncation", "partition", l.tp, "err", err)
	}
}

// truncateTail cuts s before its first batch holding an offset >= offset,
// makes it the active segment and fsyncs it. The offset index keeps the
// entries of the batches left, the time index those whose offset is left;
// the largest timestamp is recomputed from the last time entry and the
// headers after it, as Kafka's LogSegment.truncateTo. The caller pinned s,
// set s.active and holds Log.mu for writing.
func (s *segment) truncateTail(offset int64) error {
	s.mu.Lock()
	err := s.openAppendersLocked()
	if err == nil {
		err = s.truncateTailLocked(offset)
	}
	fds := s.fdsLocked()
	s.mu.Unlock()
	s.cache.touch(s, fds)
	if err != nil {
		return err
	}
	return s.sync()
}

func (s *segment) truncateTailLocked(offset int64) error {
	// The batch at an offset index entry below offset stays: start there.
	pos, next := lookupOffset(s.idx, offset-1-s.base), s.base
	var hb [record.HeaderSize]byte
	for s.size-pos >= record.HeaderSize {
		h, err := readHeaderAt(s, hb[:], pos)
		if err != nil {
			return err
		}
		if h.LastOffset() >= offset {
			break
		}
		next = h.LastOffset() + 1
		pos += int64(h.Size())
	}
	if pos >= s.size {
		return nil // nothing at or past offset here
	}
	if err := s.f.Truncate(pos); err != nil {
		return fmt.Errorf("storage: truncate: %w", err)
	}
	k := sort.Search(len(s.idx), func(i int) bool { return int64(s.idx[i].pos) >= pos })
	j := sort.Search(len(s.tidx), func(i int) bool { return s.base+int64(s.tidx[i].rel) >= next })
	s.idx, s.tidx = s.idx[:k], s.tidx[:j]
	if err := errors.Join(s.idxF.Truncate(int64(k*offsetEntrySize)), s.tidxF.Truncate(int64(j*timeEntrySize))); err != nil {
		return fmt.Errorf("storage: truncate index: %w", err)
	}
	s.size, s.next = pos, next
	s.sinceIdx = pos
	if k > 0 {
		s.sinceIdx = pos - int64(s.idx[k-1].pos)
	}
	return s.reloadMaxTimestampLocked()
}

// reloadMaxTimestampLocked recomputes the largest timestamp: the last time
// index entry covers every batch before the indexed batch it points into;
// the headers from there on are read.
func (s *segment) reloadMaxTimestampLocked() error {
	s.maxTS, s.maxTSOff, s.tsKnown = -1, -1, true
	from := int64(0)
	if n := len(s.tidx); n > 0 {
		e := s.tidx[n-1]
		s.maxTS, s.maxTSOff = e.ts, s.base+int64(e.rel)
		from = lookupOffset(s.idx, int64(e.rel))
	}
	var hb [record.HeaderSize]byte
	for pos := from; s.size-pos >= record.HeaderSize; {
		h, err := readHeaderAt(s, hb[:], pos)
		if err != nil {
			return err
		}
		if h.MaxTimestamp > s.maxTS {
			s.maxTS, s.maxTSOff = h.MaxTimestamp, h.LastOffset()
		}
		pos += int64(h.Size())
	}
	return nil
}

// readHeaderAt reads the batch header at pos of s's open log file.
func readHeaderAt(s *segment, hb []byte, pos int64) (record.Header, error) {
	if _, err := s.f.ReadAt(hb, pos); err != nil {
		return record.Header{}, fmt.Errorf("storage: read: %w", err)
	}
	return record.ReadHeader(hb)
}
