package replica

import "slices"

// decision is a State as a partition keeps it (Partition.state): the
// replicas and the ISR in one array, ids = replicas ++ ISR. A hundred
// thousand partitions hold one each, and most of a request's partitions
// have the same few lists (a topic's replicas rotate over a few brokers),
// so the array is either shared or owned:
//
//   - shared: handed out by a Batch to every partition of the topic with the
//     same lists (Batch.lists), and never written;
//   - owned: the partition's own (a decision on its own), rewritten in
//     place by the next decision or ISR change that fits (a new leader
//     epoch, an ISR change allocate nothing); made with room for the ISR
//     to grow to the replicas.
//
// Evidence: BenchmarkLeaderAndIsrCreate 80.7 -> 76.2 MB/op (commit
// c898e31: a decision 64 -> 48 bytes, lists shared within a Batch).
type decision struct {
	ids                                 []int32
	leader, leaderEpoch, partitionEpoch int32
	nReplicas                           int32 // ids[:nReplicas] are the replicas
	role                                Role
	shared                              bool
}

func (d *decision) replicas() []int32 { return d.ids[:d.nReplicas:d.nReplicas] }
func (d *decision) isr() []int32      { return d.ids[d.nReplicas:len(d.ids):len(d.ids)] }

// toState is the decision as a State of its own (empty lists are nil).
func (d *decision) toState() State {
	return State{Role: d.role, Leader: d.leader, LeaderEpoch: d.leaderEpoch, PartitionEpoch: d.partitionEpoch,
		Replicas: cloneOrNil(d.replicas()), ISR: cloneOrNil(d.isr())}
}

func cloneOrNil(s []int32) []int32 {
	if len(s) == 0 {
		return nil
	}
	return slices.Clone(s)
}

// assign makes d the decision st, its lists shared from b, or, without b,
// copied into d's own array when it has one that fits. st's slices are not
// kept.
func (d *decision) assign(st State, b *Batch) {
	ids, shared := d.ids, d.shared
	*d = decision{role: st.Role, leader: st.Leader, leaderEpoch: st.LeaderEpoch, partitionEpoch: st.PartitionEpoch,
		nReplicas: int32(len(st.Replicas))}
	if b != nil {
		d.ids, d.shared = b.lists(st.Replicas, st.ISR), true
		return
	}
	d.ids = ownedLists(ids, shared, st.Replicas, st.ISR)
}

// setISR replaces the ISR (an adopted ISR change), in place if d owns an
// array that fits.
func (d *decision) setISR(isr []int32) {
	d.ids, d.shared = ownedLists(d.ids, d.shared, d.replicas(), isr), false
}

// ownedLists returns replicas ++ isr in ids if owned (not shared) and large
// enough, else in a new array with room for the ISR to grow to the
// replicas. replicas may be ids' own.
func ownedLists(ids []int32, shared bool, replicas, isr []int32) []int32 {
	r := len(replicas)
	if shared || cap(ids) < r+len(isr) {
		fresh := make([]int32, r, r+max(r, len(isr)))
		copy(fresh, replicas)
		return append(fresh, isr...)
	}
	ids = append(ids[:0], replicas...) // a no-op when replicas are ids' own
	return append(ids, isr...)
}
