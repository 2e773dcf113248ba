package storage

// Producer state: the idempotent producer's rules (KIP-98, KIP-360), after
// Kafka's ProducerStateManager, ProducerAppendInfo, ProducerStateEntry and
// BatchMetadata. A deterministic core: no goroutines, no I/O, time passed
// in. The log calls it under its append lock (producerlog.go).
//
// Per producer id a partition keeps the epoch and the metadata of its last
// producerBatches batches. A client batch (the leader path) is checked
// before anything is appended, in this order:
//
//	batch                                          answer
//	producer id < 0                                not looked at (free)
//	epoch < 0, base sequence < 0, or record count
//	  not matching the sequence range              ErrInvalidProducerBatch
//	same epoch, same first and last sequence as
//	  one of the last batches                      duplicate: its offsets, nothing appended
//	epoch older than the producer's                ErrInvalidProducerEpoch
//	producer unknown here                          appended, any sequence (KIP-360:
//	                                               Kafka accepts it since 2.5, for
//	                                               every Produce version)
//	epoch newer, sequence 0                        appended, the old batches forgotten
//	epoch newer, sequence not 0                    ErrOutOfOrderSequence
//	same epoch, sequence last+1 (0 after 2^31-1)   appended
//	same epoch, any other sequence                 ErrOutOfOrderSequence
//	not transactional, the producer's transaction
//	  open (txn.go)                                ErrInvalidTxnState
//
// Replicated batches and batches replayed from the log are not checked
// (Kafka's AppendOrigin.REPLICATION): they update the state as they come,
// an older epoch included (Kafka only warns). Transactions (the first
// transactional batch opens one, a marker ends it) are in txn.go.

import (
	"errors"
	"fmt"
	"math"

	"github.com/samsa-kafka/samsa/internal/record"
)

// Sentinel errors of the producer rules; api maps them to Kafka codes.
var (
	// ErrOutOfOrderSequence maps to OUT_OF_ORDER_SEQUENCE_NUMBER.
	ErrOutOfOrderSequence = errors.New("storage: out of order sequence number")
	// ErrInvalidProducerEpoch maps to INVALID_PRODUCER_EPOCH.
	ErrInvalidProducerEpoch = errors.New("storage: invalid producer epoch")
	// ErrInvalidProducerBatch wraps record.ErrInvalidRecord (INVALID_RECORD):
	// an idempotent batch whose epoch, sequence or record count cannot be.
	ErrInvalidProducerBatch = fmt.Errorf("storage: invalid idempotent batch: %w", record.ErrInvalidRecord)
)

// producerBatches is how many batches per producer are remembered for
// duplicate detection: the Java client's max.in.flight.requests limit for
// idempotence (Kafka's NumBatchesToRetain).
const producerBatches = 5

// batchMeta is Kafka's BatchMetadata: where one batch of a producer went.
type batchMeta struct {
	lastSeq     int32
	offsetDelta int32 // last offset - first offset (= last seq - first seq)
	lastOffset  int64
	timestamp   int64 // the batch's max timestamp (LogAppendTime if stamped)
}

func (b batchMeta) firstSeq() int32    { return decSeq(b.lastSeq, b.offsetDelta) }
func (b batchMeta) firstOffset() int64 { return b.lastOffset - int64(b.offsetDelta) }

// producerEntry is Kafka's ProducerStateEntry: a producer's epoch and its
// last batches, oldest first in a ring of producerBatches.
type producerEntry struct {
	epoch            int16
	n, head          uint8 // batches held; index of the oldest
	coordinatorEpoch int32 // of the last transaction marker, -1 none
	txnFirstOffset   int64 // first offset of the open transaction, -1 none
	batches          [producerBatches]batchMeta
}

func newProducerEntry(epoch int16) *producerEntry {
	return &producerEntry{epoch: epoch, coordinatorEpoch: -1, txnFirstOffset: -1}
}

// last returns the newest batch; ok is false if there is none.
func (e *producerEntry) last() (batchMeta, bool) {
	if e.n == 0 {
		return batchMeta{}, false
	}
	return e.batches[(int(e.head)+int(e.n)-1)%producerBatches], true
}

// lastSeq is the newest batch's last sequence, -1 if none.
func (e *producerEntry) lastSeq() int32 {
	if b, ok := e.last(); ok {
		return b.lastSeq
	}
	return -1
}

// lastTimestamp is the newest batch's timestamp, -1 if none.
func (e *producerEntry) lastTimestamp() int64 {
	if b, ok := e.last(); ok {
		return b.timestamp
	}
	return -1
}

// add remembers b as the newest batch, forgetting the oldest if full.
func (e *producerEntry) add(b batchMeta) {
	if e.n < producerBatches {
		e.batches[(int(e.head)+int(e.n))%producerBatches] = b
		e.n++
		return
	}
	e.batches[e.head] = b
	e.head = (e.head + 1) % producerBatches
}

// setEpoch moves the producer to epoch, forgetting its batches if it
// changes (Kafka's maybeUpdateProducerEpoch).
func (e *producerEntry) setEpoch(epoch int16) {
	if e.epoch != epoch {
		e.epoch, e.n, e.head = epoch, 0, 0
	}
}

// findDuplicate returns the remembered batch h retries, if any.
func (e *producerEntry) findDuplicate(h *record.Header) (batchMeta, bool) {
	if e.epoch != h.ProducerEpoch {
		return batchMeta{}, false
	}
	last := incSeq(h.BaseSequence, h.LastOffsetDelta)
	for i := 0; i < int(e.n); i++ {
		b := e.batches[(int(e.head)+i)%producerBatches]
		if b.lastSeq == last && b.firstSeq() == h.BaseSequence {
			return b, true
		}
	}
	return batchMeta{}, false
}

// producerStates is one partition's producer state: an entry per producer
// id. A nil *producerStates knows no producer (checkBatch allows it).
type producerStates struct {
	producers map[int64]*producerEntry
	// open: the open transactions, by first offset (txn.go).
	open []txnSpan
	// unreplicated: completed transactions whose marker the high
	// watermark may not have passed yet, in marker order (txn.go).
	unreplicated []txnSpan
}

func newProducerStates() *producerStates {
	return &producerStates{producers: map[int64]*producerEntry{}}
}

// checkBatch applies the client rules (the table above) to h, a data batch
// of producer h.ProducerID >= 0, before it is appended. A retry of a
// remembered batch returns that batch with dup set.
func (s *producerStates) checkBatch(h *record.Header) (dup batchMeta, isDup bool, err error) {
	if err := checkBatchShape(h); err != nil {
		return batchMeta{}, false, err
	}
	var e *producerEntry
	if s != nil {
		e = s.producers[h.ProducerID]
	}
	if e == nil {
		return batchMeta{}, false, nil // KIP-360: no state, any sequence
	}
	if b, ok := e.findDuplicate(h); ok {
		return b, true, nil
	}
	switch {
	case h.ProducerEpoch < e.epoch:
		return batchMeta{}, false, fmt.Errorf("%w: producer %d epoch %d, last seen %d",
			ErrInvalidProducerEpoch, h.ProducerID, h.ProducerEpoch, e.epoch)
	case h.ProducerEpoch > e.epoch:
		if h.BaseSequence != 0 {
			return batchMeta{}, false, fmt.Errorf("%w: producer %d new epoch %d starts at sequence %d, not 0",
				ErrOutOfOrderSequence, h.ProducerID, h.ProducerEpoch, h.BaseSequence)
		}
	case !inSequence(e.lastSeq(), h.BaseSequence):
		return batchMeta{}, false, fmt.Errorf("%w: producer %d epoch %d sequence %d, expected %d",
			ErrOutOfOrderSequence, h.ProducerID, h.ProducerEpoch, h.BaseSequence, incSeq(e.lastSeq(), 1))
	}
	if e.txnFirstOffset >= 0 && !h.Transactional() {
		return batchMeta{}, false, fmt.Errorf("%w: non-transactional batch of producer %d while its transaction from %d is open",
			ErrInvalidTxnState, h.ProducerID, e.txnFirstOffset)
	}
	return batchMeta{}, false, nil
}

// checkBatchShape refuses idempotent batches that no client sends: a
// negative epoch or base sequence, or a record count other than the
// sequence range (LastOffsetDelta+1: one sequence number per record).
func checkBatchShape(h *record.Header) error {
	switch {
	case h.ProducerEpoch < 0:
		return fmt.Errorf("%w: producer %d with epoch %d", ErrInvalidProducerBatch, h.ProducerID, h.ProducerEpoch)
	case h.BaseSequence < 0:
		return fmt.Errorf("%w: producer %d with base sequence %d", ErrInvalidProducerBatch, h.ProducerID, h.BaseSequence)
	case h.LastOffsetDelta < 0 || h.NumRecords != h.LastOffsetDelta+1:
		return fmt.Errorf("%w: producer %d: %d records for sequences %d..+%d",
			ErrInvalidProducerBatch, h.ProducerID, h.NumRecords, h.BaseSequence, h.LastOffsetDelta)
	}
	return nil
}

// update records the data batch h, appended at its BaseOffset, without
// checking it (every path: leader after checkBatch, follower, replay); a
// transactional batch opens the producer's transaction if none is.
// Batches without a producer id and control batches (endTxn's) are
// ignored.
func (s *producerStates) update(h *record.Header) {
	if h.ProducerID < 0 || h.Control() {
		return
	}
	e := s.producers[h.ProducerID]
	if e == nil {
		e = newProducerEntry(h.ProducerEpoch)
		s.producers[h.ProducerID] = e
	}
	e.setEpoch(h.ProducerEpoch)
	e.add(batchMeta{lastSeq: incSeq(h.BaseSequence, h.LastOffsetDelta), offsetDelta: h.LastOffsetDelta,
		lastOffset: h.LastOffset(), timestamp: h.MaxTimestamp})
	if h.Transactional() {
		s.beginTxn(h.ProducerID, e, h.BaseOffset)
	}
}

// expire removes the producers idle for at least expirationMs at nowMs
// (their last batch's timestamp), unless a transaction of theirs is open,
// as Kafka's removeExpiredProducers. It returns how many went.
func (s *producerStates) expire(nowMs, expirationMs int64) int {
	n := 0
	for id, e := range s.producers {
		if e.txnFirstOffset < 0 && nowMs-e.lastTimestamp() >= expirationMs {
			delete(s.producers, id)
			n++
		}
	}
	return n
}

// inSequence is Kafka's: next follows last, wrapping to 0 after 2^31-1.
func inSequence(last, next int32) bool {
	return int64(next) == int64(last)+1 || (next == 0 && last == math.MaxInt32)
}

// incSeq is Kafka's DefaultRecordBatch.incrementSequence: seq+by modulo
// 2^31 (sequences are non-negative int32s that wrap to 0).
func incSeq(seq, by int32) int32 {
	if seq > math.MaxInt32-by {
		return by - (math.MaxInt32 - seq) - 1
	}
	return seq + by
}

// decSeq is Kafka's decrementSequence, the inverse of incSeq.
func decSeq(seq, by int32) int32 {
	if seq < by {
		return math.MaxInt32 - (by - seq) + 1
	}
	return seq - by
}
