package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// CreateRequest names one partition log to create (or to reconfigure, if it
// exists).
type CreateRequest struct {
	TopicPartition TopicPartition
	TopicID        [16]byte
	Config         LogConfig
}

// newPartition is one partition CreateMany registers.
type newPartition struct {
	tp  TopicPartition
	at  int // index in the CreateMany request
	d   *logDir
	id  [16]byte
	cfg LogConfig
}

// CreateMany is Create for many partitions at once, and returns their logs
// in the order of reqs. New partitions are registered lazy (see lazy.go):
// nothing is written, so creating 100k partitions costs an lstat each (to
// refuse a directory the manager does not know) and no inode, no fsync.
// Their directories appear, durable, on their first append.
//
// On error no new partition of the batch is registered; existing ones keep
// the new config. Partitions being created by a concurrent call are waited
// for. The manager lock is not held during the lstats.
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
	err = checkAbsent(fresh)
	m.register(fresh, done, err == nil, out)
	if err != nil {
		return nil, err
	}
	for i, r := range reqs {
		if out[i] == nil { // named twice: registered for its first mention
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
	fresh := make([]newPartition, 0, len(reqs))
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
		fresh = append(fresh, newPartition{tp: tp, at: i, d: d, id: r.TopicID, cfg: r.Config})
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

// register ends a creation: the new logs are added, lazy, and stored in out
// at their request's index, if ok, else their claims are dropped.
func (m *Manager) register(fresh []newPartition, done chan struct{}, ok bool, out []*Log) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range fresh {
		delete(m.creating, p.tp)
		if !ok {
			p.d.count--
			continue
		}
		cfg := p.cfg.sane()
		l := newLog(p.d, p.tp, &cfg)
		l.needRecovery = false
		l.recoveryPoint = 0
		l.topicID, l.idKnown = p.id, true
		l.lazy.Store(true)
		m.logs[p.tp] = l
		out[p.at] = l
	}
	close(done)
}

// repairMetadata rewrites the partition.metadata of an existing log that
// has none readable. That happens only to a partition whose
// materialization (its first append, lazy.go) was cut by a crash, or one
// made by an older version whose creation was, so it is checked only in log dirs
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
	if got, err := readPartitionMetadata(l.dir()); err == nil {
		l.topicID, l.idKnown = got, true
		return
	}
	if err := writeFileSync(filepath.Join(l.dir(), partitionMetadataFile), encodePartitionMetadata(id)); err != nil {
		m.log.Warn("storage: rewrite partition.metadata", "partition", l.tp, "err", err)
		return
	}
	l.topicID, l.idKnown = id, true
}

// sameDir is true when every partition goes to the same log dir.
func sameDir(ps []newPartition) bool {
	for _, p := range ps {
		if p.d != ps[0].d {
			return false
		}
	}
	return true
}

// listPays says whether listing dir once is cheaper than n lstats: a
// listing costs about a tenth of an lstat per entry, and a directory's size
// bounds its entries (16 bytes or more each on common file systems).
func listPays(dir string, n int) bool {
	st, err := os.Stat(dir)
	return err == nil && int64(n)*512 >= st.Size()
}

// lstatAbsent checks each partition's directory with an lstat.
func lstatAbsent(dir string, ps []newPartition) error {
	for _, p := range ps {
		_, err := os.Lstat(filepath.Join(dir, p.tp.dirName()))
		if err == nil {
			return fmt.Errorf("storage: create partition dir: %w: %s", os.ErrExist, p.tp)
		}
		if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("storage: create partition dir: %w", err)
		}
	}
	return nil
}

// listAbsent checks the partitions against one listing of dir.
func listAbsent(dir string, ps []newPartition) error {
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("storage: create partition dir: %w", err)
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return fmt.Errorf("storage: create partition dir: %w", err)
	}
	present := map[string]bool{}
	for _, n := range names { // only "<topic>-<digits>" can be a partition's
		if i := strings.LastIndexByte(n, '-'); i > 0 && i < len(n)-1 && strings.Trim(n[i+1:], "0123456789") == "" {
			present[n] = true
		}
	}
	for _, p := range ps {
		if len(present) > 0 && present[p.tp.dirName()] {
			return fmt.Errorf("storage: create partition dir: %w: %s", os.ErrExist, p.tp)
		}
	}
	return nil
}
