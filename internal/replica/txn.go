package replica

// Transactions on a partition (issue 19): the leader appends the markers
// the transaction coordinator sends (WriteTxnMarkers), and read_committed
// consumers read below the last stable offset (LSO), which storage derives
// from the high watermark at every call: it moves when the HW moves, and
// the waiters woken for a HW move see the new LSO.

import (
	"time"

	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/samsa-kafka/samsa/internal/storage"
)

// AppendTxnMarker appends a COMMIT (commit) or ABORT marker of the
// producer's transaction as leader, stamped with the partition's leader
// epoch, as an acks=all append (ErrNotLeader, ErrNotEnoughReplicas before
// anything is written); storage refuses an older producer epoch
// (storage.ErrInvalidProducerEpoch) or coordinator epoch
// (storage.ErrCoordinatorFenced). The caller waits for Acked(LastOffset+1).
// Followers append replicated markers through the fetcher as any batch.
func (p *Partition) AppendTxnMarker(producerID int64, producerEpoch int16, coordinatorEpoch int32, commit bool) (storage.AppendInfo, error) {
	m := record.Marker{ProducerID: producerID, ProducerEpoch: producerEpoch, CoordinatorEpoch: coordinatorEpoch, Commit: commit}
	now := time.Now()
	if p.mgr != nil {
		now = p.mgr.now()
	}
	return p.appendLeader(-1, func(epoch int32) (storage.AppendInfo, error) {
		return p.log.AppendTxnMarker(m, now, epoch)
	})
}

// LastStableOffset is the offset below which every transaction is decided
// (storage.Log.LastStableOffset): at most the high watermark.
func (p *Partition) LastStableOffset() int64 { return p.log.LastStableOffset() }

// AbortedTxns lists the aborted transactions a read_committed fetch of
// [from, to) returns (storage.Log.AbortedTxns).
func (p *Partition) AbortedTxns(from, to int64) []storage.AbortedTxn {
	return p.log.AbortedTxns(from, to)
}

// HasOpenTxn tells whether the producer has a transaction open here.
func (p *Partition) HasOpenTxn(producerID int64) bool { return p.log.HasOpenTxn(producerID) }

// ReadCommitted is Read for a read_committed consumer: whole batches from
// offset below the last stable offset. It returns the high watermark and
// the LSO the read was bounded by. A follower refuses with ErrNotLeader.
func (p *Partition) ReadCommitted(offset int64, maxBytes int32, how storage.ReadHow) (res storage.ReadResult, hw, lso int64, err error) {
	if !p.IsLeader() {
		return storage.ReadResult{}, -1, -1, ErrNotLeader
	}
	hw = p.HighWatermark()
	lso = min(p.LastStableOffset(), hw) // the HW may have moved between the two
	res, err = p.log.ReadAs(offset, lso, maxBytes, how)
	return res, hw, lso, err
}

// StartTxnVerification takes a KIP-890 verification guard for a
// transactional batch of the producer, 0 if its transaction is open here
// (storage.Log.StartTxnVerification).
func (p *Partition) StartTxnVerification(producerID int64) uint64 {
	return p.log.StartTxnVerification(producerID)
}

// AppendVerified is AppendAsLeader for a batch whose transaction the
// coordinator verified under guard: storage refuses a batch opening a
// transaction whose guard a marker dropped meanwhile
// (storage.ErrInvalidTxnState).
func (p *Partition) AppendVerified(records []byte, hdrs []record.Header, now time.Time, requiredAcks int16, guard uint64) (storage.AppendInfo, error) {
	return p.appendLeader(requiredAcks, func(epoch int32) (storage.AppendInfo, error) {
		return p.log.AppendVerified(records, hdrs, now, epoch, guard)
	})
}
