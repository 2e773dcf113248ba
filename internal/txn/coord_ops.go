package txn

// The coordinator's requests (Kafka's TransactionCoordinator.handle*),
// each blocking its caller until its change is written.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/quota"
)

// InitProducerID answers an InitProducerId with a transactional id: the
// producer id and epoch, after fencing older producers. An open
// transaction is aborted first (with the epoch bumped) and the answer is
// CONCURRENT_TRANSACTIONS: the client retries once the abort completes.
func (c *Coordinator) InitProducerID(ctx context.Context, id string, timeoutMs int32, expected *IDEpoch) (int64, int16, error) {
	switch {
	case id == "":
		return NoProducerID, NoProducerEpoch, kerr.InvalidRequest
	case timeoutMs <= 0 || time.Duration(timeoutMs)*time.Millisecond > c.cfg.MaxTimeout:
		return NoProducerID, NoProducerEpoch, kerr.InvalidTransactionTimeout
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ps, m, err := c.lookup(id)
	if err != nil {
		return NoProducerID, NoProducerEpoch, err
	}
	if m == nil {
		// A new id: its producer id is claimed without c.mu (it may wait
		// for a block of ids), then the id is looked up again.
		c.mu.Unlock()
		pid, err := c.newProducerID(ctx)
		c.mu.Lock()
		if err != nil {
			return NoProducerID, NoProducerEpoch, err
		}
		if p, ps, m, err = c.lookup(id); err != nil {
			return NoProducerID, NoProducerEpoch, err
		}
		if m == nil {
			m = New(id, pid, timeoutMs, c.cfg.Now())
			c.txns[id] = m
		}
	}
	tr, err := m.PrepareInit(timeoutMs, expected, c.cfg.Now(), func() (int64, error) { return c.newProducerID(ctx) })
	if err != nil {
		return NoProducerID, NoProducerEpoch, c.refusal(err)
	}
	if err := c.write(ctx, m, p, ps, tr, false); err != nil {
		return NoProducerID, NoProducerEpoch, err
	}
	if tr.State == PrepareAbort {
		c.log.Info("fenced the producer of an open transaction; aborting it", "transactional_id", id,
			"producer_id", tr.ProducerID, "epoch", tr.ProducerEpoch)
		c.startMarkers(m, p, ps)
		return NoProducerID, NoProducerEpoch, kerr.ConcurrentTransactions
	}
	return tr.ProducerID, tr.ProducerEpoch, nil
}

// newProducerID claims a producer id; failing, the client is told to
// retry (COORDINATOR_NOT_AVAILABLE, as Kafka's generateProducerId).
func (c *Coordinator) newProducerID(ctx context.Context) (int64, error) {
	if c.cfg.ProducerID == nil {
		return NoProducerID, kerr.CoordinatorNotAvailable
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	id, err := c.cfg.ProducerID(ctx)
	if err != nil {
		c.log.Warn("no producer id to give", "err", err)
		return NoProducerID, kerr.CoordinatorNotAvailable
	}
	return id, nil
}

// refusal logs a decision that found an illegal state (a bug) and answers
// it as Kafka would an unexpected exception.
func (c *Coordinator) refusal(err error) error {
	if _, ok := err.(*kerr.Error); ok {
		return err
	}
	c.log.Error("transaction coordinator", "err", err)
	return kerr.UnknownServerError
}

// AddPartitions adds partitions to the id's transaction (AddPartitionsToTxn,
// and AddOffsetsToTxn with the group's __consumer_offsets partition). ctx
// is the request's (see write).
func (c *Coordinator) AddPartitions(ctx context.Context, id string, producerID int64, epoch int16, tps []kafka.TopicPartition) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ps, m, err := c.lookup(id)
	switch {
	case err != nil:
		return err
	case m == nil:
		return kerr.InvalidProducerIDMapping
	}
	tr, err := m.PrepareAddPartitions(producerID, epoch, tps, c.cfg.Now())
	if err != nil || tr == nil {
		return c.refusalOrNil(err)
	}
	return c.write(ctx, m, p, ps, tr, false)
}

func (c *Coordinator) refusalOrNil(err error) error {
	if err == nil {
		return nil
	}
	return c.refusal(err)
}

// Verify answers a verify-only AddPartitionsToTxn (KIP-890 part 1): per
// partition, nil if it is in the id's open transaction.
func (c *Coordinator) Verify(id string, producerID int64, epoch int16, tps []kafka.TopicPartition) ([]error, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, _, m, err := c.lookup(id)
	switch {
	case err != nil:
		return nil, err
	case m == nil:
		return nil, kerr.InvalidProducerIDMapping
	}
	return m.Verify(producerID, epoch, tps)
}

// EndTxn commits or aborts the id's transaction: decided once
// PrepareCommit or PrepareAbort is written; the markers follow. Kafka
// answers then; Samsa answers once the markers and Complete* are written
// too, within EndTxnWait (then it answers anyway: the outcome is decided).
// The answer is the same, but the producer's next AddPartitionsToTxn does
// not meet the Complete* still pending (CONCURRENT_TRANSACTIONS, and a
// client backoff per transaction: the cost KIP-890 part 2 removes).
func (c *Coordinator) EndTxn(ctx context.Context, id string, producerID int64, epoch int16, commit bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ps, m, err := c.lookup(id)
	switch {
	case err != nil:
		return err
	case m == nil:
		return kerr.InvalidProducerIDMapping
	}
	tr, err := m.PrepareEnd(producerID, epoch, commit, c.cfg.Now())
	if err != nil || tr == nil {
		return c.refusalOrNil(err)
	}
	if err := c.write(ctx, m, p, ps, tr, false); err != nil {
		return err
	}
	over := c.startMarkers(m, p, ps)
	if c.cfg.EndTxnWait > 0 {
		c.mu.Unlock()
		resume := quota.Parked(ctx) // the markers are not the request's time
		t := time.NewTimer(c.cfg.EndTxnWait)
		select {
		case <-over:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
		resume()
		c.mu.Lock()
	}
	return nil
}

// Snapshot is a transactional id as DescribeTransactions and
// ListTransactions show it.
type Snapshot struct {
	ID            string
	ProducerID    int64
	ProducerEpoch int16
	TimeoutMs     int32
	State         State
	Start         time.Time // zero: no transaction
	Partitions    []kafka.TopicPartition
}

func (m *Metadata) snapshot() Snapshot {
	return Snapshot{ID: m.ID, ProducerID: m.ProducerID, ProducerEpoch: m.ProducerEpoch, TimeoutMs: m.TimeoutMs,
		State: m.State, Start: m.Start, Partitions: m.SortedPartitions()}
}

// Describe is one id (DescribeTransactions): TRANSACTIONAL_ID_NOT_FOUND
// when its partition is here but the id is not.
func (c *Coordinator) Describe(id string) (Snapshot, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, _, m, err := c.lookup(id)
	switch {
	case err != nil:
		return Snapshot{}, err
	case m == nil:
		return Snapshot{}, kerr.TransactionalIDNotFound
	}
	return m.snapshot(), nil
}

// Filter selects ids for List: by state and producer id (empty: any) and
// by how long their transaction has run (0: any; KIP-994).
type Filter struct {
	States      []State
	ProducerIDs []int64
	MinDuration time.Duration
}

// List is every id of the partitions loaded here that passes f
// (ListTransactions); COORDINATOR_LOAD_IN_PROGRESS while one is loading.
func (c *Coordinator) List(f Filter) ([]Snapshot, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ps := range c.parts {
		if ps.loading {
			return nil, kerr.CoordinatorLoadInProgress
		}
	}
	now := c.cfg.Now()
	var out []Snapshot
	for _, m := range c.txns {
		if f.pass(m, now) {
			out = append(out, m.snapshot())
		}
	}
	return out, nil
}

func (f *Filter) pass(m *Metadata, now time.Time) bool {
	if len(f.States) > 0 && !contains(f.States, m.State) {
		return false
	}
	if len(f.ProducerIDs) > 0 && !contains(f.ProducerIDs, m.ProducerID) {
		return false
	}
	// Kafka compares with the start timestamp, -1 without a transaction.
	return f.MinDuration <= 0 || now.UnixMilli()-millis(m.Start) >= f.MinDuration.Milliseconds()
}

func contains[T comparable](s []T, v T) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
