// Manager: Kafka's ReplicaFetcherManager. It maps each followed partition to
// a fetcher of its leader, num.replica.fetchers of them per source broker
// (assign.go picks which), starting a fetcher when a partition is handed
// to it and stopping one whose last partition left; Resize changes the
// number of fetchers per source broker at run time.
package fetcher

import (
	"log/slog"
	"math"
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
	n        int32                   // fetchers per source broker (num.replica.fetchers)
	fetchers map[fetcherKey]*fetcher // by source broker and fetcher id
	leaders  table[source]           // of the partitions fetched
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
		n:        fetchersPerSource(cfg.NumFetchers),
		fetchers: map[fetcherKey]*fetcher{},
	}
	m.start = func(f *fetcher) { m.wg.Go(f.run) }
	return m
}

// AddPartitions (re)targets partitions: each moves to its fetcher of its
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
	ids := fetcherIDs{n: m.n}
	b.presize(len(ts), func(i int) fetcherKey { return fetcherKey{ts[i].Leader, ids.of(ts[i].TP)} })
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
		key := fetcherKey{t.Leader, ids.of(t.TP)}
		if old := m.leaders.get(t.TP); old.ok && old.fetcherKey != key {
			b.remove(old.fetcherKey, t.TP)
			m.leaders.del(t.TP)
		}
		if t.Leader < 0 { // no leader: nothing to fetch from until one is elected
			continue
		}
		if t.Partition == nil || t.Leader == m.cfg.NodeID {
			m.log.Warn("replica fetcher: partition not fetched", "partition", t.TP, "leader", t.Leader, "leaderEpoch", t.LeaderEpoch)
			continue
		}
		b.add(key, i)
		m.leaders.set(t.TP, source{key, true})
	}
	m.apply(&b, ts)
}

// source is the fetcher a partition is fetched by (ok false: none).
type source struct {
	fetcherKey
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
			b.remove(old.fetcherKey, tp)
		}
	}
	m.apply(&b, nil)
}

// LogStartsMoved tells the fetchers that the log start offsets of tps
// moved here (retention): each partition this broker follows goes out in
// its fetcher's next request, which tells the leader (Kafka's follower
// sends its log start offset in every fetch; DeleteRecords waits for it).
func (m *Manager) LogStartsMoved(tps []kafka.TopicPartition) {
	m.mu.Lock()
	defer m.mu.Unlock()
	byFetcher := map[fetcherKey][]kafka.TopicPartition{}
	for _, tp := range tps {
		if src := m.leaders.get(tp); src.ok {
			byFetcher[src.fetcherKey] = append(byFetcher[src.fetcherKey], tp)
		}
	}
	for key, tps := range byFetcher {
		m.fetchers[key].requeue(tps)
	}
}

// apply hands b (built from ts) to the fetchers, starting those missing,
// and stops those left without a partition. Caller holds m.mu.
func (m *Manager) apply(b *handover, ts []Target) {
	for _, r := range b.removes {
		m.fetchers[r.from].removeAll(r.tps)
	}
	for _, a := range b.adds {
		if len(a.idx) == 0 { // presized for targets not fetched
			continue
		}
		m.fetcher(a.to).addEach(len(a.idx), func(i int) *Target { return &ts[a.idx[i]] })
	}
	left := make(map[fetcherKey]bool, len(b.removes))
	for _, r := range b.removes {
		left[r.from] = true
	}
	m.stopIdle(left)
}

// fetcher returns the fetcher key names, starting it if missing. Caller
// holds m.mu.
func (m *Manager) fetcher(key fetcherKey) *fetcher {
	f := m.fetchers[key]
	if f == nil {
		f = newFetcher(m.cfg, key)
		m.fetchers[key] = f
		m.start(f)
	}
	return f
}

// stopIdle stops those of the given fetchers that have no partition left.
func (m *Manager) stopIdle(keys map[fetcherKey]bool) {
	for key := range keys {
		if f := m.fetchers[key]; f != nil && f.empty() {
			f.stop()
			delete(m.fetchers, key)
		}
	}
}

// Resize makes n (num.replica.fetchers; below 1: 1) the number of fetchers
// per source broker, as Kafka's resizeThreadPool: every partition whose
// fetcher id changes leaves its fetcher in its fetch state and joins its
// new one in that state (adoptAll: a Fetching partition goes on from its
// log end offset, neither truncated nor refetched), and the fetchers left
// without a partition stop. Each fetcher has its own connection and fetch
// session, so the new ones open theirs.
func (m *Manager) Resize(n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	size := fetchersPerSource(n)
	if m.closed || size == m.n {
		return
	}
	m.log.Info("replica fetcher: resizing the fetchers per source broker", "from", m.n, "to", size)
	m.n = size
	moves := redistribute(func(yield func(kafka.TopicPartition, fetcherKey) bool) {
		for tp, src := range m.leaders.all() {
			if !yield(tp, src.fetcherKey) {
				return
			}
		}
	}, size)
	leaving := map[fetcherKey][]kafka.TopicPartition{}
	for _, mv := range moves {
		leaving[mv.from] = append(leaving[mv.from], mv.tp)
		m.leaders.set(mv.tp, source{mv.to, true})
	}
	joining := map[fetcherKey][]partState{}
	var states []partState
	for from, tps := range leaving {
		states = states[:0]
		m.fetchers[from].takeAll(tps, &states)
		ids := fetcherIDs{n: size}
		for _, ps := range states {
			to := fetcherKey{from.leader, ids.of(ps.target.TP)}
			joining[to] = append(joining[to], ps)
		}
	}
	for to, states := range joining {
		m.fetcher(to).adoptAll(states)
	}
	left := make(map[fetcherKey]bool, len(leaving))
	for from := range leaving {
		left[from] = true
	}
	m.stopIdle(left)
}

// fetchersPerSource is num.replica.fetchers as a fetcher count: at least 1.
func fetchersPerSource(n int) int32 {
	return int32(max(1, min(n, math.MaxInt32)))
}

// MaxLag is the largest lag, in offsets, of the partitions fetched: the
// leader's high watermark less this broker's log end offset, as of each
// partition's last answer (Kafka's ReplicaFetcherManager MaxLag, whose
// FetcherLagStats count it so).
func (m *Manager) MaxLag() int64 {
	m.mu.Lock()
	fs := make([]*fetcher, 0, len(m.fetchers))
	for _, f := range m.fetchers {
		fs = append(fs, f)
	}
	m.mu.Unlock()
	var lag int64
	for _, f := range fs {
		f.mu.Lock()
		for _, ps := range f.parts.all() {
			lag = max(lag, ps.lag)
		}
		f.mu.Unlock()
	}
	return lag
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
