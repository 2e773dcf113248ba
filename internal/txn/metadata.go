package txn

// Metadata is one transactional id's state (Kafka's TransactionMetadata).
// A change is made in two steps, as in Kafka: a prepare* method checks it
// and returns the target as a Transit (the id's pending state is set, so
// any other change answers CONCURRENT_TRANSACTIONS meanwhile); the owner
// writes the Transit to __transaction_state and, once the write is
// replicated, calls Complete (or Abandon, if it failed).

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// NoProducerID and NoProducerEpoch are Kafka's RecordBatch.NO_PRODUCER_ID
// and NO_PRODUCER_EPOCH.
const (
	NoProducerID    int64 = -1
	NoProducerEpoch int16 = -1
)

// ErrIllegalState is a transition the table of state.go forbids, or one
// prepared while another is pending: a bug, never a client's doing.
var ErrIllegalState = errors.New("txn: illegal state transition")

// Metadata is a transactional id's state.
type Metadata struct {
	ID                string
	ProducerID        int64
	LastProducerID    int64 // the id before the last rotation (KIP-360 retries); NoProducerID if none
	ProducerEpoch     int16
	LastProducerEpoch int16 // the epoch before the last bump (KIP-360 retries); NoProducerEpoch if none
	TimeoutMs         int32
	State             State
	Partitions        map[kafka.TopicPartition]struct{}
	Start             time.Time // the transaction's first AddPartitions; zero without one
	LastUpdate        time.Time

	pending     State // none, or the state of the Transit being written
	fenceAbort  bool  // the pending PrepareAbort fences the producer (its epoch bumped by the coordinator)
	failedFence bool  // such an abort's write failed: the next fence does not bump again
}

// Transit is the target of a prepared change (Kafka's
// TxnTransitMetadata): what is written to __transaction_state.
type Transit struct {
	ID                string
	ProducerID        int64
	LastProducerID    int64
	ProducerEpoch     int16
	LastProducerEpoch int16
	TimeoutMs         int32
	State             State
	Partitions        []kafka.TopicPartition // sorted
	Start             time.Time
	LastUpdate        time.Time
}

// New is a transactional id seen for the first time (Kafka's
// handleInitProducerId before its first epoch): Empty, with producerID and
// no epoch yet; PrepareInit gives it epoch 0.
func New(id string, producerID int64, timeoutMs int32, now time.Time) *Metadata {
	return &Metadata{ID: id, ProducerID: producerID, LastProducerID: NoProducerID,
		ProducerEpoch: NoProducerEpoch, LastProducerEpoch: NoProducerEpoch, TimeoutMs: timeoutMs,
		State: Empty, Partitions: map[kafka.TopicPartition]struct{}{}, LastUpdate: now, pending: none}
}

// FromTransit is a transactional id as a load reads it from its last
// record.
func FromTransit(t Transit) *Metadata {
	m := &Metadata{ID: t.ID, pending: none, Partitions: map[kafka.TopicPartition]struct{}{}}
	m.apply(t)
	return m
}

// Pending is the state being written, if any.
func (m *Metadata) Pending() (State, bool) { return m.pending, m.pending != none }

// epochExhausted is Kafka's isEpochExhausted: an epoch bump would reach
// Short.MaxValue (kept free for the coordinator's fence).
func epochExhausted(epoch int16) bool { return epoch >= math.MaxInt16-1 }

// SortedPartitions are the transaction's partitions in order.
func (m *Metadata) SortedPartitions() []kafka.TopicPartition {
	return sortTPs(slices.Collect(maps.Keys(m.Partitions)))
}

func sortTPs(tps []kafka.TopicPartition) []kafka.TopicPartition {
	slices.SortFunc(tps, func(a, b kafka.TopicPartition) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition) - int(b.Partition)
	})
	return tps
}

// transit is the current state as a Transit, to be modified into a target.
func (m *Metadata) transit() Transit {
	return Transit{ID: m.ID, ProducerID: m.ProducerID, LastProducerID: m.LastProducerID,
		ProducerEpoch: m.ProducerEpoch, LastProducerEpoch: m.LastProducerEpoch, TimeoutMs: m.TimeoutMs,
		State: m.State, Partitions: m.SortedPartitions(), Start: m.Start, LastUpdate: m.LastUpdate}
}

// prepare checks a target and marks it pending (Kafka's
// prepareTransitionTo).
func (m *Metadata) prepare(t Transit) (Transit, error) {
	if m.pending != none {
		return Transit{}, fmt.Errorf("%w: %s: %s pending, preparing %s", ErrIllegalState, m.ID, m.pending, t.State)
	}
	if !CanTransition(m.State, t.State) {
		return Transit{}, fmt.Errorf("%w: %s: %s to %s", ErrIllegalState, m.ID, m.State, t.State)
	}
	m.pending = t.State
	return t, nil
}

// Complete applies a written Transit (Kafka's completeTransitionTo).
func (m *Metadata) Complete(t Transit) error {
	if m.pending != t.State {
		return fmt.Errorf("%w: %s: completing %s with %s pending", ErrIllegalState, m.ID, t.State, m.pending)
	}
	if t.State == CompleteCommit || t.State == CompleteAbort {
		m.failedFence = false
	}
	m.apply(t)
	m.pending, m.fenceAbort = none, false
	return nil
}

// Abandon forgets the pending transition whose write failed. A failed
// fencing abort leaves the bumped epoch in memory (the old producer stays
// fenced) and is remembered, so the next fence does not bump it again
// (Kafka's hasFailedEpochFence).
func (m *Metadata) Abandon() {
	if m.fenceAbort {
		m.failedFence = true
	}
	m.pending, m.fenceAbort = none, false
}

func (m *Metadata) apply(t Transit) {
	m.ProducerID, m.LastProducerID = t.ProducerID, t.LastProducerID
	m.ProducerEpoch, m.LastProducerEpoch = t.ProducerEpoch, t.LastProducerEpoch
	m.TimeoutMs, m.State, m.Start, m.LastUpdate = t.TimeoutMs, t.State, t.Start, t.LastUpdate
	clear(m.Partitions)
	for _, tp := range t.Partitions {
		m.Partitions[tp] = struct{}{}
	}
}

// RemovePartition drops a partition whose marker is written (Kafka's
// removePartition, from the marker channel).
func (m *Metadata) RemovePartition(tp kafka.TopicPartition) { delete(m.Partitions, tp) }
