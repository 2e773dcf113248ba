package group

// Coordinator is the shell around the Group cores of one broker: the
// __consumer_offsets partitions this broker leads, their groups, the log
// writes and the timers (Kafka's GroupCoordinator with its
// GroupMetadataManager and purgatories).
//
// Partitions: BecomeLeader starts loading a partition's groups and offsets
// from its log (requests for its groups answer
// COORDINATOR_LOAD_IN_PROGRESS meanwhile); Resign unloads them (NOT_COORDINATOR,
// and every waiting JoinGroup and SyncGroup is answered so). A group whose
// partition this broker does not lead answers NOT_COORDINATOR.
//
// Writes: a group's metadata and offset commits are appended to its
// partition as leader and take effect, and are answered, only once the high
// watermark covers them (acks=all), within offsets.commit.timeout.ms
// (REQUEST_TIMED_OUT after, as Kafka).

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-kafka/samsa/internal/quota"
	"github.com/samsa-kafka/samsa/internal/record"
)

// Log is the coordinator's access to the __consumer_offsets partitions it
// leads.
type Log interface {
	// Append writes one record batch as the partition's leader and
	// returns a wait that ends once the high watermark covers it (or
	// ctx ends, or leadership is lost), and the offset of its first record.
	Append(partition int32, batch []byte) (wait func(ctx context.Context) error, base int64, err error)
	// Load calls fn for every record of the partition from its start to
	// its log end offset, in order, with its batch's producer and
	// attributes, and once for every transaction marker (ReadBatches).
	Load(ctx context.Context, partition int32, fn LoadFunc) error
}

// CoordinatorConfig is what the coordinator needs besides the group core's
// settings.
type CoordinatorConfig struct {
	Group      Config
	Partitions int32 // offsets.topic.num.partitions
	// PartitionCount, when set, is the partition count of the existing
	// __consumer_offsets (0: not known yet), which wins over Partitions,
	// as Kafka reads it from the topic once it exists.
	PartitionCount   func() int32
	Retention        time.Duration // offsets.retention.minutes
	RetentionCheck   time.Duration // offsets.retention.check.interval.ms
	CommitTimeout    time.Duration // offsets.commit.timeout.ms
	MetadataMaxBytes int           // offset.metadata.max.bytes
	Log              Log
	Logger           *slog.Logger
	Now              func() time.Time
	TickInterval     time.Duration // how often timers are checked; 0: 100ms
}

// The coordinator's refusals, as kerr.
var (
	errNotCoordinator = kerr.NotCoordinator
	errLoading        = kerr.CoordinatorLoadInProgress
)

type partState struct {
	epoch   int32
	loading bool
	// completions are the transaction markers CompleteTxn was told of
	// while the partition loaded, applied after the load in order.
	completions []txnCompletion
}

type txnCompletion struct {
	producerID int64
	commit     bool
}

// Coordinator serves the groups of the partitions this broker leads.
type Coordinator struct {
	cfg    CoordinatorConfig
	log    *slog.Logger
	mu     sync.Mutex
	parts  map[int32]*partState
	groups map[string]*Group
	// txnGroups: the groups with pending transactional offsets of each
	// producer (Kafka's openGroupsForProducer), so that a marker looks at
	// those only; an entry may outlive its offsets (CompleteTxn skips it).
	txnGroups map[int64]map[string]struct{}
	ctx       context.Context // ends with Run: loads and waits for writes end with it
	cancel    context.CancelFunc
	wg        sync.WaitGroup // loads and waits for writes, awaited by Run
	closed    bool           // Run has ended: nothing more is started (mu)
}

// NewCoordinator returns a coordinator that leads no partition yet.
func NewCoordinator(cfg CoordinatorConfig) *Coordinator {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.TickInterval <= 0 {
		cfg.TickInterval = 100 * time.Millisecond
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Coordinator{cfg: cfg, log: cfg.Logger, parts: map[int32]*partState{}, groups: map[string]*Group{},
		txnGroups: map[int64]map[string]struct{}{},
		ctx:       ctx, cancel: cancel}
}

// PartitionFor is the group's __consumer_offsets partition.
func (c *Coordinator) PartitionFor(groupID string) int32 {
	n := c.cfg.Partitions
	if c.cfg.PartitionCount != nil {
		if m := c.cfg.PartitionCount(); m > 0 {
			n = m
		}
	}
	return PartitionFor(groupID, n)
}

// Run ticks the groups' timers and expires offsets until ctx ends.
func (c *Coordinator) Run(ctx context.Context) {
	defer c.wg.Wait()
	defer func() {
		c.mu.Lock()
		c.closed = true // no wg.Add after this, so the Wait above is final
		c.mu.Unlock()
		c.cancel()
	}()
	tick := time.NewTicker(c.cfg.TickInterval)
	defer tick.Stop()
	lastExpiry := c.cfg.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := c.cfg.Now()
		c.mu.Lock()
		for _, g := range c.groups {
			if d := g.NextDeadline(); !d.IsZero() && !now.Before(d) {
				g.Tick(now)
			}
		}
		c.mu.Unlock()
		if c.cfg.RetentionCheck > 0 && now.Sub(lastExpiry) >= c.cfg.RetentionCheck {
			lastExpiry = now
			c.expire()
		}
	}
}

// lookup returns the group (nil if unknown) once its partition is loaded
// here; c.mu held.
func (c *Coordinator) lookup(groupID string) (*Group, error) {
	ps := c.parts[c.PartitionFor(groupID)]
	switch {
	case ps == nil:
		return nil, errNotCoordinator
	case ps.loading:
		return nil, errLoading
	}
	return c.groups[groupID], nil
}

// getOrCreate returns the group, creating it Empty when absent.
func (c *Coordinator) getOrCreate(groupID string, now time.Time) *Group {
	g := c.groups[groupID]
	if g == nil {
		g = NewGroup(groupID, &c.cfg.Group, c.persistGroup, now)
		c.groups[groupID] = g
	}
	return g
}

// persistGroup is every group's Persist: append under c.mu, wait for the
// high watermark on a goroutine, complete under c.mu.
func (c *Coordinator) persistGroup(g *Group, assignment map[string][]byte, done func(error)) {
	if c.closed {
		done(errNotCoordinator)
		return
	}
	now := c.cfg.Now()
	wait, _, err := c.append(c.PartitionFor(g.ID), []record.KV{GroupRecord(g, assignment, now, false)}, now)
	if err != nil {
		done(err)
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		err := c.await(c.ctx, wait) // the SyncGroup waits in Sync
		c.mu.Lock()
		defer c.mu.Unlock()
		done(err)
	}()
}

// await waits for a write within offsets.commit.timeout.ms and maps the
// outcome to Kafka's codes. ctx is the request the write serves: the wait
// is not its time (quota.Parked); the coordinator's own context and the
// timeout bound the wait, a closing connection does not end it.
func (c *Coordinator) await(ctx context.Context, wait func(context.Context) error) error {
	defer quota.Parked(ctx)()
	wctx, cancel := context.WithTimeout(c.ctx, c.cfg.CommitTimeout)
	defer cancel()
	err := wait(wctx)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.DeadlineExceeded):
		return kerr.RequestTimedOut
	}
	return storeError(err)
}

// storeError maps a failed write to what the client sees: Kafka answers
// NOT_COORDINATOR for a lost leadership and COORDINATOR_NOT_AVAILABLE for
// too few replicas or other failures.
func storeError(err error) error {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		switch ke {
		case kerr.NotLeaderForPartition, kerr.UnknownTopicOrPartition:
			return kerr.NotCoordinator
		case kerr.NotEnoughReplicas, kerr.NotEnoughReplicasAfterAppend, kerr.RequestTimedOut:
			return kerr.CoordinatorNotAvailable
		case kerr.MessageTooLarge, kerr.RecordListTooLarge, kerr.InvalidFetchSize:
			return kerr.UnknownServerError
		}
		return ke
	}
	return kerr.NotCoordinator
}
