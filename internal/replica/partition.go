package replica

// Partition: the log with its role, the client path of a leader (produce,
// acks=all, consumer reads below the high watermark) and the waiters woken
// when the partition changes. The follower-fetch and ISR paths are in
// isr.go, the follower path in follower.go.

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/samsa-kafka/samsa/internal/storage"
)

// Waiter is a fetch that waits for data. C receives a value (non-blocking,
// buffer of one) whenever a partition it waits on changes.
type Waiter struct{ C chan struct{} }

// NewWaiter returns a waiter with a one-slot channel.
func NewWaiter() *Waiter { return &Waiter{C: make(chan struct{}, 1)} }

func (w *Waiter) wake() {
	select {
	case w.C <- struct{}{}:
	default:
	}
}

// Config is what a partition needs of its topic's configuration.
type Config struct {
	Log               storage.LogConfig
	MaxMessageBytes   int
	MinInsyncReplicas int           // min.insync.replicas; 0 means 1
	ReplicaLagTimeMax time.Duration // replica.lag.time.max.ms; 0 means 30s
}

// DefaultReplicaLagTimeMax is Kafka's replica.lag.time.max.ms default.
const DefaultReplicaLagTimeMax = 30 * time.Second

func (c Config) minISR() int { return max(c.MinInsyncReplicas, 1) }

func (c Config) lagTimeMax() time.Duration {
	if c.ReplicaLagTimeMax <= 0 {
		return DefaultReplicaLagTimeMax
	}
	return c.ReplicaLagTimeMax
}

// Partition is one partition hosted on this broker.
type Partition struct {
	TP      kafka.TopicPartition
	TopicID [16]byte
	log     *storage.Log
	mgr     *Manager // for the ISR proposer

	// roleMu guards state: appends, reads and truncations hold it shared, a
	// controller decision and an adopted ISR change exclusively (Kafka's
	// leaderIsrUpdateLock).
	roleMu  sync.RWMutex
	state   decision
	decided bool // state came from a controller decision
	removed bool // no longer hosted (Manager.Remove)
	// detached mirrors removed for readers holding no lock (Detached).
	detached atomic.Bool

	// lmu guards lead, non-nil while leading; taken after roleMu.
	lmu  sync.Mutex
	lead *leaderState

	mu    sync.Mutex
	cfg   *Config   // replaced, never modified: shared by a topic's partitions
	watch *watchers // nil until one registers
}

// watchers are what wait on a partition: sessionless fetches (waiters) and
// fetch sessions (listeners, listen.go). Most partitions of a broker have
// neither (a follower session listens to the partitions it fetches), and
// those that do keep them, so a partition holds one pointer, nil until the
// first.
type watchers struct {
	waiters   map[*Waiter]struct{}
	listeners map[Listener]struct{}
}

// watchersLocked returns p's watchers, made if none yet (mu held).
func (p *Partition) watchersLocked() *watchers {
	if p.watch == nil {
		p.watch = &watchers{}
	}
	return p.watch
}

// newPartition returns a partition this broker leads with leader epoch 0 and
// no other replica, as a single broker without a controller hosts every
// partition: the ISR is the leader alone, so the high watermark follows the
// log end offset at each append. Without solo the leader's bookkeeping is
// left out: the partition must get a controller decision (apply) before
// anyone sees it. It is allocated from b.
func newPartition(b *Batch, m *Manager, tp kafka.TopicPartition, id [16]byte, l *storage.Log, cfg Config, solo bool) *Partition {
	p := b.partition()
	p.TP, p.TopicID, p.log, p.mgr, p.cfg = tp, id, l, m, b.config(cfg)
	if solo {
		p.lead = newLeaderState(State{}, 0, nil, time.Time{})
	}
	return p
}

// Config returns the partition's topic configuration.
func (p *Partition) Config() Config {
	p.mu.Lock()
	defer p.mu.Unlock()
	return *p.cfg
}

// SetConfig changes the topic configuration (e.g. after AlterConfigs).
func (p *Partition) SetConfig(c Config) {
	p.mu.Lock()
	p.cfg = &c
	p.mu.Unlock()
	p.log.SetConfig(c.Log)
}

// AppendAsLeader assigns offsets to validated batches, stamps the leader
// epoch in them, writes them and wakes waiting fetches; the HW advances at
// once if the ISR is the leader alone. A follower refuses with ErrNotLeader;
// with requiredAcks -1 a committed ISR smaller than min.insync.replicas
// refuses with ErrNotEnoughReplicas before anything is written. A retry of
// an idempotent batch the log holds appends nothing and returns the
// original's offsets (info.Duplicate).
func (p *Partition) AppendAsLeader(records []byte, hdrs []record.Header, now time.Time, requiredAcks int16) (storage.AppendInfo, error) {
	return p.appendLeader(requiredAcks, func(epoch int32) (storage.AppendInfo, error) {
		return p.log.AppendAsLeader(records, hdrs, now, epoch)
	})
}

// appendLeader is the leader's append path around write, which appends in
// the partition's leader epoch.
func (p *Partition) appendLeader(requiredAcks int16, write func(leaderEpoch int32) (storage.AppendInfo, error)) (storage.AppendInfo, error) {
	p.roleMu.RLock()
	if !p.leadingLocked() {
		p.roleMu.RUnlock()
		return storage.AppendInfo{}, ErrNotLeader
	}
	if requiredAcks == -1 {
		minISR := p.Config().minISR()
		p.lmu.Lock()
		n := p.lead.committedISRSize()
		p.lmu.Unlock()
		if n < minISR {
			p.roleMu.RUnlock()
			return storage.AppendInfo{}, ErrNotEnoughReplicas
		}
	}
	info, err := write(p.state.leaderEpoch)
	if err == nil && info.Duplicate {
		// A retried idempotent batch: nothing was appended, nothing moved.
		// An acks=all produce waits for the HW to cover the original.
		p.roleMu.RUnlock()
		return info, nil
	}
	if err == nil {
		p.lmu.Lock()
		if p.lead != nil {
			p.lead.leoAdvanced(info.FirstOffset)
		}
		p.advanceHWLocked()
		p.lmu.Unlock()
	}
	p.roleMu.RUnlock()
	if err != nil {
		return info, err
	}
	p.wakeAll() // consumers if the HW moved, followers for the new data
	return info, nil
}

// Acked is the acks=all check (Kafka's checkEnoughReplicasReachOffset) of a
// produce whose last record is at requiredOffset-1: done once the HW reached
// requiredOffset, with ErrNotEnoughReplicasAfterAppend if the maximal ISR is
// then smaller than min.insync.replicas; done with ErrNotLeader once this
// broker no longer leads.
func (p *Partition) Acked(requiredOffset int64) (done bool, err error) {
	p.roleMu.RLock()
	defer p.roleMu.RUnlock()
	if !p.leadingLocked() {
		return true, ErrNotLeader
	}
	hw, minISR := p.log.HighWatermark(), p.Config().minISR()
	p.lmu.Lock()
	done, enough := p.lead.acked(hw, requiredOffset, minISR)
	p.lmu.Unlock()
	if done && !enough {
		return true, ErrNotEnoughReplicasAfterAppend
	}
	return done, nil
}

// advanceHWLocked applies the HW rule (lmu held, leading) and stores a
// higher HW in the log; it reports whether the HW moved.
func (p *Partition) advanceHWLocked() bool {
	if p.lead == nil {
		return false
	}
	hw, ok := p.lead.advance(p.log.HighWatermark(), p.log.LogEndOffset())
	if ok {
		p.log.SetHighWatermark(hw)
	}
	return ok
}

// HighWatermark is the first offset consumers cannot read yet: on a leader
// min LEO over the ISR, on a follower the leader's as last replicated.
func (p *Partition) HighWatermark() int64 { return p.log.HighWatermark() }

// LogStartOffset is the first offset still in the log.
func (p *Partition) LogStartOffset() int64 { return p.log.LogStartOffset() }

// LogEndOffset is the next offset to be assigned.
func (p *Partition) LogEndOffset() int64 { return p.log.LogEndOffset() }

// LatestEpoch is the newest leader epoch in the log's epoch cache.
func (p *Partition) LatestEpoch() (int32, bool) { return p.log.LatestEpoch() }

// EndOffsetForEpoch answers OffsetForLeaderEpoch from the log's epoch cache:
// the largest epoch <= epoch the log knows and the offset where the next
// one starts (the LEO for the latest); (-1, -1) if unknown.
func (p *Partition) EndOffsetForEpoch(epoch int32) (leaderEpoch int32, endOffset int64) {
	return p.log.EndOffsetForEpoch(epoch)
}

// Read returns whole batches from offset, below the high watermark, to a
// consumer. A follower refuses with ErrNotLeader (consumers fetch from the
// leader; KIP-392 follower fetching is not supported).
func (p *Partition) Read(offset int64, maxBytes int32, how storage.ReadHow) (storage.ReadResult, int64, error) {
	if !p.IsLeader() {
		return storage.ReadResult{}, -1, ErrNotLeader
	}
	hw := p.HighWatermark()
	res, err := p.log.ReadAs(offset, hw, maxBytes, how)
	return res, hw, err
}

// ActiveProducers lists the idempotent producers the partition has state
// for (DescribeProducers); a follower refuses with ErrNotLeader.
func (p *Partition) ActiveProducers() ([]storage.ProducerInfo, error) {
	if !p.IsLeader() {
		return nil, ErrNotLeader
	}
	return p.log.ActiveProducers()
}

// Log exposes the underlying log for offset lookups.
func (p *Partition) Log() *storage.Log { return p.log }

// AddWaiter registers w to be woken by the next change.
func (p *Partition) AddWaiter(w *Waiter) {
	p.mu.Lock()
	ws := p.watchersLocked()
	if ws.waiters == nil { // most partitions never have a sessionless fetch waiting
		ws.waiters = map[*Waiter]struct{}{}
	}
	ws.waiters[w] = struct{}{}
	p.mu.Unlock()
}

// RemoveWaiter unregisters w.
func (p *Partition) RemoveWaiter(w *Waiter) {
	p.mu.Lock()
	if p.watch != nil {
		delete(p.watch.waiters, w)
	}
	p.mu.Unlock()
}

func (p *Partition) wakeAll() { p.wake(false) }

// wakeHW wakes waiters after a move of the high watermark alone.
func (p *Partition) wakeHW() { p.wake(true) }

func (p *Partition) wake(onlyHW bool) {
	p.mu.Lock()
	if ws := p.watch; ws != nil {
		for w := range ws.waiters {
			w.wake()
		}
		for l := range ws.listeners {
			l.PartitionChanged(onlyHW)
		}
	}
	p.mu.Unlock()
}
