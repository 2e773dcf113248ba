package controller

// The leader imbalance check of auto.leader.rebalance.enable, as the
// ZooKeeper-era KafkaController's checkAndTriggerAutoLeaderRebalance, as a
// pure function (auto_rebalance_event.go runs it on the loop).
//
// Partitions of topics queued for deletion are left out. The others are
// grouped by preferred replica (the first assigned replica). A broker's
// imbalance ratio is the share of its group led by another broker (or by
// none) among partitions that have a state; when it is above
// leader.imbalance.per.broker.percentage (strictly), the partitions of its
// group not led by it whose preferred replica can lead — live, not shutting
// down, in the ISR — are elected with the preferred strategy. While any
// partition is being reassigned, nothing is elected (Kafka waits for
// reassignments to finish).

// leadership is one partition as the imbalance check sees it.
type leadership struct {
	TP       TP
	Replicas []int32
	HasState bool
	Leader   int32
	ISR      []int32
	Deleting bool // its topic is queued for deletion
}

// brokerImbalance is one broker's figures.
type brokerImbalance struct {
	Broker    int32
	Preferred int  // partitions whose preferred replica it is
	NotLed    int  // of those, with a state and another leader (or none)
	Over      bool // NotLed/Preferred above the allowed percentage
}

// Ratio is NotLed/Preferred.
func (b brokerImbalance) Ratio() float64 {
	if b.Preferred == 0 {
		return 0
	}
	return float64(b.NotLed) / float64(b.Preferred)
}

// planRebalance returns every broker's imbalance (by broker id) and the
// partitions to elect (sorted).
func planRebalance(parts []leadership, electable func(int32) bool, percentage int32, reassigning bool) ([]brokerImbalance, []TP) {
	byBroker := map[int32][]leadership{}
	for _, p := range parts {
		if p.Deleting || len(p.Replicas) == 0 {
			continue
		}
		byBroker[p.Replicas[0]] = append(byBroker[p.Replicas[0]], p)
	}
	var out []brokerImbalance
	var elect []TP
	for _, id := range sortedIDs(byBroker) {
		group := byBroker[id]
		b := brokerImbalance{Broker: id, Preferred: len(group)}
		var notLed []leadership
		for _, p := range group {
			if p.HasState && p.Leader != id {
				notLed = append(notLed, p)
			}
		}
		b.NotLed = len(notLed)
		// ratio > percentage/100, in integers
		b.Over = int64(b.NotLed)*100 > int64(percentage)*int64(b.Preferred)
		out = append(out, b)
		if !b.Over || reassigning {
			continue
		}
		for _, p := range notLed {
			if preferredLeader(p.Replicas, p.ISR, electable) >= 0 {
				elect = append(elect, p.TP)
			}
		}
	}
	sortTPs(elect)
	return out, elect
}

// leaderships lists every partition of the context for planRebalance.
func (c *Controller) leaderships() []leadership {
	all := c.ctx.allPartitions()
	out := make([]leadership, 0, len(all))
	for _, tp := range all {
		l := leadership{TP: tp, Replicas: c.ctx.replicas(tp), Leader: -1, Deleting: c.deleting[tp.Topic]}
		if st, ok := c.ctx.states.get(tp); ok {
			l.HasState, l.Leader, l.ISR = true, st.Leader, st.ISR
		}
		out = append(out, l)
	}
	return out
}
