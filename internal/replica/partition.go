package replica

import (
	"errors"
	"sync"
	"time"

	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/samsa-kafka/samsa/internal/storage"
)

// ErrNotLeader means this broker does not lead the partition.
var ErrNotLeader = errors.New("replica: not leader for partition")

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
	Log             storage.LogConfig
	MaxMessageBytes int
}

// Partition is one partition hosted on this broker.
type Partition struct {
	TP      storage.TopicPartition
	TopicID [16]byte
	log     *storage.Log

	// roleMu guards state: appends and reads hold it shared, a controller
	// decision exclusively (Kafka's leaderIsrUpdateLock).
	roleMu  sync.RWMutex
	state   State
	decided bool // state came from a controller decision

	mu      sync.Mutex
	cfg     Config
	waiters map[*Waiter]struct{}
}

// newPartition returns a partition this broker leads with leader epoch 0, as
// a single broker without a controller hosts every partition.
func newPartition(tp storage.TopicPartition, id [16]byte, l *storage.Log, cfg Config) *Partition {
	return &Partition{TP: tp, TopicID: id, log: l, cfg: cfg, waiters: map[*Waiter]struct{}{}}
}

// Config returns the partition's topic configuration.
func (p *Partition) Config() Config {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cfg
}

// SetConfig changes the topic configuration (e.g. after AlterConfigs).
func (p *Partition) SetConfig(c Config) {
	p.mu.Lock()
	p.cfg = c
	p.mu.Unlock()
	p.log.SetConfig(c.Log)
}

// AppendAsLeader assigns offsets to validated batches, writes them and wakes
// waiting fetches. A follower refuses with ErrNotLeader.
func (p *Partition) AppendAsLeader(records []byte, hdrs []record.Header, now time.Time) (storage.AppendInfo, error) {
	p.roleMu.RLock()
	if p.state.Role != Leader {
		p.roleMu.RUnlock()
		return storage.AppendInfo{}, ErrNotLeader
	}
	info, err := p.log.Append(records, hdrs, now)
	p.roleMu.RUnlock()
	if err != nil {
		return info, err
	}
	p.wakeAll()
	return info, nil
}

// HighWatermark is the first offset consumers cannot read yet.
func (p *Partition) HighWatermark() int64 { return p.log.LogEndOffset() }

// LogStartOffset is the first offset still in the log.
func (p *Partition) LogStartOffset() int64 { return p.log.LogStartOffset() }

// LogEndOffset is the next offset to be assigned.
func (p *Partition) LogEndOffset() int64 { return p.log.LogEndOffset() }

// Read returns whole batches from offset, below the high watermark, to a
// consumer. A follower refuses with ErrNotLeader (consumers fetch from the
// leader; KIP-392 follower fetching is not supported).
func (p *Partition) Read(offset int64, maxBytes int32, minOneBatch bool) (storage.ReadResult, int64, error) {
	if !p.IsLeader() {
		return storage.ReadResult{}, -1, ErrNotLeader
	}
	hw := p.HighWatermark()
	res, err := p.log.Read(offset, hw, maxBytes, minOneBatch)
	return res, hw, err
}

// Log exposes the underlying log for offset lookups.
func (p *Partition) Log() *storage.Log { return p.log }

// AddWaiter registers w to be woken by the next change.
func (p *Partition) AddWaiter(w *Waiter) {
	p.mu.Lock()
	p.waiters[w] = struct{}{}
	p.mu.Unlock()
}

// RemoveWaiter unregisters w.
func (p *Partition) RemoveWaiter(w *Waiter) {
	p.mu.Lock()
	delete(p.waiters, w)
	p.mu.Unlock()
}

func (p *Partition) wakeAll() {
	p.mu.Lock()
	for w := range p.waiters {
		w.wake()
	}
	p.mu.Unlock()
}
