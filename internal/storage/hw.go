package storage

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// High watermarks. Each Log keeps its high watermark in memory (Log.hw),
// always within [log start, log end] once loaded. The manager reads
// <log dir>/replication-offset-checkpoint (Kafka's offset checkpoint
// format) when it opens the dir and hands each log its entry (0 if none);
// the log clamps it when it loads. The manager writes the file of every
// dir whose high watermarks changed every HighWatermarkCheckpointInterval,
// in RunOnce and at Close, from Log.hw alone: a log never loaded keeps the
// value it was given without opening a file. Lazy logs are left out (their
// high watermark is 0, which an absent entry means).

// hwCheckpointFile is Kafka's high watermark checkpoint in each log dir.
const hwCheckpointFile = "replication-offset-checkpoint"

// HighWatermark is the log's high watermark, within [LogStartOffset,
// LogEndOffset]; -1 if the log cannot be loaded.
func (l *Log) HighWatermark() int64 {
	if err := l.rlockLoaded(); err != nil {
		return -1
	}
	defer l.mu.RUnlock()
	return l.hw.Load()
}

// SetHighWatermark sets the high watermark, clamped to [LogStartOffset,
// LogEndOffset]. The manager persists it.
func (l *Log) SetHighWatermark(hw int64) {
	if err := l.rlockLoaded(); err != nil {
		return
	}
	defer l.mu.RUnlock()
	l.setHWLocked(hw)
}

// setHWLocked stores hw clamped to the log's offsets. Called with mu held
// (for reading is enough: only the value changes).
func (l *Log) setHWLocked(hw int64) {
	start, end := int64(0), int64(0)
	if !l.lazy.Load() {
		start, end = l.startLocked(), l.leo()
	}
	hw = min(max(hw, start), end)
	if l.hw.Swap(hw) != hw {
		l.dirs.markHWDirty()
	}
}

// clampHWLocked brings the high watermark back within the log's offsets
// after they moved (load, truncation, retention).
func (l *Log) clampHWLocked() { l.setHWLocked(l.hw.Load()) }

// readHWCheckpoint loads d's replication-offset-checkpoint; a missing file
// is empty, a corrupt one is ignored with a warning.
func (m *Manager) readHWCheckpoint(d *logDir) {
	data, err := os.ReadFile(filepath.Join(d.path, hwCheckpointFile))
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			m.log.Warn("storage: read high watermark checkpoint", "dir", d.path, "err", err)
		}
		return
	}
	if d.hws, err = parseCheckpoint(data); err != nil {
		m.log.Warn("storage: ignoring corrupt high watermark checkpoint", "dir", d.path, "err", err)
		d.hws = nil
	}
}

// checkpointHW writes replication-offset-checkpoint in every dir whose high
// watermarks changed (all if force), from the logs' in-memory values.
func (m *Manager) checkpointHW(force bool) error {
	var due []*logDir
	for _, d := range m.dirs {
		if (d.hwDirty.Swap(false) || force) && !d.offline.Load() {
			due = append(due, d)
		}
	}
	if len(due) == 0 {
		return nil
	}
	byDir := make(map[*logDir]map[kafka.TopicPartition]int64, len(due))
	for _, d := range due {
		byDir[d] = map[kafka.TopicPartition]int64{}
	}
	for _, l := range m.snapshot() {
		if hws := byDir[l.dirs]; hws != nil && !l.lazy.Load() {
			hws[l.tp] = l.hw.Load()
		}
	}
	var errs []error
	for _, d := range due {
		if err := d.failed(writeFileSync(filepath.Join(d.path, hwCheckpointFile), encodeCheckpoint(byDir[d]))); err != nil {
			d.markHWDirty()
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// checkpointHWs writes the due high watermark checkpoints, logging errors.
func (m *Manager) checkpointHWs() {
	if err := m.checkpointHW(false); err != nil {
		m.log.Warn("storage: high watermark checkpoint", "err", err)
	}
}
