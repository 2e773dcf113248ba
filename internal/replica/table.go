package replica

import "github.com/samsa-kafka/samsa/internal/kafka"

// The hosted partitions, by topic then by partition number (kafka.Table): one
// look-up of the topic's name, then an index. A LeaderAndIsr names
// thousands of partitions of a few topics; Lookup resolves each topic once
// for a whole run of its partitions instead of hashing (topic, partition)
// for each.

// getLocked returns the hosted partition or nil (m.mu held).
func (m *Manager) getLocked(tp kafka.TopicPartition) *Partition {
	return m.topics.Get(tp.Topic, tp.Partition)
}

// putLocked hosts p, replacing any partition at its place (m.mu held for
// writing).
func (m *Manager) putLocked(p *Partition) { m.topics.Put(p.TP.Topic, p.TP.Partition, p) }

// deleteLocked stops hosting tp and returns what was hosted, or nil (m.mu
// held for writing). A topic without partitions left is forgotten.
func (m *Manager) deleteLocked(tp kafka.TopicPartition) *Partition {
	return m.topics.Delete(tp.Topic, tp.Partition)
}

// allLocked lists every hosted partition (m.mu held).
func (m *Manager) allLocked() []*Partition {
	out := make([]*Partition, 0, m.topics.Len())
	for _, p := range m.topics.All() {
		out = append(out, p)
	}
	return out
}

// Lookup calls fn with a look-up of hosted partitions (nil when not
// hosted), valid during fn only; the partitions hosted do not change while
// fn runs, which must not call back into m. Consecutive look-ups of the
// same topic find its table without hashing its name again.
func (m *Manager) Lookup(fn func(get func(kafka.TopicPartition) *Partition)) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	c := m.topics.Cursor()
	fn(func(tp kafka.TopicPartition) *Partition { return c.Get(tp.Topic, tp.Partition) })
}

// HostsTopic reports whether a partition of topic is hosted here.
func (m *Manager) HostsTopic(topic string) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.topics.Topic(topic) != nil
}
