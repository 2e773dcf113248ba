package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/samsa-kafka/samsa/internal/record"
)

// The Log's leader-epoch cache (epoch.go) lives in memory under Log.mu and
// is written to <partition dir>/leader-epoch-checkpoint (temp file, fsync,
// rename) on every change. An assignment is written before the batches it
// describes, so the file never misses an epoch the log holds; after a crash
// it may name epochs past the log end (or before its start), which loading
// trims (truncateFromEnd/truncateFromStart, as Kafka's LogLoader). A
// missing or corrupt file is rebuilt from the PartitionLeaderEpoch of the
// batch headers. A lazy log (lazy.go) keeps its cache in memory only; its
// materialization writes it with the partition's other files.

func (l *Log) epochPath() string { return filepath.Join(l.dir(), epochCheckpointFile) }

// endLocked is the log end offset under mu: 0 for a lazy log.
func (l *Log) endLocked() int64 {
	if l.lazy.Load() {
		return 0
	}
	return l.leo()
}

// persistEpochsLocked writes the checkpoint; a lazy log has no directory
// and keeps it in memory until materialized.
func (l *Log) persistEpochsLocked() error {
	if l.lazy.Load() {
		return nil
	}
	return writeFileSync(l.epochPath(), encodeEpochs(l.epochs.es))
}

// persistTruncatedEpochsLocked persists a truncation of the cache. A
// failure is only logged: loading trims stale entries anyway, and the next
// write carries the whole cache.
func (l *Log) persistTruncatedEpochsLocked() {
	if err := l.dirs.failed(l.persistEpochsLocked()); err != nil {
		l.dirs.log.Warn("storage: write leader-epoch-checkpoint", "partition", l.tp, "err", err)
	}
}

// AssignEpochStartOffset records that leader epoch epoch starts at offset
// (a new leader, at its log end offset). A no-op if epoch is not newer than
// the latest epoch.
func (l *Log) AssignEpochStartOffset(epoch int32, offset int64) (err error) {
	defer func() { err = l.dirs.failed(err) }()
	if epoch < 0 || offset < 0 {
		return fmt.Errorf("storage: invalid leader epoch entry (%d, %d)", epoch, offset)
	}
	if err := l.lockLoaded(); err != nil {
		return err
	}
	defer l.mu.Unlock()
	return l.assignEpochLocked(epoch, offset)
}

// assignEpochLocked records and persists the entry (mu held for writing);
// on error the cache is left as it was.
func (l *Log) assignEpochLocked(epoch int32, offset int64) error {
	saved := l.epochs // assign writes over nothing saved holds
	if !l.epochs.assign(epoch, offset) {
		return nil
	}
	if err := l.persistEpochsLocked(); err != nil {
		l.epochs = saved
		return err
	}
	return nil
}

// StartLeaderEpoch is what a new leader does to its log (Kafka's
// makeLeader): unless the cache holds epoch or a newer one, epoch starts at
// the log end offset. It returns the log end offset and the high
// watermark: under one lock what LogEndOffset, LatestEpoch,
// AssignEpochStartOffset and HighWatermark would do one after the other (a
// LeaderAndIsr makes a broker leader of thousands of partitions).
func (l *Log) StartLeaderEpoch(epoch int32) (leo, hw int64, err error) {
	defer func() { err = l.dirs.failed(err) }()
	if err := l.lockLoaded(); err != nil {
		return -1, -1, err
	}
	defer l.mu.Unlock()
	leo = l.endLocked()
	if latest, ok := l.epochs.latest(); !ok || latest.epoch < epoch {
		if epoch < 0 {
			return -1, -1, fmt.Errorf("storage: invalid leader epoch entry (%d, %d)", epoch, leo)
		}
		if err := l.assignEpochLocked(epoch, leo); err != nil {
			return -1, -1, err
		}
	}
	return leo, l.hw.Load(), nil
}

// LatestEpoch is the newest leader epoch in the cache; ok is false if there
// is none (or the log cannot be loaded).
func (l *Log) LatestEpoch() (epoch int32, ok bool) {
	if err := l.rlockLoaded(); err != nil {
		return -1, false
	}
	defer l.mu.RUnlock()
	e, ok := l.epochs.latest()
	if !ok {
		return -1, false
	}
	return e.epoch, true
}

// EndOffsetForEpoch answers OffsetForLeaderEpoch for this log: Kafka's
// LeaderEpochFileCache.endOffsetFor(epoch, LEO). (-1, -1) if the epoch is
// undefined or unknown, or the log cannot be loaded.
func (l *Log) EndOffsetForEpoch(epoch int32) (leaderEpoch int32, endOffset int64) {
	if err := l.rlockLoaded(); err != nil {
		return -1, -1
	}
	defer l.mu.RUnlock()
	return l.epochs.endOffsetFor(epoch, l.endLocked())
}

// loadEpochsLocked reads the checkpoint at load, rebuilding it from the
// batch headers if it is missing or corrupt, and trims it to the log's
// offsets. It fails only if the log cannot be read.
func (l *Log) loadEpochsLocked() error {
	data, err := os.ReadFile(l.epochPath())
	var es []epochEntry
	if err == nil {
		es, err = parseEpochs(data)
	}
	write := false
	if err != nil {
		// Rebuilt and written, unless missing for an empty log (a new one).
		write = l.segs[0].base != l.leo() || !errors.Is(err, os.ErrNotExist)
		if write {
			l.dirs.log.Info("storage: rebuilding leader-epoch-checkpoint from the log", "partition", l.tp, "err", err)
		}
		if es, err = l.scanEpochsLocked(); err != nil {
			return err
		}
	}
	l.epochs = epochCache{es: es}
	if l.epochs.truncateFromStart(l.segs[0].base) {
		write = true
	}
	if l.epochs.truncateFromEnd(l.leo()) {
		write = true
	}
	if write {
		l.persistTruncatedEpochsLocked()
	}
	return nil
}

// scanEpochsLocked rebuilds the cache from the PartitionLeaderEpoch of
// every batch header, hopping from header to header.
func (l *Log) scanEpochsLocked() ([]epochEntry, error) {
	var c epochCache
	var hb [record.HeaderSize]byte
	for _, s := range l.segs {
		if s.size == 0 {
			continue
		}
		if err := s.acquire(); err != nil {
			return nil, err
		}
		f, _ := s.locate(s.base)
		var err error
		for pos := int64(0); s.size-pos >= record.HeaderSize; {
			if _, err = f.ReadAt(hb[:], pos); err != nil {
				err = fmt.Errorf("storage: read: %w", err)
				break
			}
			var h record.Header
			if h, err = record.ReadHeader(hb[:]); err != nil {
				break
			}
			c.assign(h.PartitionLeaderEpoch, h.BaseOffset)
			pos += int64(h.Size())
		}
		s.release()
		if err != nil {
			return nil, err
		}
	}
	return c.es, nil
}
