package group

// Transactional offsets (KIP-98, KIP-447), as Kafka's GroupMetadata keeps
// them: a TxnOffsetCommit's offsets are written to the log in a
// transactional batch of the producer and stay pending, per producer id,
// until the producer's transaction marker reaches the group's partition
// (CompleteTxn). A COMMIT makes each pending offset the committed one
// unless a commit later in the log already is (Kafka's
// completePendingTxnOffsetCommit and CommitRecordMetadataAndOffset.olderThan);
// an ABORT drops them.
//
// Validation (Kafka's validateOffsetCommit with isTransactional): Dead is
// COORDINATOR_NOT_AVAILABLE; a generation >= 0, a member id or an instance
// id (TxnOffsetCommit v3+, KIP-447) must name a current member and the
// group's generation (UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID,
// ILLEGAL_GENERATION); without them any group takes the commit, members or
// not (v0–v2 carry none). Unlike OffsetCommit, a rebalance in progress is
// no error and the member's session is not extended.
//
// Pending offsets keep a group alive (HasOffsets, Removable): expiry does
// not remove a group with an open transaction, nor expire a committed
// offset with a pending one (Kafka's cleanupExpiredOffsets); deleting a partition's
// offset (OffsetDelete, expiry, DeleteGroups) drops its pending ones too,
// as Kafka's removeOffsets.

import "github.com/twmb/franz-go/pkg/kerr"

// ValidateTxnCommit checks a TxnOffsetCommit against the group.
func (g *Group) ValidateTxnCommit(memberID string, instanceID *string, generation int32) error {
	if g.state == Dead {
		return kerr.CoordinatorNotAvailable
	}
	if generation >= 0 || memberID != "" || instanceID != nil {
		return g.checkMember(memberID, instanceID, generation)
	}
	return nil
}

// PrepareTxnOffset records a transactional offset of producerID written
// at logOffset, pending until CompleteTxn.
func (g *Group) PrepareTxnOffset(producerID int64, tp TP, o Offset, logOffset int64) {
	if g.pendingTxn == nil {
		g.pendingTxn = map[int64]map[TP]Offset{}
	}
	m := g.pendingTxn[producerID]
	if m == nil {
		m = map[TP]Offset{}
		g.pendingTxn[producerID] = m
	}
	o.logOffset = logOffset
	m[tp] = o
}

// FailTxnOffset forgets the pending offset written at logOffset whose
// write failed (Kafka's failPendingTxnOffsetCommit); a later write of the
// same partition stays.
func (g *Group) FailTxnOffset(producerID int64, tp TP, logOffset int64) {
	m := g.pendingTxn[producerID]
	if o, ok := m[tp]; ok && o.logOffset == logOffset {
		delete(m, tp)
		if len(m) == 0 {
			delete(g.pendingTxn, producerID)
		}
	}
}

// CompleteTxn ends producerID's transaction on the group: on commit its
// pending offsets become committed where no newer commit is; on abort
// they are dropped. It reports whether the producer had pending offsets.
func (g *Group) CompleteTxn(producerID int64, commit bool) bool {
	m, ok := g.pendingTxn[producerID]
	if !ok {
		return false
	}
	delete(g.pendingTxn, producerID)
	if commit {
		for tp, o := range m {
			g.ApplyOffset(tp, o, o.logOffset)
		}
	}
	return true
}

// HasPendingTxn reports whether producerID has pending offsets (Kafka's
// hasPendingOffsetCommitsFromProducer).
func (g *Group) HasPendingTxn(producerID int64) bool {
	_, ok := g.pendingTxn[producerID]
	return ok
}

// PendingOffset reports whether tp has an offset commit in flight or a
// producer's pending transactional offset (Kafka's
// hasPendingOffsetCommitsForTopicPartition): OffsetFetch's require_stable
// answers UNSTABLE_OFFSET_COMMIT for it.
func (g *Group) PendingOffset(tp TP) bool {
	return g.inflight[tp] > 0 || g.pendingTxnHas(tp)
}

// pendingTxnHas reports whether a producer has a pending offset of tp.
func (g *Group) pendingTxnHas(tp TP) bool {
	for _, m := range g.pendingTxn {
		if _, ok := m[tp]; ok {
			return true
		}
	}
	return false
}

// PendingTxnProducers returns the producer ids with pending offsets.
func (g *Group) PendingTxnProducers() []int64 {
	out := make([]int64, 0, len(g.pendingTxn))
	for id := range g.pendingTxn {
		out = append(out, id)
	}
	return out
}

// dropPendingTxn forgets every producer's pending offset of tp.
func (g *Group) dropPendingTxn(tp TP) {
	for id, m := range g.pendingTxn {
		delete(m, tp)
		if len(m) == 0 {
			delete(g.pendingTxn, id)
		}
	}
}

// pendingTxnTPs returns the partitions with a pending offset.
func (g *Group) pendingTxnTPs() map[TP]bool {
	out := map[TP]bool{}
	for _, m := range g.pendingTxn {
		for tp := range m {
			out[tp] = true
		}
	}
	return out
}

// CommitInFlight counts a plain commit of tp written and not yet
// committed (delta 1), or no longer in flight (delta -1).
func (g *Group) CommitInFlight(tp TP, delta int) {
	if g.inflight == nil {
		g.inflight = map[TP]int{}
	}
	if g.inflight[tp] += delta; g.inflight[tp] <= 0 {
		delete(g.inflight, tp)
	}
}
