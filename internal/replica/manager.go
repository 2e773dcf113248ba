package replica

import (
	"fmt"
	"sync"

	"github.com/samsa-kafka/samsa/internal/storage"
)

// Manager is the set of partitions hosted on this broker.
type Manager struct {
	logs *storage.Manager

	mu    sync.RWMutex
	parts map[storage.TopicPartition]*Partition
}

// NewManager serves partitions whose logs live in logs.
func NewManager(logs *storage.Manager) *Manager {
	return &Manager{logs: logs, parts: map[storage.TopicPartition]*Partition{}}
}

// Get returns the partition or nil.
func (m *Manager) Get(tp storage.TopicPartition) *Partition {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.parts[tp]
}

// Ensure makes the partition hosted here, creating its log if needed. It does
// not open log files.
func (m *Manager) Ensure(tp storage.TopicPartition, topicID [16]byte, cfg Config) (*Partition, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p := m.parts[tp]; p != nil && p.TopicID == topicID {
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
	p := newPartition(tp, topicID, l, cfg)
	m.parts[tp] = p
	return p, nil
}

// Remove stops hosting tp; with deleteLog its directory is renamed for
// deletion. Waiting fetches are woken so they notice.
func (m *Manager) Remove(tp storage.TopicPartition, deleteLog bool) error {
	m.mu.Lock()
	p := m.parts[tp]
	delete(m.parts, tp)
	m.mu.Unlock()
	if p != nil {
		p.wakeAll()
	}
	if deleteLog && m.logs.Get(tp) != nil {
		return m.logs.Delete(tp)
	}
	return nil
}

// Become applies a controller decision to tp (Kafka's becomeLeaderOrFollower
// for one partition): the partition is hosted here, its log created with cfg
// if absent, and st installed. It fails with ErrStaleLeaderEpoch when st is
// not newer than the decision the partition holds, and with
// ErrInconsistentTopicID when the hosted partition or the log on disk belongs
// to another topic id (a zero id in the request skips that check).
func (m *Manager) Become(tp storage.TopicPartition, topicID [16]byte, cfg Config, st State) (*Partition, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p := m.parts[tp]; p != nil {
		if topicID != ([16]byte{}) && p.TopicID != ([16]byte{}) && p.TopicID != topicID {
			return nil, fmt.Errorf("%w: %s has %x, request %x", ErrInconsistentTopicID, tp, p.TopicID, topicID)
		}
		return p, p.apply(st)
	}
	p, err := m.hostLocked(tp, topicID, cfg)
	if err != nil {
		return nil, err
	}
	_ = p.apply(st) // a new partition holds no decision yet
	m.parts[tp] = p
	return p, nil
}

// hostLocked wraps tp's log (created if absent) in a new partition that
// stays unpublished until the caller has applied its state.
func (m *Manager) hostLocked(tp storage.TopicPartition, topicID [16]byte, cfg Config) (*Partition, error) {
	l := m.logs.Get(tp)
	if l == nil {
		var err error
		if l, err = m.logs.Create(tp, topicID, cfg.Log); err != nil {
			return nil, err
		}
	} else {
		if id := l.TopicID(); topicID != ([16]byte{}) && id != ([16]byte{}) && id != topicID {
			return nil, fmt.Errorf("%w: log of %s has %x, request %x", ErrInconsistentTopicID, tp, id, topicID)
		}
		l.SetConfig(cfg.Log)
	}
	if topicID == ([16]byte{}) {
		topicID = l.TopicID()
	}
	return newPartition(tp, topicID, l, cfg), nil
}
