package controller

// The controller context's view of reassignments (Kafka's
// ControllerContext.partitionFullReplicaAssignment and
// partitionsBeingReassigned): each topic keeps, besides each partition's
// replica set RS, the adding and removing replicas of the partitions being
// reassigned, loaded from the assignment document at failover and kept by
// the hot standby; a partition with neither is not being reassigned.

import (
	"slices"

	"github.com/samsa-kafka/samsa/internal/metadata"
)

// fullAssignment is tp's full replica assignment (Kafka's
// partitionFullReplicaAssignment).
func (cx *Context) fullAssignment(tp TP) metadata.PartitionAssignment {
	t := cx.topics[tp.Topic]
	if t == nil {
		return metadata.PartitionAssignment{}
	}
	return metadata.PartitionAssignment{Replicas: t.replicasOf(tp.Partition), Adding: t.adding[tp.Partition], Removing: t.removing[tp.Partition]}
}

// setFullAssignment records tp's full assignment.
func (cx *Context) setFullAssignment(tp TP, pa metadata.PartitionAssignment) {
	t := cx.topics[tp.Topic]
	if t == nil {
		return
	}
	t.setReplicas(tp.Partition, pa.Replicas)
	setReplicaList(&t.adding, tp.Partition, pa.Adding)
	setReplicaList(&t.removing, tp.Partition, pa.Removing)
}

func setReplicaList(m *map[int32][]int32, p int32, rs []int32) {
	if len(rs) == 0 {
		delete(*m, p)
		return
	}
	if *m == nil {
		*m = map[int32][]int32{}
	}
	(*m)[p] = rs
}

// topicReassigning reports a reassignment in progress in topic.
func (c *Controller) topicReassigning(topic string) bool {
	t := c.ctx.topics[topic]
	return t != nil && (len(t.adding) > 0 || len(t.removing) > 0)
}

// reassigningPartitions lists the partitions being reassigned, sorted.
func (cx *Context) reassigningPartitions() []TP {
	var out []TP
	for name, t := range cx.topics {
		for p := range t.adding {
			out = append(out, TP{Topic: name, Partition: p})
		}
		for p := range t.removing {
			if _, both := t.adding[p]; !both {
				out = append(out, TP{Topic: name, Partition: p})
			}
		}
	}
	sortTPs(out)
	return out
}

// reassignmentComplete: not being reassigned, or every target replica is
// in the ISR (Kafka's isReassignmentComplete).
func (c *Controller) reassignmentComplete(tp TP) bool {
	pa := c.ctx.fullAssignment(tp)
	if !pa.Reassigning() {
		return true
	}
	st, ok := c.ctx.states.get(tp)
	if !ok {
		return false
	}
	for _, r := range pa.Target() {
		if !slices.Contains(st.ISR, r) {
			return false
		}
	}
	return true
}
