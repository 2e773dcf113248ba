package storage

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/samsa-kafka/samsa/internal/record"
)

// AppendInfo describes a successful append.
type AppendInfo struct {
	FirstOffset, LastOffset int64
	LogAppendTime           int64 // -1 unless message.timestamp.type=LogAppendTime
	LogStartOffset          int64
	// Duplicate: the batch retried one the log holds (idempotent producer):
	// nothing was appended, the offsets and time are the original's.
	Duplicate bool
}

// Append is AppendAsLeader with the latest leader epoch of the log, or 0 if
// it has none.
func (l *Log) Append(records []byte, hdrs []record.Header, now time.Time) (AppendInfo, error) {
	return l.appendLeader(records, hdrs, now, -1, nil)
}

// AppendAsLeader is the leader path. records holds whole batches validated
// by record.Validate (or, produced, by record.ReadProduced and
// CheckProduced), whose headers are hdrs. Offsets and the
// PartitionLeaderEpoch leaderEpoch are written in place (records and hdrs
// are modified), LogAppendTime is stamped if configured, the segment is
// rolled first if needed, and the batches are written with one pwrite. A
// leaderEpoch newer than the latest one is recorded in the leader-epoch
// cache as starting at the first offset. It flushes when flush.messages is
// reached. Batches of idempotent producers are checked first
// (producerstate.go): a retry of a batch the log holds returns that
// batch's AppendInfo with Duplicate set and appends nothing; a batch
// breaking the rules is refused (ErrOutOfOrderSequence,
// ErrInvalidProducerEpoch, ErrInvalidProducerBatch). Control batches are
// refused (record.ErrInvalidRecord: clients may not write them, as Kafka's
// LogValidator); markers go through AppendTxnMarker.
func (l *Log) AppendAsLeader(records []byte, hdrs []record.Header, now time.Time, leaderEpoch int32) (AppendInfo, error) {
	if leaderEpoch < 0 {
		return AppendInfo{}, fmt.Errorf("storage: invalid leader epoch %d", leaderEpoch)
	}
	return l.appendLeader(records, hdrs, now, leaderEpoch, nil)
}

// appendLeader appends as leader in epoch, or in the latest epoch (0 if
// none) if epoch < 0. marker is nil for client batches (no control batch
// allowed), else the one transaction marker records holds, checked by the
// marker rules (txn.go).
func (l *Log) appendLeader(records []byte, hdrs []record.Header, now time.Time, epoch int32, marker *record.Marker) (AppendInfo, error) {
	return l.appendLeaderGuarded(records, hdrs, now, epoch, marker, unverified)
}

// unverified: an append that does not check verification guards.
const unverified = math.MaxUint64

// appendLeaderGuarded is appendLeader checking the KIP-890 guard of the
// producers whose batch opens a transaction (txnlog.go), unless guard is
// unverified.
func (l *Log) appendLeaderGuarded(records []byte, hdrs []record.Header, now time.Time, epoch int32, marker *record.Marker, guard uint64) (_ AppendInfo, err error) {
	defer func() { err = l.dirs.failed(err) }()
	if err := checkLayout(records, hdrs); err != nil {
		return AppendInfo{}, err
	}
	if marker == nil {
		for _, h := range hdrs {
			if h.Control() {
				return AppendInfo{}, fmt.Errorf("%w: clients are not allowed to write control records (partition %s)", record.ErrInvalidRecord, l.tp)
			}
			if h.Transactional() && h.ProducerID < 0 {
				return AppendInfo{}, fmt.Errorf("%w: transactional batch without a producer id (partition %s)", record.ErrInvalidRecord, l.tp)
			}
		}
	}
	var dup *AppendInfo
	err = l.lockForAppend(func(end int64) (bool, error) {
		if marker != nil {
			if err := l.checkMarkerLocked(*marker); err != nil {
				return false, err
			}
		} else if b, isDup, err := l.checkProducersLocked(hdrs); err != nil {
			return false, err
		} else if isDup {
			info := l.dupInfoLocked(b)
			dup = &info
			return false, errDuplicate
		} else if guard != unverified {
			if err := l.checkGuardsLocked(hdrs, guard); err != nil {
				return false, err
			}
		}
		if epoch < 0 {
			epoch = 0
			if e, ok := l.epochs.latest(); ok {
				epoch = e.epoch
			}
		}
		return l.epochs.assign(epoch, end), nil
	})
	if dup != nil {
		return *dup, nil
	}
	if err != nil {
		return AppendInfo{}, err
	}
	defer l.mu.Unlock()
	info := AppendInfo{FirstOffset: l.leo(), LogAppendTime: -1}
	nowMs := now.UnixMilli()
	if l.config().LogAppendTime {
		info.LogAppendTime = nowMs
	}
	next, pos := info.FirstOffset, 0
	for i := range hdrs {
		h := &hdrs[i]
		batch := records[pos : pos+h.Size()]
		record.SetBaseOffset(batch, next)
		record.SetPartitionLeaderEpoch(batch, epoch)
		h.BaseOffset, h.PartitionLeaderEpoch = next, epoch
		if l.config().LogAppendTime {
			record.SetLogAppendTime(batch, nowMs)
			h.MaxTimestamp = nowMs
			h.Attributes |= 0x08
		}
		next = h.LastOffset() + 1
		pos += h.Size()
	}
	info.LastOffset = next - 1
	if err := l.appendLocked(records, hdrs, nowMs); err != nil {
		return AppendInfo{}, err
	}
	info.LogStartOffset = l.startLocked()
	if err := l.updateProducersLocked(records, hdrs); err != nil {
		return AppendInfo{}, err
	}
	return info, nil
}

// errDuplicate makes lockForAppend give up on a retried batch: nothing is
// appended, and the caller answers with the original's offsets.
var errDuplicate = errors.New("storage: duplicate batch")

// AppendAsFollower appends batches that already carry their offsets and
// leader epochs (a replica fetch); each PartitionLeaderEpoch newer than the
// latest is recorded in the leader-epoch cache as starting at its batch,
// and the producer state records the batches unchecked (as Kafka's
// replication origin), transaction markers included. ErrOffsetOutOfOrder if they start below the log end offset or are not
// increasing.
func (l *Log) AppendAsFollower(records []byte, hdrs []record.Header) (_ AppendInfo, err error) {
	defer func() { err = l.dirs.failed(err) }()
	if err := checkLayout(records, hdrs); err != nil {
		return AppendInfo{}, err
	}
	next := int64(0)
	err = l.lockForAppend(func(end int64) (bool, error) {
		next = end
		for _, h := range hdrs {
			if h.BaseOffset < next || h.LastOffsetDelta < 0 {
				return false, fmt.Errorf("%w: batch at %d, expected at least %d", ErrOffsetOutOfOrder, h.BaseOffset, next)
			}
			next = h.LastOffset() + 1
		}
		changed := false
		for _, h := range hdrs {
			changed = l.epochs.assign(h.PartitionLeaderEpoch, h.BaseOffset) || changed
		}
		return changed, nil
	})
	if err != nil {
		return AppendInfo{}, err
	}
	defer l.mu.Unlock()
	info := AppendInfo{FirstOffset: hdrs[0].BaseOffset, LastOffset: next - 1, LogAppendTime: -1}
	if err := l.appendLocked(records, hdrs, -1); err != nil {
		return AppendInfo{}, err
	}
	info.LogStartOffset = l.startLocked()
	if err := l.updateProducersLocked(records, hdrs); err != nil {
		return AppendInfo{}, err
	}
	return info, nil
}

// checkLayout checks that hdrs describe records exactly, so offsets written
// in place land on batch boundaries.
func checkLayout(records []byte, hdrs []record.Header) error {
	if len(hdrs) == 0 {
		return errors.New("storage: append of no batches")
	}
	n := 0
	for _, h := range hdrs {
		if h.BatchLength < record.HeaderSize-12 {
			return fmt.Errorf("storage: bad batch length %d", h.BatchLength)
		}
		n += h.Size()
	}
	if n != len(records) {
		return fmt.Errorf("storage: headers cover %d bytes of %d", n, len(records))
	}
	return nil
}

// appendLocked rolls if needed, writes, advances the log end offset and
// flushes per flush.messages. nowMs < 0 means no clock (follower): the
// segment.ms roll uses the batch timestamps then.
func (l *Log) appendLocked(records []byte, hdrs []record.Header, nowMs int64) error {
	if int64(len(records)) > min(l.config().SegmentBytes, math.MaxInt32) {
		return fmt.Errorf("%w: %d bytes, segment.bytes %d", ErrRecordSetTooLarge, len(records), l.config().SegmentBytes)
	}
	if nowMs < 0 {
		nowMs = hdrs[0].MaxTimestamp
	}
	first, last := hdrs[0].BaseOffset, hdrs[len(hdrs)-1].LastOffset()
	s := l.active()
	if err := s.acquire(); err != nil {
		return err
	}
	roll := l.shouldRoll(s, int64(len(records)), hdrs, nowMs)
	if roll {
		s.release()
		if err := l.rollLocked(first); err != nil {
			return err
		}
		s = l.active()
		if err := s.acquire(); err != nil {
			return err
		}
	}
	defer s.release()
	if err := s.write(records, s.size, hdrs); err != nil {
		return err
	}
	if s.size == 0 {
		s.rollWall, s.rollTS, s.rollKnown, s.rollMtime = nowMs, hdrs[0].MaxTimestamp, true, false
		if s.rollTS < 0 {
			s.rollTS, s.rollMtime = nowMs, true // as a fresh file's mtime
		}
	}
	s.size += int64(len(records))
	s.next = last + 1
	for _, h := range hdrs {
		l.unflushed += int64(h.NumRecords)
	}
	if l.unflushed >= l.config().FlushMessages {
		return l.flushLocked(nowMs)
	}
	return nil
}

// shouldRoll is Kafka's LogSegment.shouldRoll: a non-empty segment rolls if
// the append would pass segment.bytes, segment.ms (or max.compaction.lag.ms
// if shorter on a compacted log, KIP-354) less the segment's jitter elapsed
// on its roll clock, an index is full, or the offsets would overflow the
// relative int32 of the indexes.
func (l *Log) shouldRoll(s *segment, size int64, hdrs []record.Header, nowMs int64) bool {
	if s.size == 0 {
		return false
	}
	cfg := l.config()
	rollMs := cfg.SegmentMs
	if cfg.Compact {
		rollMs = min(rollMs, cfg.MaxCompactionLagMs)
	}
	lastOffset := hdrs[len(hdrs)-1].LastOffset()
	return s.size+size > cfg.SegmentBytes ||
		timeWaitedForRoll(s, hdrs, nowMs) >= rollMs-s.rollJitterMs(cfg) ||
		s.indexFull(l.config().SegmentIndexBytes) ||
		lastOffset-s.base > math.MaxInt32 || s.size+size > math.MaxInt32
}

// timeWaitedForRoll is Kafka's LogSegment.timeWaitedForRoll: the largest
// timestamp of the append minus the max timestamp of the segment's first
// batch, or, if that batch has none, the time since the .log mtime. A
// segment first appended to in this process also counts the wall-clock time
// since that append, so that stale producer timestamps still roll it.
func timeWaitedForRoll(s *segment, hdrs []record.Header, nowMs int64) int64 {
	if !s.rollKnown {
		s.loadRollClock()
	}
	waited := nowMs - s.rollTS
	if !s.rollMtime {
		msgTS := int64(-1)
		for _, h := range hdrs {
			msgTS = max(msgTS, h.MaxTimestamp)
		}
		waited = msgTS - s.rollTS
	}
	if s.rollWall >= 0 {
		waited = max(waited, nowMs-s.rollWall)
	}
	return waited
}

// rollLocked finishes the active segment (final time index entry, fsync)
// and starts a new one at base.
func (l *Log) rollLocked(base int64) error {
	old := l.active()
	if err := old.acquire(); err != nil {
		return err
	}
	err := old.deactivate()
	old.release()
	if err != nil {
		return err
	}
	if base < old.next {
		base = old.next
	}
	if err := l.snapshotLocked(base); err != nil {
		return err
	}
	if err := createFiles(segmentPath(l.dir(), base)); err != nil {
		return err
	}
	syncDir(l.dir())
	s := newSegment(l.dir(), base, l.dirs.cache, l.config().IndexIntervalBytes)
	s.active = true
	s.tsKnown = true
	s.loaded = false
	l.segs = append(l.segs, s)
	l.dirs.log.Debug("storage: rolled segment", "partition", l.tp, "base", base)
	return nil
}

// flushLocked fsyncs the active segment and moves the recovery point to the
// log end offset. Rolled segments were fsynced when they rolled.
func (l *Log) flushLocked(nowMs int64) error {
	s := l.active()
	if err := s.acquire(); err != nil {
		return err
	}
	defer s.release()
	if err := s.sync(); err != nil {
		return err
	}
	l.unflushed = 0
	l.lastFlushMs = nowMs
	l.recoveryPoint = l.leo()
	l.dirs.markDirty()
	return nil
}

// Flush fsyncs the log (used on demand and by the manager).
func (l *Log) Flush(now time.Time) (err error) {
	defer func() { err = l.dirs.failed(err) }()
	if !l.loaded.Load() {
		return nil
	}
	if err := l.lockLoaded(); err != nil {
		return err
	}
	defer l.mu.Unlock()
	return l.flushLocked(now.UnixMilli())
}

// flushIfDue flushes per flush.ms.
func (l *Log) flushIfDue(nowMs int64) (err error) {
	defer func() { err = l.dirs.failed(err) }()
	if !l.loaded.Load() {
		return nil
	}
	if err := l.lockLoaded(); err != nil {
		return err
	}
	defer l.mu.Unlock()
	if l.unflushed > 0 && nowMs-l.lastFlushMs >= l.config().FlushMs {
		return l.flushLocked(nowMs)
	}
	return nil
}
