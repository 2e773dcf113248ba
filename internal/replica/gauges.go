package replica

// What Kafka's ReplicaManager reports of the partitions a broker hosts
// (kafka.server:type=ReplicaManager): the counts an operator alerts on,
// read when asked (a metrics scrape) rather than kept on every change, and
// the ISR shrinks and expansions this broker's leaders adopted, counted as
// they happen.

// Gauges are counts of the partitions hosted here.
type Gauges struct {
	Partitions      int // PartitionCount: hosted here, leader or follower
	Leaders         int // LeaderCount
	UnderReplicated int // UnderReplicatedPartitions: led here, an ISR smaller than the replicas
	UnderMinISR     int // UnderMinIsrPartitionCount: led here, an ISR smaller than min.insync.replicas
	AtMinISR        int // AtMinIsrPartitionCount: led here, an ISR of exactly min.insync.replicas
}

// Gauges counts the hosted partitions. A partition waiting for its first
// controller decision counts as hosted only.
func (m *Manager) Gauges() Gauges {
	m.mu.RLock()
	parts := m.allLocked()
	m.mu.RUnlock()
	g := Gauges{Partitions: len(parts)}
	for _, p := range parts {
		p.countInto(&g)
	}
	return g
}

func (p *Partition) countInto(g *Gauges) {
	p.roleMu.RLock()
	leading := p.decided && p.leadingLocked()
	isr, replicas := len(p.state.isr()), int(p.state.nReplicas)
	p.roleMu.RUnlock()
	if !leading {
		return
	}
	g.Leaders++
	if isr < replicas {
		g.UnderReplicated++
	}
	switch minISR := p.Config().minISR(); {
	case isr < minISR:
		g.UnderMinISR++
	case isr == minISR:
		g.AtMinISR++
	}
}

// ISRChanges is how many ISR changes this broker's leaders adopted since it
// started (Kafka's IsrShrinksPerSec and IsrExpandsPerSec, as counters).
func (m *Manager) ISRChanges() (shrinks, expands int64) {
	return m.isrShrinks.Load(), m.isrExpands.Load()
}

// countISRChange counts an adopted ISR change from before to after members.
func (m *Manager) countISRChange(before, after int) {
	switch {
	case after < before:
		m.isrShrinks.Add(1)
	case after > before:
		m.isrExpands.Add(1)
	}
}
