package txn

// Coordinator is the shell around the Metadata cores of one broker: the
// __transaction_state partitions this broker leads, their transactional
// ids, the writes, the markers and the timers (Kafka's
// TransactionCoordinator with its TransactionStateManager).
//
// Partitions: BecomeLeader loads a partition's ids from its log (their
// requests answer COORDINATOR_LOAD_IN_PROGRESS meanwhile) and resumes the
// markers of every transaction found in PrepareCommit or PrepareAbort;
// Resign unloads them (NOT_COORDINATOR) and stops their markers. An id
// whose partition this broker does not lead answers NOT_COORDINATOR. The
// coordinator epoch the markers carry is the partition's leader epoch.
//
// Writes: each change is appended to the id's partition as leader and
// takes effect, and is answered, only once the high watermark covers it
// (acks=all), within WriteTimeout. The calls block their caller (the
// request's goroutine) for that write; c.mu is not held while waiting.

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/quota"
	"github.com/samsa-kafka/samsa/internal/record"
)

// Log is the coordinator's access to the __transaction_state partitions it
// leads (as group.Log for __consumer_offsets).
type Log interface {
	// Append writes one record batch as the partition's leader and
	// returns a wait that ends once the high watermark covers it (or
	// ctx ends, or leadership is lost).
	Append(partition int32, batch []byte) (wait func(ctx context.Context) error, base int64, err error)
	// Load calls fn for every record of the partition from its start to
	// its log end offset, in order.
	Load(ctx context.Context, partition int32, fn func(offset int64, key, value []byte)) error
}

// Config is what the coordinator needs.
type Config struct {
	Partitions int32 // transaction.state.log.num.partitions
	// PartitionCount, when set, is the partition count of the existing
	// __transaction_state (0: not known yet), which wins over Partitions.
	PartitionCount func() int32
	MaxTimeout     time.Duration // transaction.max.timeout.ms
	IDExpiration   time.Duration // transactional.id.expiration.ms
	AbortInterval  time.Duration // transaction.abort.timed.out.transaction.cleanup.interval.ms
	ExpireInterval time.Duration // transaction.remove.expired.transaction.cleanup.interval.ms
	WriteTimeout   time.Duration // how long a write waits for its replicas; 0: 30s (request.timeout.ms)
	RetryBackoff   time.Duration // between retries of a Complete* write; 0: 100ms
	// EndTxnWait bounds how long EndTxn waits for the markers and
	// Complete* before it answers (0: it answers once Prepare* is
	// written, as Kafka); see EndTxn.
	EndTxnWait time.Duration
	// ProducerID hands out a new producer id (producerid.Manager.Next).
	ProducerID func(ctx context.Context) (int64, error)
	Log        Log
	Markers    Markers
	Logger     *slog.Logger
	Now        func() time.Time
}

// partState is a __transaction_state partition this broker leads.
type partState struct {
	epoch   int32 // leader epoch: the coordinator epoch
	loading bool
	ctx     context.Context // ends on unload: the partition's markers stop
	cancel  context.CancelFunc
}

// Coordinator serves the transactional ids of the partitions this broker
// leads.
type Coordinator struct {
	cfg    Config
	log    *slog.Logger
	mu     sync.Mutex
	parts  map[int32]*partState
	txns   map[string]*Metadata
	ctx    context.Context // ends with Run
	cancel context.CancelFunc
	wg     sync.WaitGroup // loads, markers, writes' completions: awaited by Run
	closed bool           // Run has ended (mu)
}

// NewCoordinator returns a coordinator that leads no partition yet.
func NewCoordinator(cfg Config) *Coordinator {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = 30 * time.Second
	}
	if cfg.RetryBackoff <= 0 {
		cfg.RetryBackoff = 100 * time.Millisecond
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Coordinator{cfg: cfg, log: cfg.Logger, parts: map[int32]*partState{}, txns: map[string]*Metadata{},
		ctx: ctx, cancel: cancel}
}

// PartitionFor is the transactional id's __transaction_state partition
// (Kafka's TransactionStateManager.partitionFor).
func (c *Coordinator) PartitionFor(id string) int32 {
	n := c.cfg.Partitions
	if c.cfg.PartitionCount != nil {
		if m := c.cfg.PartitionCount(); m > 0 {
			n = m
		}
	}
	return kafka.CoordinatorPartition(id, n)
}

// lookup is the id's partition, once loaded here, and its Metadata (nil
// if unknown); c.mu held.
func (c *Coordinator) lookup(id string) (int32, *partState, *Metadata, error) {
	p := c.PartitionFor(id)
	ps := c.parts[p]
	switch {
	case ps == nil || c.closed:
		return p, nil, nil, kerr.NotCoordinator
	case ps.loading:
		return p, nil, nil, kerr.CoordinatorLoadInProgress
	}
	return p, ps, c.txns[id], nil
}

// write appends tr, the pending change of m, waits for it and completes
// it; c.mu held on entry and return, released while waiting. A failed
// write abandons the change unless keep (a Complete* retried by its
// owner). Once the partition was unloaded or reloaded meanwhile the answer
// is NOT_COORDINATOR and m is left alone (Kafka checks the coordinator
// epoch likewise). ctx is the request the write serves, if any (see
// await).
func (c *Coordinator) write(ctx context.Context, m *Metadata, p int32, ps *partState, tr *Transit, keep bool) error {
	now := c.cfg.Now()
	wait, _, err := c.cfg.Log.Append(p, record.Build(now.UnixMilli(), []record.KV{Record(tr)}))
	if err == nil {
		c.mu.Unlock()
		err = c.await(ctx, wait)
		c.mu.Lock()
	} else {
		err = storeError(err)
	}
	if c.parts[p] != ps || c.txns[m.ID] != m {
		return kerr.NotCoordinator
	}
	if err != nil {
		if !keep {
			m.Abandon()
		}
		c.log.Info("writing a transaction's state failed", "transactional_id", m.ID, "state", tr.State, "err", err)
		return err
	}
	if err := m.Complete(*tr); err != nil {
		c.log.Error("completing a written transaction state", "transactional_id", m.ID, "err", err)
		return kerr.UnknownServerError
	}
	if tr.State == Dead {
		delete(c.txns, m.ID)
	}
	return nil
}

// await waits for a write within WriteTimeout. ctx is the request the
// write serves: the wait is not its time (quota.Parked); the
// coordinator's own context and the timeout bound the wait, a closing
// connection does not end it.
func (c *Coordinator) await(ctx context.Context, wait func(context.Context) error) error {
	defer quota.Parked(ctx)()
	wctx, cancel := context.WithTimeout(c.ctx, c.cfg.WriteTimeout)
	defer cancel()
	err := wait(wctx)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.DeadlineExceeded):
		return kerr.CoordinatorNotAvailable // Kafka's REQUEST_TIMED_OUT of an append, mapped so
	}
	return storeError(err)
}

// storeError maps a failed write as Kafka's appendTransactionToLog does:
// a lost leadership is NOT_COORDINATOR; too few replicas, a timeout or an
// unknown partition COORDINATOR_NOT_AVAILABLE; a too large write
// UNKNOWN_SERVER_ERROR.
func storeError(err error) error {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		switch ke {
		case kerr.NotLeaderForPartition, kerr.KafkaStorageError:
			return kerr.NotCoordinator
		case kerr.UnknownTopicOrPartition, kerr.NotEnoughReplicas, kerr.NotEnoughReplicasAfterAppend, kerr.RequestTimedOut:
			return kerr.CoordinatorNotAvailable
		case kerr.MessageTooLarge, kerr.RecordListTooLarge:
			return kerr.UnknownServerError
		}
		return ke
	}
	return kerr.NotCoordinator
}
