package storage

// The log's producer state (the rules are in producerstate.go, the files
// in producersnapshot.go), kept in line with the log as Kafka's
// ProducerStateManager is:
//
//   - AppendAsLeader checks every idempotent batch under the append lock
//     before anything is written (a retry of a remembered batch is answered
//     with its offsets, nothing appended); both append paths update the
//     state after the write.
//   - A roll writes <new segment base>.snapshot (empty if no producer: an
//     unclean load then replays at most the active segment) and keeps the
//     newest snapshotsKept; a clean close writes one at the log end offset
//     if the state or an older snapshot exists.
//   - Loading reads the newest valid snapshot at or below the log end offset
//     (corrupt ones are logged and deleted) and replays the batch headers
//     after it. A clean load without any snapshot has no producer; an
//     unclean one replays the whole log.
//   - TruncateTo deletes the snapshots above the new end and reloads;
//     TruncateFullyAndStartAt drops them all; retention deletes those below
//     the new log start and keeps the producers (KIP-360).
//
// A log nobody produced to idempotently holds a nil state: a non-idempotent
// append costs one comparison per batch.

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/samsa-kafka/samsa/internal/record"
)

// ProducerInfo is one active producer of a partition, as DescribeProducers
// reports it.
type ProducerInfo struct {
	ProducerID            int64
	ProducerEpoch         int16
	LastSequence          int32 // -1 if none
	LastTimestamp         int64 // -1 if none
	CoordinatorEpoch      int32 // -1 if none
	CurrentTxnStartOffset int64 // -1 if none
}

// checkProducersLocked applies the producer rules to the batches about to
// be appended as leader (mu held for writing). A retry of a remembered
// batch is reported with dup; it is recognised for single-batch appends
// (every produce), a multi-batch append holding one is refused.
func (l *Log) checkProducersLocked(hdrs []record.Header) (dup batchMeta, isDup bool, err error) {
	var cur *producerStates
	if l.onDisk != nil {
		cur = l.producers
	}
	if len(hdrs) == 1 {
		if h := &hdrs[0]; h.ProducerID >= 0 && !h.Control() {
			return cur.checkBatch(h)
		}
		return batchMeta{}, false, nil
	}
	var scratch *producerStates // copies of the entries the batches touch
	for i := range hdrs {
		h := &hdrs[i]
		if h.ProducerID < 0 || h.Control() {
			continue
		}
		if scratch == nil {
			scratch = newProducerStates()
		}
		if _, ok := scratch.producers[h.ProducerID]; !ok && cur != nil && cur.producers[h.ProducerID] != nil {
			c := *cur.producers[h.ProducerID]
			scratch.producers[h.ProducerID] = &c
		}
		if _, d, err := scratch.checkBatch(h); err != nil {
			return batchMeta{}, false, err
		} else if d {
			return batchMeta{}, false, ErrOutOfOrderSequence
		}
		scratch.update(h)
	}
	return batchMeta{}, false, nil
}

// updateProducersLocked records appended batches, the whole batches in
// records (mu held for writing, the log materialized): data batches of
// producers, and transaction markers, aborts indexed (txn.go).
func (l *Log) updateProducersLocked(records []byte, hdrs []record.Header) error {
	var errs []error
	pos := 0
	for i := range hdrs {
		h := &hdrs[i]
		if h.ProducerID >= 0 {
			if err := l.applyBatchLocked(h, records[pos:pos+h.Size()], math.MinInt64); err != nil {
				errs = append(errs, err)
			}
		}
		pos += h.Size()
	}
	if l.producers != nil {
		l.producers.pruneReplicated(l.hw.Load())
	}
	return errors.Join(errs...)
}

// applyBatchLocked records one batch of a producer (id >= 0): a data
// batch by its header, a transaction marker (batch is read for it) ends
// the producer's transaction, and an abort whose marker is at or after
// indexFrom is added to the aborted-transaction index. A control batch
// that does not parse is logged and skipped (it is in the log already).
func (l *Log) applyBatchLocked(h *record.Header, batch []byte, indexFrom int64) error {
	if l.producers == nil {
		l.producers = newProducerStates()
	}
	if !h.Control() {
		if h.Transactional() {
			l.dropGuardLocked(h.ProducerID) // its transaction is open now
		}
		l.producers.update(h)
		return nil
	}
	l.dropGuardLocked(h.ProducerID) // the transaction being verified is over
	m, ok, err := record.ParseMarker(batch)
	if err != nil {
		l.dirs.log.Warn("storage: skipping unreadable control batch", "partition", l.tp, "offset", h.BaseOffset, "err", err)
		return nil
	}
	if !ok {
		return nil
	}
	t, completed := l.producers.endTxn(m, h.BaseOffset)
	if !completed || !t.aborted || t.last < indexFrom {
		return nil
	}
	return l.addAbortedLocked(abortedTxn{producerID: t.producerID, firstOffset: t.first, lastOffset: t.last,
		lastStableOffset: l.producers.indexLSO(t)})
}

// dupInfo is the AppendInfo of a retried batch: the original's.
func (l *Log) dupInfoLocked(b batchMeta) AppendInfo {
	info := AppendInfo{FirstOffset: b.firstOffset(), LastOffset: b.lastOffset, LogAppendTime: -1, Duplicate: true}
	if l.config().LogAppendTime {
		info.LogAppendTime = b.timestamp
	}
	if l.onDisk != nil {
		info.LogStartOffset = l.startLocked()
	}
	return info
}

// loadProducersLocked builds the state and the aborted-transaction index
// at load (see the file comment and txnindex.go); unclean tells a load
// after an unclean shutdown. snaps and txns are the snapshot and
// .txnindex offsets found, sorted.
func (l *Log) loadProducersLocked(snaps, txns []int64, unclean bool) error {
	l.snapshots = snaps
	if err := l.dropSnapshotsAboveLocked(l.leo()); err != nil {
		return err
	}
	indexFrom, err := l.loadTxnIndexLocked(txns)
	if err != nil {
		return err
	}
	if unclean {
		indexFrom = replayStart
	}
	if len(l.snapshots) == 0 && !unclean && indexFrom == noRebuild {
		l.producers = nil // a clean close leaves a snapshot if any producer
		return nil
	}
	return l.reloadProducersLocked(indexFrom)
}

// replayStart: rebuild the aborted-transaction index from where the
// producer-state replay starts.
const replayStart = math.MinInt64

// reloadProducersLocked replaces the state by the newest valid snapshot's,
// then replays the log after it (the whole log if none is valid); the
// producers expired by then are left out, as Kafka's loadFromSnapshot.
// The index entries of markers at or after indexFrom (noRebuild: none,
// replayStart: the replay's first offset) are rebuilt in the replay.
func (l *Log) reloadProducersLocked(indexFrom int64) error {
	if err := l.rebuildProducersLocked(indexFrom); err != nil {
		return err
	}
	if l.producers != nil && l.dirs.now != nil {
		l.producers.expire(l.dirs.now().UnixMilli(), l.dirs.producerExpirationMs)
	}
	return nil
}

// rebuildProducersLocked is reloadProducersLocked before expiration. A
// snapshot above indexFrom is passed over (kept): the replay must cover
// the offsets whose index entries are rebuilt.
func (l *Log) rebuildProducersLocked(indexFrom int64) error {
	l.producers = nil
	from := l.segs[0].base
	for i := len(l.snapshots) - 1; i >= 0; i-- {
		off := l.snapshots[i]
		if indexFrom != replayStart && off > indexFrom {
			continue
		}
		s, err := readSnapshot(l.dir(), off)
		if err == nil {
			l.producers, from = s, max(off, from)
			break
		}
		l.dirs.log.Warn("storage: ignoring producer snapshot", "partition", l.tp, "offset", off, "err", err)
		l.snapshots = slices.Delete(l.snapshots, i, i+1)
		if err := removeSnapshot(l.dir(), off); err != nil {
			return err
		}
	}
	if indexFrom == replayStart {
		indexFrom = from
	}
	if indexFrom != noRebuild {
		if err := l.dropTxnsAboveLocked(indexFrom - 1); err != nil {
			return err
		}
	}
	return l.replayProducersLocked(from, indexFrom)
}

// replayProducersLocked applies the batches from offset from to the log
// end to the state, as a follower would, indexing the aborts whose marker
// is at or after indexFrom.
func (l *Log) replayProducersLocked(from, indexFrom int64) error {
	for i := l.segmentFor(from); i < len(l.segs); i++ {
		s := l.segs[i]
		if err := s.acquire(); err != nil {
			return err
		}
		s.mu.Lock()
		pos := int64(0)
		if from > s.base {
			pos = lookupOffset(s.idx, from-1-s.base)
		}
		var ferr error
		_, _, err := s.scanLocked(pos, s.size, s.base, false, func(p int64, h record.Header) {
			if h.LastOffset() < from || h.ProducerID < 0 || ferr != nil {
				return
			}
			var batch []byte
			if h.Control() {
				batch = make([]byte, h.Size())
				if _, err := s.f.ReadAt(batch, p); err != nil {
					ferr = fmt.Errorf("storage: read control batch: %w", err)
					return
				}
			}
			ferr = l.applyBatchLocked(&h, batch, indexFrom)
		})
		s.mu.Unlock()
		s.release()
		if err = errors.Join(err, ferr); err != nil {
			return err
		}
	}
	if l.producers != nil {
		l.producers.pruneReplicated(l.hw.Load())
	}
	return nil
}

// snapshotLocked writes the state as of offset (an empty one if nil) and
// deletes the snapshots beyond the newest snapshotsKept.
func (l *Log) snapshotLocked(offset int64) error {
	if err := writeSnapshot(l.dir(), offset, l.producers); err != nil {
		return err
	}
	if i, found := slices.BinarySearch(l.snapshots, offset); !found {
		l.snapshots = slices.Insert(l.snapshots, i, offset)
	}
	for len(l.snapshots) > snapshotsKept {
		if err := removeSnapshot(l.dir(), l.snapshots[0]); err != nil {
			return err
		}
		l.snapshots = l.snapshots[1:]
	}
	return nil
}

// snapshotOnCloseLocked writes the clean-close snapshot at the log end
// offset, unless the log has neither producers nor snapshots (then a clean
// load knows it has none) or the newest snapshot is there already.
func (l *Log) snapshotOnCloseLocked() error {
	n := len(l.snapshots)
	if l.producers == nil && (n == 0 || l.snapshots[n-1] == l.leo()) {
		return nil
	}
	return l.snapshotLocked(l.leo())
}

// dropSnapshotsAboveLocked deletes the snapshots above offset, durably:
// the log may grow past offset again with other batches, which a snapshot
// coming back after a power loss would not describe.
func (l *Log) dropSnapshotsAboveLocked(offset int64) error {
	removed := false
	for n := len(l.snapshots); n > 0 && l.snapshots[n-1] > offset; n-- {
		if err := removeSnapshot(l.dir(), l.snapshots[n-1]); err != nil {
			return err
		}
		l.snapshots, removed = l.snapshots[:n-1], true
	}
	if removed {
		return syncDir(l.dir())
	}
	return nil
}

// dropSnapshotsBelowLocked deletes the snapshots below offset (the new log
// start); the producers stay.
func (l *Log) dropSnapshotsBelowLocked(offset int64) error {
	for len(l.snapshots) > 0 && l.snapshots[0] < offset {
		if err := removeSnapshot(l.dir(), l.snapshots[0]); err != nil {
			return err
		}
		l.snapshots = l.snapshots[1:]
	}
	return nil
}

// producersAfterTruncateLocked brings the state in line with a log cut
// back to its end offset: later snapshots go, and the state is rebuilt
// from the newest one left unless there was nothing to rebuild.
func (l *Log) producersAfterTruncateLocked() error {
	if err := l.dropTxnsAboveLocked(l.leo() - 1); err != nil {
		return err
	}
	if err := l.dropSnapshotsAboveLocked(l.leo()); err != nil {
		return err
	}
	if l.producers == nil && len(l.snapshots) == 0 {
		return nil
	}
	return l.reloadProducersLocked(noRebuild)
}

// producersAfterFullTruncateLocked forgets every producer, snapshot and
// aborted transaction.
func (l *Log) producersAfterFullTruncateLocked() error {
	err := errors.Join(l.dropSnapshotsAboveLocked(math.MinInt64), l.dropAllTxnsLocked())
	l.producers = nil
	return err
}

// ExpireProducers removes the producers of a loaded log idle for at least
// expirationMs at nowMs (producer.id.expiration.ms) and returns how many.
func (l *Log) ExpireProducers(nowMs, expirationMs int64) int {
	if !l.loaded.Load() {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || l.onDisk == nil || l.producers == nil {
		return 0
	}
	return l.producers.expire(nowMs, expirationMs)
}

// ActiveProducers lists the producers the partition has state for, sorted
// by id (DescribeProducers). It loads the log.
func (l *Log) ActiveProducers() ([]ProducerInfo, error) {
	if err := l.rlockLoaded(); err != nil {
		return nil, err
	}
	defer l.mu.RUnlock()
	if l.onDisk == nil || l.producers == nil {
		return nil, nil
	}
	out := make([]ProducerInfo, 0, len(l.producers.producers))
	for id, e := range l.producers.producers {
		out = append(out, ProducerInfo{ProducerID: id, ProducerEpoch: e.epoch, LastSequence: e.lastSeq(),
			LastTimestamp: e.lastTimestamp(), CoordinatorEpoch: e.coordinatorEpoch, CurrentTxnStartOffset: e.txnFirstOffset})
	}
	slices.SortFunc(out, func(a, b ProducerInfo) int { return cmp.Compare(a.ProducerID, b.ProducerID) })
	return out, nil
}
