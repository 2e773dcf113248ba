package controller

// What Kafka's KafkaController reports of the cluster
// (kafka.controller:type=KafkaController): counted from the active
// controller's context when asked (a metrics scrape), on the loop like any
// other event, rather than kept up to date on every state change, which
// would cost the failover and broker-crash paths at a million partitions.
// Kafka's own are zero on a broker that is not the controller; here a broker
// that is not has none to report (Loop.Gauges' ok).

import (
	"context"
	"slices"
)

// Gauges are the active controller's counts.
type Gauges struct {
	// OfflinePartitions is OfflinePartitionsCount: partitions without a
	// leader (OfflinePartition), topics being deleted left out.
	OfflinePartitions int
	// PreferredReplicaImbalance is PreferredReplicaImbalanceCount:
	// partitions whose leader is not their first replica (hasPreferredLeader),
	// topics being deleted left out.
	PreferredReplicaImbalance int
	Topics                    int // GlobalTopicCount
	Partitions                int // GlobalPartitionCount
	TopicsToDelete            int // TopicsToDeleteCount: topics queued for deletion
}

// gaugesEvent asks the loop for the gauges; reply gets them with ok false
// when this controller is not active.
type gaugesEvent struct{ reply func(gaugesAnswer) }

type gaugesAnswer struct {
	g  Gauges
	ok bool
}

func (gaugesEvent) name() string { return "Gauges" }

// Gauges counts the active controller's gauges on the loop and waits for
// them; ok is false when this broker is not the active controller or ctx
// ends first. Safe from any goroutine.
func (l *Loop) Gauges(ctx context.Context) (g Gauges, ok bool) {
	a := askLoop(ctx, l, func(reply func(gaugesAnswer)) Event { return gaugesEvent{reply} },
		func(int16) gaugesAnswer { return gaugesAnswer{} })
	return a.g, a.ok
}

func (c *Controller) onGauges(e gaugesEvent) {
	if c.ctx == nil {
		e.reply(gaugesAnswer{})
		return
	}
	e.reply(gaugesAnswer{g: c.ctx.gauges(c.deleting), ok: true})
}

// gauges counts the context's partitions; deleting holds the topics queued
// for deletion.
func (c *Context) gauges(deleting map[string]bool) Gauges {
	g := Gauges{Topics: len(c.topics), TopicsToDelete: len(deleting)}
	c.partState.eachTopic(func(name string, s *partSlice[PartitionState]) {
		t, states := c.topic(name), c.states.topic(name)
		for p, ok := range s.has {
			if !ok {
				continue
			}
			g.Partitions++
			if deleting[name] {
				continue
			}
			if s.v[p] == OfflinePartition {
				g.OfflinePartitions++
			}
			var replicas, adding []int32
			if t != nil {
				replicas, adding = t.replicasOf(int32(p)), t.adding[int32(p)]
			}
			if st, ok := states.get(int32(p)); ok && len(replicas) > 0 && !hasPreferredLeader(replicas, adding, st.Leader, st.ISR) {
				g.PreferredReplicaImbalance++
			}
		}
	})
	return g
}

// hasPreferredLeader is Kafka's: the leader is the first replica, except
// that a first replica a reassignment is adding counts as preferred until it
// joins the ISR (the reassignment is not imbalance before it completes).
func hasPreferredLeader(replicas, adding []int32, leader int32, isr []int32) bool {
	if slices.Contains(adding, replicas[0]) {
		return !slices.Contains(isr, replicas[0])
	}
	return leader == replicas[0]
}
