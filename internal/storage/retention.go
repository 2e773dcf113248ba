package storage

import (
	"os"
	"time"

	"github.com/samsa-kafka/samsa/internal/record"
)

// enforceRetention deletes the oldest segments past retention.ms or beyond
// retention.bytes, as Kafka's deleteOldSegments does: time first, then size
// (delete the oldest while the rest still holds at least retention.bytes).
// If every segment is due, the active one is rolled first so the log keeps
// one (empty) segment; LogStartOffset moves to the first remaining base.
func (l *Log) enforceRetention(now time.Time) error {
	if err := l.lockLoaded(); err != nil {
		return err
	}
	defer l.mu.Unlock()
	n, err := l.expiredByTime(now.UnixMilli())
	if err != nil {
		return err
	}
	n = l.expiredBySize(n)
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
	l.log.Info("storage: deleted segments by retention", "partition", l.tp, "count", n, "logStartOffset", l.segs[0].base)
	return nil
}

// deletable reports whether segment i may go at all: never an empty active
// segment.
func (l *Log) deletable(i int) bool {
	return !(i == len(l.segs)-1 && l.segs[i].size == 0)
}

// expiredByTime counts the leading segments whose largest timestamp (file
// modification time if none) is older than retention.ms.
func (l *Log) expiredByTime(nowMs int64) (int, error) {
	if l.cfg.RetentionMs < 0 {
		return 0, nil
	}
	n := 0
	for ; n < len(l.segs) && l.deletable(n); n++ {
		s := l.segs[n]
		ts, _, err := s.timestamps()
		if err != nil {
			return n, err
		}
		if ts < 0 {
			if fi, err := os.Stat(s.path + ".log"); err == nil {
				ts = fi.ModTime().UnixMilli()
			}
		}
		if nowMs-ts <= l.cfg.RetentionMs {
			break
		}
	}
	return n, nil
}

// expiredBySize extends n, the segments already due, by size retention.
func (l *Log) expiredBySize(n int) int {
	if l.cfg.RetentionBytes < 0 {
		return n
	}
	var total int64
	for _, s := range l.segs[n:] {
		total += s.size
	}
	for ; n < len(l.segs) && l.deletable(n); n++ {
		s := l.segs[n]
		if total-s.size < l.cfg.RetentionBytes {
			break
		}
		total -= s.size
	}
	return n
}

// Truncate drops every batch holding offsets >= to (a batch straddling to is
// dropped whole, so the end may fall below to). Truncating at or below the
// start leaves one empty segment starting at to.
func (l *Log) Truncate(to int64) error {
	if err := l.lockLoaded(); err != nil {
		return err
	}
	defer l.mu.Unlock()
	if to >= l.leo() {
		return nil
	}
	defer func() { l.recoveryPoint = min(l.recoveryPoint, l.leo()); l.dirs.markDirty() }()
	if to <= l.segs[0].base {
		return l.truncateFully(max(to, 0))
	}
	i := l.segmentFor(to)
	for _, s := range l.segs[i+1:] {
		if err := s.remove(); err != nil {
			return err
		}
	}
	l.segs = l.segs[:i+1]
	s := l.segs[i]
	s.active, s.rollBase = true, -1
	if err := s.acquire(); err != nil {
		return err
	}
	defer s.release()
	f, pos := s.locate(to)
	pos, _, found, err := seekBatch(f, pos, s.size, func(h record.Header) bool { return h.LastOffset() >= to })
	if err != nil {
		return err
	}
	if !found {
		pos = s.size
	}
	next, err := s.truncate(pos)
	if err != nil {
		return err
	}
	s.size, s.next = pos, next
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.openAppendersLocked()
}

func (l *Log) truncateFully(to int64) error {
	for _, s := range l.segs {
		if err := s.remove(); err != nil {
			return err
		}
	}
	if err := createFiles(segmentPath(l.dir, to)); err != nil {
		return err
	}
	syncDir(l.dir)
	s := newSegment(l.dir, to, l.cache, l.cfg.IndexIntervalBytes)
	s.active, s.tsKnown = true, true
	l.segs = []*segment{s}
	return nil
}
