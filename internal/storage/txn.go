package storage

// Transactions on a partition (KIP-98), after Kafka's ProducerStateManager
// (ongoingTxns, unreplicatedTxns, firstUnstableOffset) and
// ProducerAppendInfo.appendEndTxnMarker. A deterministic core over the
// producer state: no goroutines, no I/O; the log calls it under its append
// lock (txnlog.go) and passes the high watermark in.
//
// A producer's transaction opens with its first transactional batch (at
// that batch's base offset) and ends with a marker (a control batch,
// COMMIT or ABORT). A marker appended as leader is checked first:
//
//	marker                                          answer
//	epoch older than the producer's                 ErrInvalidProducerEpoch
//	coordinator epoch older than the last marker's  ErrCoordinatorFenced
//	anything else (no open transaction included)    appended
//
// Replicated and replayed markers are not checked. A marker ends the open
// transaction, adopts a newer epoch and records the coordinator epoch; if
// a transaction was open it makes a completed transaction {producer, first
// offset, marker offset} that stays unstable until the high watermark
// passes the marker (a marker without data changes no offset and is not
// indexed: Kafka's appendEndTxnMarker emits no completed transaction).
//
// A client's data batch is checked too: a non-transactional batch from a
// producer whose transaction is open is ErrInvalidTxnState (Kafka's
// appendDataBatch); a transactional one opens a transaction if none is.
//
//	first unstable offset = min(first offset of the oldest open transaction,
//	                            first offset of every completed one whose
//	                            marker is at or above the high watermark)
//	last stable offset    = max(log start, min(high watermark, first unstable))
//
// An aborted transaction is indexed (txnindex.go) with, as its last stable
// offset, the first offset of the oldest transaction still open after the
// marker, else the marker's offset + 1 (Kafka's lastStableOffset(completedTxn)).

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/samsa-kafka/samsa/internal/record"
)

// ErrCoordinatorFenced maps to TRANSACTION_COORDINATOR_FENCED: a marker
// from a coordinator epoch older than the last marker's of the producer.
var ErrCoordinatorFenced = errors.New("storage: transaction coordinator fenced")

// ErrInvalidTxnState maps to INVALID_TXN_STATE: a non-transactional batch
// from a producer with an open transaction.
var ErrInvalidTxnState = errors.New("storage: invalid transaction state")

// txnSpan is a transaction of a producer: its first offset and, once
// completed, its marker's offset (last; -1 while open).
type txnSpan struct {
	producerID  int64
	first, last int64
	aborted     bool
}

// checkMarker applies the leader's marker rules (the table above).
func (s *producerStates) checkMarker(m record.Marker) error {
	var e *producerEntry
	if s != nil {
		e = s.producers[m.ProducerID]
	}
	if e == nil {
		return nil
	}
	if m.ProducerEpoch < e.epoch {
		return fmt.Errorf("%w: marker of producer %d with epoch %d, last seen %d",
			ErrInvalidProducerEpoch, m.ProducerID, m.ProducerEpoch, e.epoch)
	}
	if m.CoordinatorEpoch < e.coordinatorEpoch {
		return fmt.Errorf("%w: marker of producer %d with coordinator epoch %d, last seen %d",
			ErrCoordinatorFenced, m.ProducerID, m.CoordinatorEpoch, e.coordinatorEpoch)
	}
	return nil
}

// beginTxn opens e's transaction at offset if none is open.
func (s *producerStates) beginTxn(id int64, e *producerEntry, offset int64) {
	if e.txnFirstOffset >= 0 {
		return
	}
	e.txnFirstOffset = offset
	i, _ := slices.BinarySearchFunc(s.open, offset, func(t txnSpan, off int64) int { return cmp.Compare(t.first, off) })
	s.open = slices.Insert(s.open, i, txnSpan{producerID: id, first: offset, last: -1})
}

// endTxn applies the marker m appended at offset (unchecked: every path)
// and returns the completed transaction, if one was open, which stays
// unstable until the high watermark passes offset.
func (s *producerStates) endTxn(m record.Marker, offset int64) (txnSpan, bool) {
	e := s.producers[m.ProducerID]
	if e == nil {
		e = newProducerEntry(m.ProducerEpoch)
		s.producers[m.ProducerID] = e
	}
	if m.ProducerEpoch > e.epoch {
		e.setEpoch(m.ProducerEpoch)
	}
	first := e.txnFirstOffset
	e.txnFirstOffset, e.coordinatorEpoch = -1, m.CoordinatorEpoch
	if first < 0 {
		return txnSpan{}, false
	}
	s.dropOpen(m.ProducerID)
	t := txnSpan{producerID: m.ProducerID, first: first, last: offset, aborted: !m.Commit}
	s.unreplicated = append(s.unreplicated, t)
	return t, true
}

// dropOpen forgets the open transaction of a producer.
func (s *producerStates) dropOpen(id int64) {
	s.open = slices.DeleteFunc(s.open, func(t txnSpan) bool { return t.producerID == id })
}

// indexLSO is the last stable offset recorded with an aborted transaction
// t just completed: the oldest open transaction's first offset, else the
// offset after t's marker.
func (s *producerStates) indexLSO(t txnSpan) int64 {
	if len(s.open) > 0 {
		return s.open[0].first
	}
	return t.last + 1
}

// firstUnstable is the first unstable offset given the high watermark hw,
// math.MaxInt64 if none. A nil state has none.
func (s *producerStates) firstUnstable(hw int64) int64 {
	fu := int64(math.MaxInt64)
	if s == nil {
		return fu
	}
	if len(s.open) > 0 {
		fu = s.open[0].first
	}
	for _, t := range s.unreplicated {
		if t.last >= hw {
			fu = min(fu, t.first)
		}
	}
	return fu
}

// pruneReplicated forgets the completed transactions whose marker is
// below the high watermark hw (Kafka's onHighWatermarkUpdated).
func (s *producerStates) pruneReplicated(hw int64) {
	if s != nil && len(s.unreplicated) > 0 {
		s.unreplicated = slices.DeleteFunc(s.unreplicated, func(t txnSpan) bool { return t.last < hw })
	}
}

// indexOpen rebuilds the open transactions from the entries (after a
// snapshot is decoded).
func (s *producerStates) indexOpen() {
	s.open = s.open[:0]
	for id, e := range s.producers {
		if e.txnFirstOffset >= 0 {
			s.open = append(s.open, txnSpan{producerID: id, first: e.txnFirstOffset, last: -1})
		}
	}
	slices.SortFunc(s.open, func(a, b txnSpan) int { return cmp.Compare(a.first, b.first) })
}

// lastStableOffset is the rule of the file comment.
func lastStableOffset(s *producerStates, logStart, hw int64) int64 {
	return max(logStart, min(hw, s.firstUnstable(hw)))
}
