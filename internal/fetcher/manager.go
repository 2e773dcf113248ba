// Manager: Kafka's ReplicaFetcherManager. It maps each followed partition to
// the fetcher of its leader, starting a fetcher for a new source broker and
// stopping one whose last partition left.
package fetcher

import (
	"log/slog"
	"sync"

	"github.com/samsa-kafka/samsa/internal/storage"
)

// Manager owns the fetchers of this broker. Its methods are safe for
// concurrent use.
type Manager struct {
	cfg Config
	log *slog.Logger
	wg  sync.WaitGroup // every fetcher goroutine ever started

	mu       sync.Mutex // held across fetcher add/remove: order m.mu, then fetcher.mu
	closed   bool
	fetchers map[int32]*fetcher // by source broker
	leaders  map[storage.TopicPartition]int32
}

// NewManager returns a manager with no fetcher.
func NewManager(cfg Config) *Manager {
	cfg = cfg.withDefaults()
	return &Manager{
		cfg:      cfg,
		log:      cfg.Logger,
		fetchers: map[int32]*fetcher{},
		leaders:  map[storage.TopicPartition]int32{},
	}
}

// AddPartitions (re)targets partitions: each moves to the fetcher of its
// leader (leaving any other one at once) and, unless it is already fetched
// from that leader at that epoch, truncates (OffsetForLeaderEpoch) and then
// fetches. A target without leader, or led by this broker, only leaves its
// fetcher.
func (m *Manager) AddPartitions(ts []Target) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	left := map[int32]bool{}
	for _, t := range ts {
		if old, ok := m.leaders[t.TP]; ok && old != t.Leader {
			m.fetchers[old].remove(t.TP)
			delete(m.leaders, t.TP)
			left[old] = true
		}
		if t.Leader < 0 { // no leader: nothing to fetch from until one is elected
			continue
		}
		if t.Partition == nil || t.Leader == m.cfg.NodeID {
			m.log.Warn("replica fetcher: partition not fetched", "partition", t.TP, "leader", t.Leader, "leaderEpoch", t.LeaderEpoch)
			continue
		}
		f := m.fetchers[t.Leader]
		if f == nil {
			f = newFetcher(m.cfg, t.Leader)
			m.fetchers[t.Leader] = f
			m.wg.Go(f.run)
		}
		f.add(t)
		m.leaders[t.TP] = t.Leader
	}
	m.stopIdle(left)
}

// RemovePartitions stops fetching tps. When it returns, no fetcher calls any
// method of those partitions any more.
func (m *Manager) RemovePartitions(tps []storage.TopicPartition) {
	m.mu.Lock()
	defer m.mu.Unlock()
	left := map[int32]bool{}
	for _, tp := range tps {
		if old, ok := m.leaders[tp]; ok {
			m.fetchers[old].remove(tp)
			delete(m.leaders, tp)
			left[old] = true
		}
	}
	m.stopIdle(left)
}

// stopIdle stops those of the given fetchers that have no partition left.
func (m *Manager) stopIdle(ids map[int32]bool) {
	for id := range ids {
		if f := m.fetchers[id]; f != nil && f.empty() {
			f.stop()
			delete(m.fetchers, id)
		}
	}
}

// Close stops every fetcher and waits for them. Later calls do nothing.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	for id, f := range m.fetchers {
		f.stop()
		delete(m.fetchers, id)
	}
	clear(m.leaders)
	m.mu.Unlock()
	m.wg.Wait()
}

// fetcherCount is the number of running fetchers (tests).
func (m *Manager) fetcherCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.fetchers)
}
