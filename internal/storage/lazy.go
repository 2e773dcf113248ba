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

// materializeLocked gives a lazy log its directory, partition.metadata and
// first segment, durable, and loads it. Called with mu held for writing. On
// error the log stays lazy and what was made is removed.
func (l *Log) materializeLocked() error {
	if err := l.writeDirLocked(); err != nil {
		return err
	}
	if err := l.loadLocked(); err != nil {
		l.unmakeLocked()
		return fmt.Errorf("storage: load %s: %w", l.tp, err)
	}
	l.lazy.Store(false)
	l.loaded.Store(true)
	l.dirs.markDirty()
	l.log.Debug("storage: materialized partition", "partition", l.tp)
	return nil
}

// writeDirLocked creates the directory with partition.metadata and an
// empty segment at offset 0, then fsyncs the file, the directory and the
// log dir, as creating a partition used to. A directory already there is an
// error, left alone: the manager did not find it at startup.
func (l *Log) writeDirLocked() error {
	if err := os.Mkdir(l.dir, 0o755); err != nil {
		return fmt.Errorf("storage: create partition dir: %w", err)
	}
	err := l.writeFilesLocked()
	if err == nil {
		err = errors.Join(syncDir(l.dir), syncDir(l.dirs.path))
	}
	if err != nil {
		l.unmakeLocked()
	}
	return err
}

func (l *Log) writeFilesLocked() error {
	f, err := os.OpenFile(filepath.Join(l.dir, partitionMetadataFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("storage: write %s: %w", partitionMetadataFile, err)
	}
	l.idMu.Lock()
	id := l.topicID
	l.idMu.Unlock()
	_, err = f.Write(encodePartitionMetadata(id))
	if err == nil {
		err = fsync(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("storage: write %s: %w", partitionMetadataFile, err)
	}
	return createFiles(segmentPath(l.dir, 0))
}

// unmakeLocked undoes a failed materialization (best effort).
func (l *Log) unmakeLocked() {
	for _, s := range l.segs {
		s.closeFiles()
	}
	l.segs = nil
	l.recoveryPoint, l.needRecovery = 0, false
	if err := os.RemoveAll(l.dir); err != nil {
		l.log.Warn("storage: remove partly created partition", "partition", l.tp, "err", err)
	}
}

// lockForAppend is lockLoaded for the append paths: a lazy log is
// materialized first.
func (l *Log) lockForAppend() error {
	if err := l.lockLoaded(); err != nil {
		return err
	}
	if l.lazy.Load() {
		if err := l.materializeLocked(); err != nil {
			l.mu.Unlock()
			return err
		}
	}
	return nil
}

// lazyRead is Read's answer for a lazy log: offset 0 is its end.
func lazyRead(offset int64) (ReadResult, error) {
	if offset != 0 {
		return ReadResult{}, fmt.Errorf("%w: %d not in [0, 0]", ErrOffsetOutOfRange, offset)
	}
	return ReadResult{}, nil
}

// checkAbsent fails if a fresh partition's directory already exists: one
// the manager did not find at startup, which its first append could not
// create. An lstat each, no write.
func checkAbsent(fresh []newPartition) error {
	for _, p := range fresh {
		_, err := os.Lstat(filepath.Join(p.d.path, p.tp.dirName()))
		if err == nil {
			return fmt.Errorf("storage: create partition dir: %w: %s", os.ErrExist, p.tp)
		}
		if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("storage: create partition dir: %w", err)
		}
	}
	return nil
}
