package storage

// The log's transactions (the rules are in txn.go, the index files in
// txnindex.go): markers appended as leader, the last stable offset, the
// aborted transactions a read_committed fetch returns.

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/samsa-kafka/samsa/internal/record"
)

// AppendTxnMarker appends the transaction marker m as leader in
// leaderEpoch (Kafka's appendAsLeader with the coordinator origin),
// checked by the marker rules: ErrInvalidProducerEpoch if m's epoch is
// older than the producer's, ErrCoordinatorFenced if its coordinator epoch
// is older than the last marker's. It ends the producer's transaction; an
// abort is indexed. A leaderEpoch < 0 means the latest epoch of the log.
func (l *Log) AppendTxnMarker(m record.Marker, now time.Time, leaderEpoch int32) (AppendInfo, error) {
	batch := record.BuildMarker(m, now.UnixMilli())
	h, err := record.ReadHeader(batch)
	if err != nil {
		return AppendInfo{}, err
	}
	return l.appendLeader(batch, []record.Header{h}, now, leaderEpoch, &m)
}

// checkMarkerLocked applies the marker rules (mu held for writing).
func (l *Log) checkMarkerLocked(m record.Marker) error {
	if l.onDisk == nil {
		return nil
	}
	return l.producers.checkMarker(m)
}

// LastStableOffset is the offset below which every transaction is decided
// (txn.go): the high watermark, or the first offset of the oldest
// transaction still open or not yet replicated if lower, never below the
// log start. -1 if the log cannot be loaded.
func (l *Log) LastStableOffset() int64 {
	if err := l.rlockLoaded(); err != nil {
		return -1
	}
	defer l.mu.RUnlock()
	return l.lsoLocked()
}

// lsoLocked is LastStableOffset with mu held.
func (l *Log) lsoLocked() int64 {
	if l.onDisk == nil || l.lazy.Load() {
		return l.hw.Load()
	}
	return lastStableOffset(l.producers, l.startLocked(), l.hw.Load())
}

// AbortedTxns lists the aborted transactions a read_committed fetch of
// [from, to) must know about (Kafka's collectAbortedTransactions): those
// whose abort marker is at or after from and whose first offset is before
// to, by marker offset.
func (l *Log) AbortedTxns(from, to int64) []AbortedTxn {
	if err := l.rlockLoaded(); err != nil {
		return nil
	}
	defer l.mu.RUnlock()
	if l.onDisk == nil {
		return nil
	}
	var out []AbortedTxn
	for _, a := range l.aborted.collect(from, to) {
		out = append(out, AbortedTxn{ProducerID: a.producerID, FirstOffset: a.firstOffset})
	}
	return out
}

// abortedTxnsLocked is AbortedTxns with the whole index entries (the
// cleaner's view), mu held.
func (l *Log) abortedTxnsLocked(from, to int64) []abortedTxn {
	if l.onDisk == nil {
		return nil
	}
	return l.aborted.collect(from, to)
}

// HasOpenTxn tells whether the producer has a transaction open on the
// partition (KIP-890: a transactional batch needs none open, or a
// verified one).
func (l *Log) HasOpenTxn(producerID int64) bool {
	if err := l.rlockLoaded(); err != nil {
		return false
	}
	defer l.mu.RUnlock()
	if l.onDisk == nil || l.producers == nil {
		return false
	}
	return l.openTxnLocked(producerID)
}

// Verification guards (KIP-890 part 1, Kafka's VerificationGuard): a
// transactional batch that would open a transaction is appended only after
// the producer's coordinator said the partition is in its transaction. The
// leader takes a guard before asking (StartTxnVerification) and appends
// with it (AppendVerified); a marker of the producer appended meanwhile
// (the transaction ended, say by its timeout) drops the guard, so the late
// batch is refused (ErrInvalidTxnState) instead of opening a transaction
// nobody will end.

// guardSeq numbers the guards; 0 is never one.
var guardSeq atomic.Uint64

// StartTxnVerification returns a guard for a transactional batch of the
// producer, or 0 if the producer has a transaction open here (no
// verification needed).
func (l *Log) StartTxnVerification(producerID int64) uint64 {
	if l.HasOpenTxn(producerID) { // the common case, under the read lock
		return 0
	}
	if err := l.lockLoaded(); err != nil {
		return 0
	}
	defer l.mu.Unlock()
	if l.onDisk != nil && l.producers != nil {
		if e := l.producers.producers[producerID]; e != nil && e.txnFirstOffset >= 0 {
			return 0
		}
	}
	g := guardSeq.Add(1)
	if l.txnGuards == nil {
		l.txnGuards = map[int64]uint64{}
	}
	l.txnGuards[producerID] = g
	return g
}

// AppendVerified is AppendAsLeader for a client batch verified with guard
// (StartTxnVerification): a transactional batch of a producer with no
// transaction open is refused with ErrInvalidTxnState unless guard is the
// producer's current one, which the append that opens the transaction
// uses up.
func (l *Log) AppendVerified(records []byte, hdrs []record.Header, now time.Time, leaderEpoch int32, guard uint64) (AppendInfo, error) {
	if leaderEpoch < 0 {
		return AppendInfo{}, fmt.Errorf("storage: invalid leader epoch %d", leaderEpoch)
	}
	return l.appendLeaderGuarded(records, hdrs, now, leaderEpoch, nil, guard)
}

// checkGuardsLocked refuses a batch that would open a transaction without
// the producer's current guard (mu held for writing).
func (l *Log) checkGuardsLocked(hdrs []record.Header, guard uint64) error {
	for i := range hdrs {
		h := &hdrs[i]
		if !h.Transactional() || h.ProducerID < 0 || l.openTxnLocked(h.ProducerID) {
			continue
		}
		if g, ok := l.txnGuards[h.ProducerID]; !ok || g != guard {
			return fmt.Errorf("%w: batch of producer %d not part of a verified ongoing transaction on %s",
				ErrInvalidTxnState, h.ProducerID, l.tp)
		}
	}
	return nil
}

// openTxnLocked tells whether the producer has a transaction open (mu held).
func (l *Log) openTxnLocked(producerID int64) bool {
	if l.onDisk == nil || l.producers == nil {
		return false
	}
	e := l.producers.producers[producerID]
	return e != nil && e.txnFirstOffset >= 0
}

// dropGuardLocked forgets the producer's guard (its transaction opened or
// ended; mu held for writing).
func (l *Log) dropGuardLocked(producerID int64) {
	if l.txnGuards != nil {
		delete(l.txnGuards, producerID)
		if len(l.txnGuards) == 0 {
			l.txnGuards = nil
		}
	}
}
