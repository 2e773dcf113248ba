package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// The log start offset (Kafka's UnifiedLog.logStartOffset): the first offset
// a reader may see, at or above the first segment's base. DeleteRecords on
// the leader, and on a follower the leader's log start offset carried in
// fetch responses, raise it (IncrementLogStartOffset, Kafka's
// maybeIncrementLogStartOffset) without touching the segments; reads below
// it are out of range, ListOffsets earliest answers it, and the next
// retention pass deletes the segments wholly below it (Kafka's
// deleteLogStartOffsetBreachedSegments, under any cleanup policy). It is
// persisted in <log dir>/log-start-offset-checkpoint (Kafka's offset
// checkpoint format; only the logs whose start lies above their first
// segment's base have an entry) with the high watermark checkpoints, and
// read back when the dir is opened. It never exceeds the high watermark
// when raised, and a truncation that empties the log restarts it.

// logStartCheckpointFile is Kafka's log start offset checkpoint in each log dir.
const logStartCheckpointFile = "log-start-offset-checkpoint"

// startLocked is the log start offset (mu held, not lazy).
func (l *Log) startLocked() int64 { return max(l.logStart, l.segs[0].base) }

// IncrementLogStartOffset raises the log start offset to offset if higher
// and returns the log start offset after. An offset above the high
// watermark is refused with ErrOffsetOutOfRange, as Kafka does.
func (l *Log) IncrementLogStartOffset(offset int64) (int64, error) {
	if err := l.lockLoaded(); err != nil {
		return -1, err
	}
	defer l.mu.Unlock()
	if offset > l.hw.Load() {
		return -1, fmt.Errorf("%w: log start %d above high watermark %d", ErrOffsetOutOfRange, offset, l.hw.Load())
	}
	if l.lazy.Load() || offset <= l.startLocked() {
		if l.lazy.Load() {
			return 0, nil
		}
		return l.startLocked(), nil
	}
	l.logStart = offset
	l.dirs.markLogStartDirty()
	if l.epochs.truncateFromStart(offset) {
		l.persistTruncatedEpochsLocked()
	}
	l.dirs.log.Info("storage: incremented log start offset", "partition", l.tp, "logStartOffset", offset)
	return offset, nil
}

// breachedCount is the number of leading segments wholly below the log
// start offset (mu held).
func (l *Log) breachedCount() int {
	n := 0
	for n < len(l.segs)-1 && l.segs[n+1].base <= l.logStart {
		n++
	}
	return n
}

// readLogStartCheckpoint loads d's log-start-offset-checkpoint; a missing
// file is empty, a corrupt one is ignored with a warning.
func (m *Manager) readLogStartCheckpoint(d *logDir) {
	data, err := os.ReadFile(filepath.Join(d.path, logStartCheckpointFile))
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			m.log.Warn("storage: read log start offset checkpoint", "dir", d.path, "err", err)
		}
		return
	}
	if d.logStarts, err = parseCheckpoint(data); err != nil {
		m.log.Warn("storage: ignoring corrupt log start offset checkpoint", "dir", d.path, "err", err)
		d.logStarts = nil
	}
}

// checkpointLogStart writes log-start-offset-checkpoint in every dir whose
// log start offsets changed (all if force). A log not loaded keeps the value
// it was read with.
func (m *Manager) checkpointLogStart(force bool) error {
	byDir := map[*logDir]map[kafka.TopicPartition]int64{}
	for _, d := range m.dirs {
		if (d.logStartDirty.Swap(false) || force) && !d.offline.Load() {
			byDir[d] = map[kafka.TopicPartition]int64{}
		}
	}
	if len(byDir) == 0 {
		return nil
	}
	for _, l := range m.snapshot() {
		if starts := byDir[l.dirs]; starts != nil {
			if off, ok := l.checkpointedStart(); ok {
				starts[l.tp] = off
			}
		}
	}
	var errs []error
	for d, starts := range byDir {
		if err := d.failed(writeFileSync(filepath.Join(d.path, logStartCheckpointFile), encodeCheckpoint(starts))); err != nil {
			d.markLogStartDirty()
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// checkpointedStart is the entry of the log in the checkpoint: its log start
// offset when above its first segment's base (or not loaded yet and read
// from the checkpoint).
func (l *Log) checkpointedStart() (int64, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.onDisk == nil || l.closed && !l.loaded.Load() {
		return 0, false
	}
	if !l.loaded.Load() {
		return l.logStart, l.logStart > 0
	}
	return l.logStart, len(l.segs) > 0 && l.logStart > l.segs[0].base
}

// checkpointLogStarts writes the due log start checkpoints, logging errors.
func (m *Manager) checkpointLogStarts() {
	if err := m.checkpointLogStart(false); err != nil {
		m.log.Warn("storage: log start offset checkpoint", "err", err)
	}
}
