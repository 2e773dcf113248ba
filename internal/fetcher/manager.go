// Manager: Kafka's ReplicaFetcherManager. It maps each followed partition to
// the fetcher of its leader, starting a fetcher for a new source broker and
// stopping one whose last partition left.
package fetcher

import (
	"log/slog"
	"sync"

	"github.com/samsa-kafka/samsa/internal/kafka"
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
	leaders  table[source]      // of the partitions fetched
	// start runs a new fetcher's goroutine (benchmarks drive fetchers
	// without one).
	start func(*fetcher)
}

// NewManager returns a manager with no fetcher.
func NewManager(cfg Config) *Manager {
	cfg = cfg.withDefaults()
	m := &Manager{
		cfg:      cfg,
		log:      cfg.Logger,
		fetchers: map[int32]*fetcher{},
	}
	m.start = func(f *fetcher) { m.wg.Go(f.run) }
	return m
}

// AddPartitions (re)targets partitions: each moves to the fetcher of its
// leader (leaving any other one at once) and, unless it is already fetched
// from that leader at that epoch, truncates (OffsetForLeaderEpoch) and then
// fetches. A target without leader, or led by this broker, only leaves its
// fetcher.
//
// Each fetcher concerned is handed its share of ts at once (handover.go): the
// partitions leaving a fetcher first, then those joining one. A partition
// named twice takes its last target.
func (m *Manager) AddPartitions(ts []Target) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	var b handover
	b.presize(ts)
	m.leaders.reserveRuns(len(ts), func(i int) kafka.TopicPartition {
		if t := &ts[i]; t.Leader < 0 || t.Partition == nil || t.Leader == m.cfg.NodeID {
			return kafka.TopicPartition{Topic: t.TP.Topic, Partition: -1} // not fetched: no room
		}
		return ts[i].TP
	})
	last := lastTargets(ts)
	for i := range ts {
		t := &ts[i]
		if last != nil && last[t.TP] != i {
			continue
		}
		if old := m.leaders.get(t.TP); old.ok && old.id != t.Leader {
			b.remove(old.id, t.TP)
			m.leaders.del(t.TP)
		}
		if t.Leader < 0 { // no leader: nothing to fetch from until one is elected
			continue
		}
		if t.Partition == nil || t.Leader == m.cfg.NodeID {
			m.log.Warn("replica fetcher: partition not fetched", "partition", t.TP, "leader", t.Leader, "leaderEpoch", t.LeaderEpoch)
			continue
		}
		b.add(t.Leader, i)
		m.leaders.set(t.TP, source{t.Leader, true})
	}
	m.apply(&b, ts)
}

// source is the broker a partition is fetched from (ok false: none).
type source struct {
	id int32
	ok bool
}

// RemovePartitions stops fetching tps. When it returns, no fetcher calls any
// method of those partitions any more.
func (m *Manager) RemovePartitions(tps []kafka.TopicPartition) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var b handover
	for _, tp := range tps {
		if old := m.leaders.del(tp); old.ok {
			b.remove(old.id, tp)
		}
	}
	m.apply(&b, nil)
}

// apply hands b (built from ts) to the fetchers, starting those missing,
// and stops those left without a partition. Caller holds m.mu.
func (m *Manager) apply(b *handover, ts []Target) {
	for _, r := range b.removes {
		m.fetchers[r.leader].removeAll(r.tps)
	}
	for _, a := range b.adds {
		if len(a.idx) == 0 { // presized for targets not fetched
			continue
		}
		f := m.fetchers[a.leader]
		if f == nil {
			f = newFetcher(m.cfg, a.leader)
			m.fetchers[a.leader] = f
			m.start(f)
		}
		f.addEach(len(a.idx), func(i int) *Target { return &ts[a.idx[i]] })
	}
	left := make(map[int32]bool, len(b.removes))
	for _, r := range b.removes {
		left[r.leader] = true
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
	m.leaders = table[source]{}
	m.mu.Unlock()
	m.wg.Wait()
}

// fetcherCount is the number of running fetchers (tests).
func (m *Manager) fetcherCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.fetchers)
}
