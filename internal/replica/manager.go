package replica

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/storage"
)

// Manager is the set of partitions hosted on this broker.
type Manager struct {
	logs     *storage.Manager
	now      func() time.Time // clock of role changes; tests replace it
	proposer atomic.Pointer[func(ISRProposal)]
	// ISR changes adopted by the leaders here (gauges.go)
	isrShrinks, isrExpands atomic.Int64

	mu     sync.RWMutex
	topics kafka.Table[Partition] // hosted partitions (table.go)
}

// NewManager serves partitions whose logs live in logs.
func NewManager(logs *storage.Manager) *Manager {
	return &Manager{logs: logs, now: time.Now}
}

// Get returns the partition or nil.
func (m *Manager) Get(tp kafka.TopicPartition) *Partition {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.getLocked(tp)
}

// Ensure makes the partition hosted here, creating its log if needed, led
// by this broker alone at epoch 0 (a single broker without a controller):
// its ISR is itself, so its HW reaches the log end offset at each append. It
// does not open log files.
func (m *Manager) Ensure(tp kafka.TopicPartition, topicID [16]byte, cfg Config) (*Partition, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p := m.getLocked(tp); p != nil && p.TopicID == topicID {
		return p, nil
	}
	l := m.logs.Get(tp)
	if l == nil || l.TopicID() != topicID {
		if l != nil { // a stale log of an earlier topic with the same name
			if err := m.logs.Delete(tp); err != nil {
				return nil, err
			}
		}
		var err error
		if l, err = m.logs.Create(tp, topicID, cfg.Log); err != nil {
			return nil, err
		}
	} else {
		l.SetConfig(cfg.Log)
	}
	p := newPartition(nil, m, tp, topicID, l, cfg, true)
	m.putLocked(p)
	return p, nil
}

// Remove stops hosting tp; with deleteLog its directory is renamed for
// deletion. The partition leads nothing any more (ErrNotLeader) and waiting
// fetches are woken so they notice.
func (m *Manager) Remove(tp kafka.TopicPartition, deleteLog bool) error {
	return m.RemoveMany([]kafka.TopicPartition{tp}, deleteLog)
}

// RemoveMany is Remove for many partitions, their logs deleted in one
// storage batch.
func (m *Manager) RemoveMany(tps []kafka.TopicPartition, deleteLog bool) error {
	var gone []*Partition
	m.mu.Lock()
	for _, tp := range tps {
		if p := m.deleteLocked(tp); p != nil {
			gone = append(gone, p)
		}
	}
	m.mu.Unlock()
	for _, p := range gone {
		p.detach()
	}
	if !deleteLog {
		return nil
	}
	return m.logs.DeleteMany(tps)
}

// Become applies a controller decision to tp (Kafka's becomeLeaderOrFollower
// for one partition): the partition is hosted here, its log created with cfg
// if absent, and st installed. It fails with ErrStaleLeaderEpoch when st is
// not newer than the decision the partition holds, and with
// ErrInconsistentTopicID when the hosted partition belongs to another topic
// id (a zero id in the request skips that check); a log on disk of another
// topic id, not hosted, is set aside as stray and a new one made. Becoming
// leader starts the leader epoch at the log end offset in the log's epoch
// cache and resets what the leader knows of its followers; a storage error
// there fails the decision.
func (m *Manager) Become(tp kafka.TopicPartition, topicID [16]byte, cfg Config, st State) (*Partition, error) {
	return m.BecomeWithLog(tp, topicID, cfg, st, nil)
}

// BecomeWithLog is Become for a partition whose log the caller has (from
// CreateLogs, nil if not): a partition not hosted yet wraps l instead of
// looking its log up.
func (m *Manager) BecomeWithLog(tp kafka.TopicPartition, topicID [16]byte, cfg Config, st State, l *storage.Log) (*Partition, error) {
	return m.become(nil, m.now(), tp, topicID, cfg, st, l)
}

// become is BecomeWithLog at now, a new partition allocated from b (nil:
// on its own).
func (m *Manager) become(b *Batch, now time.Time, tp kafka.TopicPartition, topicID [16]byte, cfg Config, st State, l *storage.Log) (*Partition, error) {
	// A hosted partition (the common case) needs only the read lock; apply
	// waits for appends and may touch the log, so no lock is held then.
	m.mu.RLock()
	p := b.getLocked(m, tp)
	m.mu.RUnlock()
	if p == nil {
		m.mu.Lock()
		if p = b.getLocked(m, tp); p != nil {
			m.mu.Unlock()
		}
	}
	if p != nil {
		return m.applyHosted(b, now, p, topicID, st)
	}
	defer m.mu.Unlock()
	p, err := m.hostLocked(b, tp, topicID, cfg, l)
	if err != nil {
		return nil, err
	}
	if err := p.apply(st, now, b); err != nil { // never stale: no decision yet
		return nil, err
	}
	b.growTableLocked(tp.Topic)
	b.putLocked(m, p)
	return p, nil
}

// BecomeHosted is Become for p, which the caller found hosted (Get), without
// looking it up again; if p stopped being hosted since, it is Become with
// p's config.
func (m *Manager) BecomeHosted(p *Partition, topicID [16]byte, st State) (*Partition, error) {
	return m.becomeHosted(nil, m.now(), p, topicID, st)
}

func (m *Manager) becomeHosted(b *Batch, now time.Time, p *Partition, topicID [16]byte, st State) (*Partition, error) {
	if p.Detached() {
		return m.become(b, now, p.TP, topicID, p.Config(), st, nil)
	}
	return m.applyHosted(b, now, p, topicID, st)
}

// applyHosted installs st on the hosted partition p after the topic id
// check.
func (m *Manager) applyHosted(b *Batch, now time.Time, p *Partition, topicID [16]byte, st State) (*Partition, error) {
	if topicID != ([16]byte{}) && p.TopicID != ([16]byte{}) && p.TopicID != topicID {
		return nil, fmt.Errorf("%w: %s has %x, request %x", ErrInconsistentTopicID, p.TP, p.TopicID, topicID)
	}
	return p, p.apply(st, now, b)
}

// hostLocked wraps tp's log (l if given, else looked up and created if
// absent) in a new partition, from b, that stays unpublished until the
// caller has applied its state.
func (m *Manager) hostLocked(b *Batch, tp kafka.TopicPartition, topicID [16]byte, cfg Config, l *storage.Log) (*Partition, error) {
	if l == nil {
		l = m.logs.Get(tp)
	}
	if l == nil {
		var err error
		if l, err = m.logs.Create(tp, topicID, cfg.Log); err != nil {
			return nil, err
		}
	} else if id := l.TopicID(); topicID != ([16]byte{}) && id != ([16]byte{}) && id != topicID {
		// The log of another topic of this name (a log dir restored from
		// an older backup, say): set aside as stray, as KRaft brokers do
		// (KAFKA-14616), and the partition starts with a new log.
		if err := m.logs.MarkStray([]kafka.TopicPartition{tp}, fmt.Sprintf("its topic id %x is not the topic's now, %x", id, topicID)); err != nil {
			return nil, err
		}
		var err error
		if l, err = m.logs.Create(tp, topicID, cfg.Log); err != nil {
			return nil, err
		}
	} else {
		l.SetConfig(cfg.Log)
	}
	if topicID == ([16]byte{}) {
		topicID = l.TopicID()
	}
	return newPartition(b, m, tp, topicID, l, cfg, false), nil
}

// CreateTopicLogs creates, in one batch, the logs of partitions about to be
// hosted (storage.CreateTopics: a topic's new logs allocated together,
// nothing written until their first append) and returns every log of ts in
// their order, for BecomeWithLog. Logs that exist are left alone
// (BecomeWithLog checks their topic id and sets their config).
func (m *Manager) CreateTopicLogs(ts []storage.TopicLogs) ([]*storage.Log, error) {
	for i := range ts {
		ts[i].KeepExisting = true
	}
	return m.logs.CreateTopics(ts)
}
