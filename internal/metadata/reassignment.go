package metadata

// Partition reassignment in the topic assignment document (KIP-455), as
// Kafka's /brokers/topics/<topic> version 2+ stores it: "partitions" holds
// each partition's full replica set RS while a reassignment is in progress,
// "adding_replicas" the replicas being added (AR) and "removing_replicas"
// those being removed (RR); a partition with neither entry is not being
// reassigned. So a pending reassignment survives a controller failover.
//
// PartitionAssignment is Kafka's ReplicaAssignment: the original replicas
// ORS = RS − AR, the target TRS = RS − RR, and ReassignTo(target) gives
// RS = TRS + ORS (target first, then the original replicas not in it),
// AR = RS − ORS, RR = RS − TRS.

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/samsa-kafka/samsa/internal/metastore"
)

// ErrNoAssignment: the topic has no assignment document.
var ErrNoAssignment = errors.New("metadata: topic has no assignment")

// maxAssignmentRetries bounds UpdateAssignment's re-read-and-retry loop.
const maxAssignmentRetries = 10

// PartitionAssignment is one partition's full replica assignment.
type PartitionAssignment struct {
	Replicas []int32 // RS
	Adding   []int32 // AR
	Removing []int32 // RR
}

// Reassigning reports a reassignment in progress.
func (pa PartitionAssignment) Reassigning() bool { return len(pa.Adding) > 0 || len(pa.Removing) > 0 }

// Origin is ORS: the replicas before the reassignment.
func (pa PartitionAssignment) Origin() []int32 { return without(pa.Replicas, pa.Adding) }

// Target is TRS: the replicas after the reassignment.
func (pa PartitionAssignment) Target() []int32 { return without(pa.Replicas, pa.Removing) }

// ReassignTo is the assignment moving from this one's original replicas to
// target (Kafka's ReplicaAssignment.reassignTo).
func (pa PartitionAssignment) ReassignTo(target []int32) PartitionAssignment {
	origin := pa.Origin()
	rs := slices.Clone(target)
	for _, r := range origin {
		if !slices.Contains(rs, r) {
			rs = append(rs, r)
		}
	}
	return PartitionAssignment{Replicas: rs, Adding: without(rs, origin), Removing: without(rs, target)}
}

// Equal compares two assignments, order included.
func (pa PartitionAssignment) Equal(o PartitionAssignment) bool {
	return slices.Equal(pa.Replicas, o.Replicas) && slices.Equal(pa.Adding, o.Adding) && slices.Equal(pa.Removing, o.Removing)
}

// without is s minus the members of drop, in s's order; nil when empty.
func without(s, drop []int32) []int32 {
	var out []int32
	for _, r := range s {
		if !slices.Contains(drop, r) {
			out = append(out, r)
		}
	}
	return out
}

// Partition returns partition p's full assignment.
func (a Assignment) Partition(p int32) PartitionAssignment {
	return PartitionAssignment{Replicas: a.Partitions[p], Adding: a.AddingReplicas[p], Removing: a.RemovingReplicas[p]}
}

// SetPartition records partition p's full assignment; empty adding and
// removing lists leave no entry (the partition is not being reassigned).
func (a *Assignment) SetPartition(p int32, pa PartitionAssignment) {
	if a.Partitions == nil {
		a.Partitions = map[int32][]int32{}
	}
	a.Partitions[p] = pa.Replicas
	setOrDelete(&a.AddingReplicas, p, pa.Adding)
	setOrDelete(&a.RemovingReplicas, p, pa.Removing)
}

func setOrDelete(m *map[int32][]int32, p int32, rs []int32) {
	if len(rs) == 0 {
		delete(*m, p)
		return
	}
	if *m == nil {
		*m = map[int32][]int32{}
	}
	(*m)[p] = rs
}

// UpdateAssignment rewrites a topic's assignment document: it reads the
// document, lets edit change it, and writes it back fenced and conditional
// on the version read, starting over when another writer got in between.
// It returns the version written; ErrNoAssignment if the topic has none, a
// lost fence ErrControllerMoved.
func (c *Client) UpdateAssignment(ctx context.Context, f Fence, topic string, edit func(*Assignment)) (int64, error) {
	key := TopicKey(topic)
	for range maxAssignmentRetries {
		kv, found, err := c.s.Get(ctx, key)
		if err != nil {
			return 0, err
		}
		if !found {
			return 0, fmt.Errorf("%w: %q", ErrNoAssignment, topic)
		}
		a, err := DecodeAssignment(kv.Value)
		if err != nil {
			return 0, err
		}
		edit(&a)
		rev, err := c.FencedTxnRevision(ctx, f, []metastore.Cmp{{Key: key, Version: kv.Version}},
			[]metastore.Op{metastore.Put(key, EncodeAssignment(a))})
		if err != nil || rev > 0 {
			return rev, err
		}
	}
	return 0, fmt.Errorf("metadata: assignment of %q kept changing", topic)
}
