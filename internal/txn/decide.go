package txn

// The coordinator's decisions on one transactional id (Kafka's
// TransactionCoordinator handle* methods and TransactionMetadata's
// prepare*), with the errors Kafka answers. Each returns the Transit to
// write, or nil with a nil error when the answer is success without a
// write (an AddPartitions of partitions already in the transaction, a
// retried EndTxn of a completed transaction). The error is a *kerr.Error
// for what the client is told, or wraps ErrIllegalState.
//
// Errors, in the order checked (AddPartitions, Verify, EndTxn):
//
//	producer id not the id's               INVALID_PRODUCER_ID_MAPPING
//	epoch not the id's (older for a fence) PRODUCER_FENCED
//	a transition pending                   CONCURRENT_TRANSACTIONS
//	PrepareCommit/PrepareAbort             CONCURRENT_TRANSACTIONS (EndTxn: same outcome asked;
//	                                        the other outcome INVALID_TXN_STATE)
//	EndTxn on Empty, or Complete* asking   INVALID_TXN_STATE
//	  the other outcome
//
// PRODUCER_FENCED is INVALID_PRODUCER_EPOCH for clients older than KIP-588
// (the api layer maps it by request version, as Kafka's KafkaApis).

import (
	"fmt"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// IDEpoch is the producer id and epoch an InitProducerId carries (KIP-360:
// a producer recovering from an error keeps its id).
type IDEpoch struct {
	ID    int64
	Epoch int16
}

// prepareNext prepares a target built from the current state by edit; the
// last producer id is always the current one (Kafka's prepareTransitionTo).
func (m *Metadata) prepareNext(state State, now time.Time, edit func(t *Transit)) (*Transit, error) {
	t := m.transit()
	t.State, t.LastUpdate, t.LastProducerID = state, now, m.ProducerID
	if edit != nil {
		edit(&t)
	}
	t, err := m.prepare(t)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// PrepareInit decides an InitProducerId for this id (Kafka's
// prepareInitProducerIdTransit): Empty with the epoch bumped, a new
// producer id once the epoch is exhausted, or — for an Ongoing
// transaction — a PrepareAbort with the epoch bumped, which fences the old
// producer; the client is then answered CONCURRENT_TRANSACTIONS and
// retries, bumping the epoch once more. newID gives a new producer id.
func (m *Metadata) PrepareInit(timeoutMs int32, expected *IDEpoch, now time.Time, newID func() (int64, error)) (*Transit, error) {
	if m.pending != none {
		return nil, kerr.ConcurrentTransactions
	}
	if expected != nil && !m.validExpected(*expected) {
		return nil, kerr.ProducerFenced
	}
	switch m.State {
	case PrepareCommit, PrepareAbort:
		return nil, kerr.ConcurrentTransactions
	case Empty, CompleteCommit, CompleteAbort:
		if epochExhausted(m.ProducerEpoch) && (expected == nil || expected.Epoch == m.ProducerEpoch) {
			id, err := newID()
			if err != nil {
				return nil, err
			}
			return m.prepareRotation(id, timeoutMs, now, expected != nil)
		}
		return m.prepareBump(timeoutMs, expected, now)
	case Ongoing:
		return m.PrepareFenceAbort(now)
	}
	return nil, fmt.Errorf("%w: %s: InitProducerId in state %s", ErrIllegalState, m.ID, m.State)
}

// validExpected is Kafka's isValidProducerId: the id has no epoch yet, or
// the client's id is the current one (its epoch is checked by the bump),
// or it is the previous one with an exhausted epoch (a retry of the
// rotation whose answer was lost).
func (m *Metadata) validExpected(e IDEpoch) bool {
	return m.ProducerEpoch == NoProducerEpoch || e.ID == m.ProducerID ||
		(e.ID == m.LastProducerID && epochExhausted(e.Epoch))
}

// prepareBump is Kafka's prepareIncrementProducerEpoch.
func (m *Metadata) prepareBump(timeoutMs int32, expected *IDEpoch, now time.Time) (*Transit, error) {
	if epochExhausted(m.ProducerEpoch) {
		return nil, fmt.Errorf("%w: %s: epoch %d exhausted", ErrIllegalState, m.ID, m.ProducerEpoch)
	}
	next, last := m.ProducerEpoch+1, NoProducerEpoch
	switch {
	case expected == nil: // a new producer: fences every older one
	case m.ProducerEpoch == NoProducerEpoch || expected.Epoch == m.ProducerEpoch:
		last = m.ProducerEpoch // the current producer recovering
	case expected.Epoch == m.LastProducerEpoch:
		next, last = m.ProducerEpoch, m.LastProducerEpoch // a retry of a bump already made
	default:
		return nil, kerr.ProducerFenced
	}
	return m.prepareNext(Empty, now, func(t *Transit) {
		t.ProducerEpoch, t.LastProducerEpoch, t.TimeoutMs = next, last, timeoutMs
		t.Partitions, t.Start = nil, time.Time{}
	})
}

// prepareRotation is Kafka's prepareProducerIdRotation: a new producer id
// at epoch 0 once the epoch is exhausted.
func (m *Metadata) prepareRotation(id int64, timeoutMs int32, now time.Time, recordLast bool) (*Transit, error) {
	last := NoProducerEpoch
	if recordLast {
		last = m.ProducerEpoch
	}
	return m.prepareNext(Empty, now, func(t *Transit) {
		t.ProducerID, t.ProducerEpoch, t.LastProducerEpoch, t.TimeoutMs = id, 0, last, timeoutMs
		t.Partitions, t.Start = nil, time.Time{}
	})
}

// PrepareFenceAbort aborts the Ongoing transaction with the epoch bumped
// (Kafka's prepareFenceProducerEpoch followed by the endTransaction of an
// abort not from a client): for InitProducerId and for a timed-out
// transaction. After a fence whose write failed the epoch is not bumped
// again (it never reached a client).
func (m *Metadata) PrepareFenceAbort(now time.Time) (*Transit, error) {
	if m.pending != none || m.State != Ongoing {
		return nil, fmt.Errorf("%w: %s: fencing in state %s (pending %s)", ErrIllegalState, m.ID, m.State, m.pending)
	}
	if m.ProducerEpoch == math.MaxInt16 {
		return nil, fmt.Errorf("%w: %s: cannot fence epoch %d", ErrIllegalState, m.ID, m.ProducerEpoch)
	}
	if !m.failedFence {
		m.ProducerEpoch++
	}
	m.LastProducerEpoch = NoProducerEpoch
	t, err := m.prepareNext(PrepareAbort, now, nil)
	if err == nil {
		m.fenceAbort = true
	}
	return t, err
}

// PrepareAddPartitions adds partitions to the transaction, opening it
// (Kafka's handleAddPartitionsToTransaction and prepareAddPartitions).
func (m *Metadata) PrepareAddPartitions(producerID int64, epoch int16, tps []kafka.TopicPartition, now time.Time) (*Transit, error) {
	if err := m.checkProducer(producerID, epoch); err != nil {
		return nil, err
	}
	if m.State == PrepareCommit || m.State == PrepareAbort {
		return nil, kerr.ConcurrentTransactions
	}
	if m.State == Ongoing && m.contains(tps) {
		return nil, nil
	}
	return m.prepareNext(Ongoing, now, func(t *Transit) {
		if m.State.completed() {
			t.Start = now
		}
		seen := make(map[kafka.TopicPartition]bool, len(t.Partitions))
		for _, tp := range t.Partitions {
			seen[tp] = true
		}
		for _, tp := range tps {
			if !seen[tp] {
				seen[tp] = true
				t.Partitions = append(t.Partitions, tp)
			}
		}
		sortTPs(t.Partitions)
	})
}

// checkProducer is the first three checks of AddPartitions and EndTxn
// from a client.
func (m *Metadata) checkProducer(producerID int64, epoch int16) error {
	switch {
	case producerID != m.ProducerID:
		return kerr.InvalidProducerIDMapping
	case epoch != m.ProducerEpoch:
		return kerr.ProducerFenced
	case m.pending != none:
		return kerr.ConcurrentTransactions
	}
	return nil
}

func (m *Metadata) contains(tps []kafka.TopicPartition) bool {
	for _, tp := range tps {
		if _, ok := m.Partitions[tp]; !ok {
			return false
		}
	}
	return true
}

// Verify answers a verify-only AddPartitionsToTxn (KIP-890 part 1, Kafka's
// handleVerifyPartitionsInTransaction): per partition, nil when it is in
// the transaction, INVALID_TXN_STATE when not. A pending transition is not
// checked (the partition's own append is the final check).
func (m *Metadata) Verify(producerID int64, epoch int16, tps []kafka.TopicPartition) ([]error, error) {
	switch {
	case producerID != m.ProducerID:
		return nil, kerr.InvalidProducerIDMapping
	case epoch != m.ProducerEpoch:
		return nil, kerr.ProducerFenced
	case m.State == PrepareCommit || m.State == PrepareAbort:
		return nil, kerr.ConcurrentTransactions
	}
	out := make([]error, len(tps))
	for i, tp := range tps {
		if _, ok := m.Partitions[tp]; !ok || m.State != Ongoing {
			out[i] = kerr.InvalidTxnState
		}
	}
	return out, nil
}

// PrepareEnd decides an EndTxn from a client (Kafka's endTransaction with
// isFromClient): PrepareCommit or PrepareAbort of the Ongoing transaction;
// success without a write for a retry of an EndTxn already completed.
func (m *Metadata) PrepareEnd(producerID int64, epoch int16, commit bool, now time.Time) (*Transit, error) {
	if err := m.checkProducer(producerID, epoch); err != nil {
		return nil, err
	}
	same := (commit && (m.State == PrepareCommit || m.State == CompleteCommit)) ||
		(!commit && (m.State == PrepareAbort || m.State == CompleteAbort))
	switch m.State {
	case Ongoing:
		next := PrepareAbort
		if commit {
			next = PrepareCommit
		}
		return m.prepareNext(next, now, nil)
	case CompleteCommit, CompleteAbort:
		if same {
			return nil, nil
		}
		return nil, kerr.InvalidTxnState
	case PrepareCommit, PrepareAbort:
		if same {
			return nil, kerr.ConcurrentTransactions
		}
		return nil, kerr.InvalidTxnState
	case Empty:
		return nil, kerr.InvalidTxnState
	}
	return nil, fmt.Errorf("%w: %s: EndTxn in state %s", ErrIllegalState, m.ID, m.State)
}

// PrepareComplete is the Complete* that follows a written Prepare*, pending
// while the markers are written (Kafka's prepareComplete): no partitions
// left.
func (m *Metadata) PrepareComplete(now time.Time) (*Transit, error) {
	next := CompleteAbort
	if m.State == PrepareCommit {
		next = CompleteCommit
	}
	return m.prepareNext(next, now, func(t *Transit) { t.Partitions = nil })
}

// TimedOut reports an Ongoing transaction open for longer than its
// timeout and not already being changed (Kafka's timedOutTransactions).
func (m *Metadata) TimedOut(now time.Time) bool {
	return m.State == Ongoing && m.pending == none &&
		now.After(m.Start.Add(time.Duration(m.TimeoutMs)*time.Millisecond))
}

// Expired reports an id without a transaction, unchanged for expiration
// (transactional.id.expiration.ms; Kafka's removeExpiredTransactionalIds).
func (m *Metadata) Expired(now time.Time, expiration time.Duration) bool {
	return m.State.completed() && m.pending == none && !m.LastUpdate.Add(expiration).After(now)
}

// PrepareDead is an expired id's removal (its tombstone).
func (m *Metadata) PrepareDead(now time.Time) (*Transit, error) {
	return m.prepareNext(Dead, now, func(t *Transit) { t.Partitions = nil })
}
