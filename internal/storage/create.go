package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// CreateRequest names one partition log to create (or to reconfigure, if it
// exists).
type CreateRequest struct {
	TopicPartition TopicPartition
	TopicID        [16]byte
	Config         LogConfig
}

// createWorkers bounds the goroutines CreateMany uses for its file system
// calls; they all end before CreateMany returns.
const createWorkers = 8

// syncfsMinBatch is the batch size from which CreateMany makes its files
// durable with one syncfs(2) per log dir instead of an fsync per file and
// per partition directory. Below it, the cost of writing back whatever else
// is dirty on the file system is not worth it. A variable for benchmarks.
var syncfsMinBatch = 64

// newPartition is one partition directory CreateMany writes.
type newPartition struct {
	tp  TopicPartition
	d   *logDir
	id  [16]byte
	cfg LogConfig
	// made: this call created the directory (removed again on failure).
	made bool
}

// CreateMany is Create for many partitions at once, and returns their logs
// in the order of reqs. New partitions get their directory and
// partition.metadata written by a few goroutines in parallel, then one
// durability barrier for the whole batch (syncfs, or fsync of every file and
// partition directory in parallel, then each touched log dir once), so that
// creating 100k partitions costs a few fsyncs instead of 300k. When it
// returns nil, every directory and partition.metadata is durable.
//
// On error no new partition of the batch is registered and their
// directories are removed (best effort); existing ones keep the new config.
// Partitions being created by a concurrent call are waited for. Other logs
// stay usable while the files are written: the manager lock is not held
// during I/O.
func (m *Manager) CreateMany(reqs []CreateRequest) ([]*Log, error) {
	for _, r := range reqs {
		if !validTopic(r.TopicPartition.Topic) || r.TopicPartition.Partition < 0 {
			return nil, fmt.Errorf("storage: invalid partition %q", r.TopicPartition)
		}
	}
	out := make([]*Log, len(reqs))
	fresh, done, err := m.reserve(reqs, out)
	if err != nil {
		return nil, err
	}
	for i, r := range reqs {
		if out[i] != nil {
			out[i].SetConfig(r.Config)
			m.repairMetadata(out[i], r.TopicID)
		}
	}
	if len(fresh) == 0 {
		return out, nil
	}
	err = writePartitions(fresh)
	m.register(fresh, done, err == nil)
	if err != nil {
		return nil, err
	}
	for i, r := range reqs {
		if out[i] == nil {
			out[i] = m.Get(r.TopicPartition)
		}
	}
	return out, nil
}

// reserve fills out with the existing logs and claims every missing
// partition for this call (in m.creating, counted in its log dir), after
// waiting for concurrent creations of the same partitions.
func (m *Manager) reserve(reqs []CreateRequest, out []*Log) ([]newPartition, chan struct{}, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for {
		if m.closed {
			return nil, nil, ErrLogClosed
		}
		var busy chan struct{}
		for _, r := range reqs {
			if c, ok := m.creating[r.TopicPartition]; ok {
				busy = c
				break
			}
		}
		if busy == nil {
			break
		}
		m.mu.Unlock()
		<-busy
		m.mu.Lock()
	}
	done := make(chan struct{})
	var fresh []newPartition
	for i, r := range reqs {
		tp := r.TopicPartition
		if l, ok := m.logs[tp]; ok {
			out[i] = l
			continue
		}
		if _, dup := m.creating[tp]; dup {
			continue // named twice in reqs
		}
		d := m.leastLoadedDir()
		d.count++
		m.creating[tp] = done
		fresh = append(fresh, newPartition{tp: tp, d: d, id: r.TopicID, cfg: r.Config})
	}
	return fresh, done, nil
}

func (m *Manager) leastLoadedDir() *logDir {
	d := m.dirs[0]
	for _, c := range m.dirs[1:] {
		if c.count < d.count {
			d = c
		}
	}
	return d
}

// register ends a creation: the new logs are added if ok, else their
// directories are removed and their claims dropped.
func (m *Manager) register(fresh []newPartition, done chan struct{}, ok bool) {
	if !ok {
		for _, p := range fresh {
			if p.made {
				os.RemoveAll(filepath.Join(p.d.path, p.tp.dirName()))
			}
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range fresh {
		delete(m.creating, p.tp)
		if !ok {
			p.d.count--
			continue
		}
		l := newLog(p.d, p.tp, p.cfg, m.cache, m.log)
		l.needRecovery = false
		l.recoveryPoint = 0
		l.topicID, l.idKnown = p.id, true
		m.logs[p.tp] = l
		p.d.markDirty()
	}
	close(done)
}

// repairMetadata rewrites the partition.metadata of an existing log that
// has none readable. That happens only to a partition whose creation was cut
// by a crash (before CreateMany returned), so it is checked only in log dirs
// that were not shut down cleanly: its owner re-creating it completes it.
func (m *Manager) repairMetadata(l *Log, id [16]byte) {
	if l.dirs.clean {
		return
	}
	l.idMu.Lock()
	defer l.idMu.Unlock()
	if l.idKnown {
		return
	}
	if got, err := readPartitionMetadata(l.dir); err == nil {
		l.topicID, l.idKnown = got, true
		return
	}
	if err := writeFileSync(filepath.Join(l.dir, partitionMetadataFile), encodePartitionMetadata(id)); err != nil {
		m.log.Warn("storage: rewrite partition.metadata", "partition", l.tp, "err", err)
		return
	}
	l.topicID, l.idKnown = id, true
}

// writePartitions creates the directories and partition.metadata files of
// fresh and makes them durable.
func writePartitions(fresh []newPartition) error {
	parents := map[*logDir]*os.File{}
	defer func() {
		for _, f := range parents {
			f.Close()
		}
	}()
	for _, p := range fresh {
		if parents[p.d] != nil {
			continue
		}
		// Opened before the writes, so that syncfs reports their errors.
		f, err := os.Open(p.d.path)
		if err != nil {
			return fmt.Errorf("storage: open log dir: %w", err)
		}
		parents[p.d] = f
	}
	err := parallel(len(fresh), func(i int) error { return writePartition(&fresh[i]) })
	if err != nil {
		return err
	}
	if fsyncDisabled.Load() {
		return nil
	}
	if len(fresh) >= syncfsMinBatch {
		if err := syncfsAll(parents); !errors.Is(err, errNoSyncfs) {
			return err
		}
	}
	err = parallel(len(fresh), func(i int) error {
		dir := filepath.Join(fresh[i].d.path, fresh[i].tp.dirName())
		return errors.Join(syncPath(filepath.Join(dir, partitionMetadataFile)), syncDir(dir))
	})
	if err != nil {
		return err
	}
	for _, f := range parents {
		if err := fsync(f); err != nil {
			return fmt.Errorf("storage: fsync dir: %w", err)
		}
	}
	return nil
}

// writePartition creates one partition directory with its
// partition.metadata; a directory already there that the manager does not
// know is an error, left alone. The directory is new, so the file is written in
// place: a crash before the batch's barrier may leave it torn, which
// repairMetadata mends when the owner creates the partition again.
func writePartition(p *newPartition) error {
	dir := filepath.Join(p.d.path, p.tp.dirName())
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("storage: create partition dir: %w", err)
	}
	p.made = true
	err := os.WriteFile(filepath.Join(dir, partitionMetadataFile), encodePartitionMetadata(p.id), 0o644)
	if err != nil {
		return fmt.Errorf("storage: write %s: %w", partitionMetadataFile, err)
	}
	return nil
}

// syncPath fsyncs the file at path.
func syncPath(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("storage: fsync: %w", err)
	}
	defer f.Close()
	if err := fsync(f); err != nil {
		return fmt.Errorf("storage: fsync: %w", err)
	}
	return nil
}

func syncfsAll(dirs map[*logDir]*os.File) error {
	for _, f := range dirs {
		if err := syncfs(f); err != nil {
			return err
		}
	}
	return nil
}

// parallel runs fn(0..n-1) on up to createWorkers goroutines and returns
// the first error; the goroutines have ended when it returns.
func parallel(n int, fn func(int) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  int
	)
	take := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if first != nil || next >= n {
			return 0, false
		}
		next++
		return next - 1, true
	}
	for range min(n, createWorkers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, ok := take(); ok; i, ok = take() {
				if err := fn(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return first
}
