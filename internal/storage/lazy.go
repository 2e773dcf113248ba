package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// A log made by CreateMany is lazy: registered in memory only, with no
// directory, no partition.metadata and no segment. Its state is "empty at
// offset 0, topic id known", which its broker re-learns from the
// controller (LeaderAndIsr) after a restart, so it needs no presence on
// disk: creating 100k partitions costs no inode and no fsync. Readers see
// an empty log (LogEndOffset = LogStartOffset = 0); the first Append or
// AppendAsFollower materializes it (directory, partition.metadata, first
// segment, all durable) under mu held for writing, then appends. Deleting
// it only forgets it; retention, flushes, checkpoints and Close skip it.
// Its leader-epoch cache (a leader assigns its epoch on LeaderAndIsr) stays
// in memory and is written as leader-epoch-checkpoint by materialization;
// truncation leaves it lazy, unless TruncateFullyAndStartAt moves it off
// offset 0, which materializes it.

// materializeLocked gives a lazy log its directory, partition.metadata and
// first segment, durable, and loads it. Called with mu held for writing. On
// error the log stays lazy and what was made is removed.
func (l *Log) materializeLocked() error {
	l.onDisk = &onDisk{firstDirty: -1} // recovered: nothing to recover from 0
	if err := l.writeDirLocked(); err != nil {
		l.onDisk = nil // lazy still
		return err
	}
	if err := l.loadLocked(); err != nil {
		l.unmakeLocked()
		return fmt.Errorf("storage: load %s: %w", l.tp, err)
	}
	l.lazy.Store(false)
	l.loaded.Store(true)
	l.dirs.markDirty()
	l.dirs.log.Debug("storage: materialized partition", "partition", l.tp)
	return nil
}

// writeDirLocked creates the directory with partition.metadata, the
// leader-epoch cache if not empty and an empty segment at offset 0, then
// fsyncs partition.metadata, the directory and the log dir, as creating a
// partition used to. A directory already there is an
// error, left alone: the manager did not find it at startup.
func (l *Log) writeDirLocked() error {
	if err := os.Mkdir(l.dir(), 0o755); err != nil {
		return fmt.Errorf("storage: create partition dir: %w", err)
	}
	err := l.writeFilesLocked()
	if err == nil {
		err = errors.Join(syncDir(l.dir()), syncDir(l.dirs.path))
	}
	if err != nil {
		l.unmakeLocked()
	}
	return err
}

// writeFilesLocked writes partition.metadata, the leader-epoch-checkpoint
// of the in-memory cache if it has entries, and the empty first segment.
func (l *Log) writeFilesLocked() error {
	// A lazy log's topic id is known (CreateTopics), hence immutable.
	if err := writeNewFile(filepath.Join(l.dir(), partitionMetadataFile), encodePartitionMetadata(l.topicID), true); err != nil {
		return err
	}
	// Absent if empty, as for any new log. Not fsynced: if a crash loses
	// it, loading rebuilds it from the batches that did reach the disk.
	if len(l.epochs.es) > 0 {
		if err := writeNewFile(l.epochPath(), encodeEpochs(l.epochs.es), false); err != nil {
			return err
		}
	}
	return createFiles(segmentPath(l.dir(), 0))
}

// writeNewFile creates path with data, fsynced if sync (not its
// directory).
func writeNewFile(path string, data []byte, sync bool) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("storage: write %s: %w", filepath.Base(path), err)
	}
	_, err = f.Write(data)
	if err == nil && sync {
		err = fsync(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("storage: write %s: %w", filepath.Base(path), err)
	}
	return nil
}

// unmakeLocked undoes a failed materialization (best effort): the log is
// lazy again.
func (l *Log) unmakeLocked() {
	for _, s := range l.segs {
		s.closeFiles()
	}
	l.onDisk = nil
	if err := os.RemoveAll(l.dir()); err != nil {
		l.dirs.log.Warn("storage: remove partly created partition", "partition", l.tp, "err", err)
	}
}

// lockForAppend is lockLoaded for the append paths. epochs checks the
// append and updates the leader-epoch cache in memory for it, given the log
// end offset, and reports a change. Then a lazy log is materialized (with
// that cache), or a changed cache is written, before any batch. On error
// the cache is restored and mu released. epochs may only assign to the
// cache: an assignment writes over nothing a copy of the cache holds, so
// restoring it costs no copy of the entries.
func (l *Log) lockForAppend(epochs func(end int64) (bool, error)) error {
	if err := l.lockLoaded(); err != nil {
		return err
	}
	saved := l.epochs
	changed, err := epochs(l.endLocked())
	if err == nil && l.lazy.Load() {
		err = l.materializeLocked()
	} else if err == nil && changed {
		err = l.persistEpochsLocked()
	}
	if err != nil {
		l.epochs = saved
		l.mu.Unlock()
	}
	return err
}

// lazyRead is Read's answer for a lazy log: offset 0 is its end.
func lazyRead(offset int64) (ReadResult, error) {
	if offset != 0 {
		return ReadResult{}, fmt.Errorf("%w: %d not in [0, 0]", ErrOffsetOutOfRange, offset)
	}
	return ReadResult{}, nil
}
