package replica

// The hosted partitions, by topic then by partition number: one look-up of
// the topic's name, then an index. A LeaderAndIsr names thousands of
// partitions of a few topics; Lookup resolves each topic once for a whole
// run of its partitions instead of hashing (topic, partition) for each.

import "github.com/samsa-kafka/samsa/internal/storage"

// topicTable holds the hosted partitions of one topic, at their number
// (nil where not hosted), and in sparse those whose number is far past the
// others (a dense table for them would be mostly empty; a partition is in
// one place only); n counts them all.
type topicTable struct {
	parts  []*Partition
	sparse map[int32]*Partition
	n      int
}

// denseSlack is how far past the dense table's end a new partition still
// grows it (partitions are numbered from 0 up, and usually hosted so).
const denseSlack = 1024

// getLocked returns the hosted partition or nil (m.mu held).
func (m *Manager) getLocked(tp storage.TopicPartition) *Partition {
	return m.topics[tp.Topic].get(tp.Partition)
}

func (t *topicTable) get(p int32) *Partition {
	if t == nil {
		return nil
	}
	if p >= 0 && int(p) < len(t.parts) && t.parts[p] != nil {
		return t.parts[p]
	}
	return t.sparse[p]
}

// putLocked hosts p, replacing any partition at its place (m.mu held for
// writing).
func (m *Manager) putLocked(p *Partition) {
	t := m.topics[p.TP.Topic]
	if t == nil {
		t = &topicTable{}
		m.topics[p.TP.Topic] = t
	}
	i := p.TP.Partition
	switch {
	case t.sparse[i] != nil: // replaced where it is
		t.sparse[i] = p
		return
	case i >= 0 && int(i) < len(t.parts):
	case i >= 0 && int64(i) <= int64(2*len(t.parts)+denseSlack):
		if int(i) >= cap(t.parts) {
			grown := make([]*Partition, i+1, max(int(i)+1, 2*cap(t.parts)))
			copy(grown, t.parts)
			t.parts = grown
		}
		t.parts = t.parts[:i+1]
	default:
		if t.sparse == nil {
			t.sparse = map[int32]*Partition{}
		}
		t.sparse[i] = p
		t.n++
		m.count++
		return
	}
	if t.parts[i] == nil {
		t.n++
		m.count++
	}
	t.parts[i] = p
}

// deleteLocked stops hosting tp and returns what was hosted, or nil (m.mu
// held for writing). A topic without partitions left is forgotten.
func (m *Manager) deleteLocked(tp storage.TopicPartition) *Partition {
	t := m.topics[tp.Topic]
	p := t.get(tp.Partition)
	if p == nil {
		return nil
	}
	if i := tp.Partition; i >= 0 && int(i) < len(t.parts) && t.parts[i] == p {
		t.parts[i] = nil
	} else {
		delete(t.sparse, i)
	}
	t.n--
	m.count--
	if t.n == 0 {
		delete(m.topics, tp.Topic)
	}
	return p
}

// allLocked lists every hosted partition (m.mu held).
func (m *Manager) allLocked() []*Partition {
	out := make([]*Partition, 0, m.count)
	for _, t := range m.topics {
		for _, p := range t.parts {
			if p != nil {
				out = append(out, p)
			}
		}
		for _, p := range t.sparse {
			out = append(out, p)
		}
	}
	return out
}

// Lookup calls fn with a look-up of hosted partitions (nil when not
// hosted), valid during fn only; the partitions hosted do not change while
// fn runs, which must not call back into m. Consecutive look-ups of the
// same topic find its table without hashing its name again.
func (m *Manager) Lookup(fn func(get func(storage.TopicPartition) *Partition)) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var (
		topic string
		table *topicTable
		found bool
	)
	fn(func(tp storage.TopicPartition) *Partition {
		if !found || tp.Topic != topic {
			topic, table, found = tp.Topic, m.topics[tp.Topic], true
		}
		return table.get(tp.Partition)
	})
}
