package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/metastore"
)

// Sender delivers controller requests to brokers (Kafka's
// ControllerChannelManager; channel.Manager is the real one, the tests
// record). Callbacks may run on any goroutine.
type Sender interface {
	AddBroker(b metadata.Broker)
	RemoveBroker(id int32)
	Send(broker int32, req kmsg.Request, cb func(kmsg.Response, error))
}

// Config is what a controller needs.
type Config struct {
	NodeID int32
	Store  metastore.Store
	Sender Sender
	// UncleanLeaderElection is the static broker value of
	// unclean.leader.election.enable; the dynamic broker configs and
	// topics may override it (unclean.go).
	UncleanLeaderElection bool
	Logger                *slog.Logger
	// StateChange receives the state-change log (Kafka's state-change.log).
	StateChange *slog.Logger
	Now         func() time.Time
	// OnChange is told who the controller is whenever that changes.
	OnChange func(controllerID int32, active bool)
	// Automatic preferred leader elections (auto_rebalance.go):
	// auto.leader.rebalance.enable, leader.imbalance.check.interval.seconds
	// and leader.imbalance.per.broker.percentage.
	AutoLeaderRebalance          bool
	LeaderImbalanceCheckInterval time.Duration
	LeaderImbalancePercentage    int32
	// InterBrokerListener is inter.broker.listener.name: the leaders'
	// endpoints in LeaderAndIsr are theirs on it. Empty: PLAINTEXT,
	// Kafka's default.
	InterBrokerListener string
}

// Controller is the event-handling core. Only the event loop calls Handle.
type Controller struct {
	cfg     Config
	md      *metadata.Client
	session metastore.Session

	ctx         *Context // nil unless active
	ctrlVersion int64
	// stale: an event of this controller's last tenure failed part way, so
	// its context (kept warm since) may hold what the store does not; the
	// next failover reads the store instead.
	stale bool
	// Hot standby: the warm context kept from store changes while inactive,
	// the revision it reflects, and the revision of an election won but
	// not yet acted on (0: none).
	warm            *Context
	staged          *stagedWrites // chunks.go: set while an event stages its writes
	warmRev         int64
	pendingFailover int64
	deleting        map[string]bool
	// deletedAt is the store revision at which this controller deleted a
	// topic's keys, kept until the store changes it follows reach that
	// revision (deletion.go, staleForDeleted).
	deletedAt map[string]int64
	shutting  map[int32]bool
	unclean   map[string]bool // per-topic unclean.leader.election.enable
	lists     int32Lists      // new ISRs (lists.go)

	// unclean.leader.election.enable of /config/brokers/<default> and of
	// this broker's entry; nil where not set (unclean.go)
	uncleanDefault, uncleanOwn *bool

	mirroring     bool         // the loop feeds store changes
	warmFailovers atomic.Int64 // failovers served from the warm context
	unknownEvents atomic.Int64 // events Handle has no case for (dropped, logged)
	active        atomic.Bool
	controllerID  atomic.Int32
	enqueue       func(Event) // set by the loop: responses re-enter as events
	// uncleanElections counts the leaders elected from outside the ISR
	// (Kafka's UncleanLeaderElectionsPerSec, as a counter).
	uncleanElections atomic.Int64
}

// New returns an inactive controller.
func New(cfg Config) *Controller {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.StateChange == nil {
		cfg.StateChange = cfg.Logger
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.InterBrokerListener == "" {
		cfg.InterBrokerListener = "PLAINTEXT"
	}
	c := &Controller{cfg: cfg, deleting: map[string]bool{}, deletedAt: map[string]int64{}, unclean: map[string]bool{}}
	c.md = metadata.New(patientStore{cfg.Store, c})
	c.controllerID.Store(-1)
	c.enqueue = func(Event) {}
	return c
}

// IsActive reports whether this broker is the active controller. Safe from
// any goroutine.
func (c *Controller) IsActive() bool { return c.active.Load() }

// UncleanElections is how many leaders this broker, as controller, elected
// from outside the ISR. Safe from any goroutine.
func (c *Controller) UncleanElections() int64 { return c.uncleanElections.Load() }

// ControllerID is the controller this broker knows of, -1 if none. Safe
// from any goroutine.
func (c *Controller) ControllerID() int32 { return c.controllerID.Load() }

// Epoch is the active controller's epoch (0 when inactive). Loop only.
func (c *Controller) Epoch() int32 {
	if c.ctx == nil {
		return 0
	}
	return c.ctx.epoch
}

func (c *Controller) stateChange(msg string, args ...any) {
	c.stateChangeAt(slog.LevelInfo, msg, args...)
}

// stateTrace logs at Debug the per-replica transitions Kafka's state-change
// log writes at TRACE (there are three per partition).
func (c *Controller) stateTrace(msg string, args ...any) {
	c.stateChangeAt(slog.LevelDebug, msg, args...)
}

func (c *Controller) stateChangeAt(level slog.Level, msg string, args ...any) {
	if !c.logsStateChanges(level) {
		return
	}
	epoch := int32(0)
	if c.ctx != nil {
		epoch = c.ctx.epoch
	}
	c.cfg.StateChange.Log(context.Background(), level, msg, append([]any{"controller", c.cfg.NodeID, "controller_epoch", epoch}, args...)...)
}

// logsStateChanges says whether the state-change log takes level; the
// per-partition call sites ask first, so that a quiet log costs them no
// argument boxing.
func (c *Controller) logsStateChanges(level slog.Level) bool {
	return c.cfg.StateChange.Enabled(context.Background(), level)
}

func (c *Controller) setController(id int32, active bool) {
	c.controllerID.Store(id)
	c.active.Store(active)
	if c.cfg.OnChange != nil {
		c.cfg.OnChange(id, active)
	}
}

// Handle processes one event. It is the only way controller state changes.
func (c *Controller) Handle(ctx context.Context, ev Event) {
	var err error
	switch e := ev.(type) {
	case Startup:
		c.session = e.Session
		err = c.elect(ctx)
	case SessionExpired:
		c.resign(slog.LevelWarn, "session expired")
	case AlterPartition:
		err = c.onAlterPartition(ctx, e)
	case AlterReassignments:
		err = c.onAlterReassignments(ctx, e)
	case ListReassignments:
		c.onListReassignments(e)
	case gaugesEvent:
		c.onGauges(e)
	case ElectLeaders:
		err = c.onElectLeaders(ctx, e)
	case AutoLeaderRebalance:
		err = c.onAutoLeaderRebalance(ctx)
	case ControlledShutdown:
		err = c.onControlledShutdown(ctx, e)
	case response:
		err = c.onResponse(ctx, e)
	case storeChange:
		err = c.onStoreChange(ctx, e)
	case Expire:
		c.resign(slog.LevelInfo, "the broker is stopping")
	case decodeWarm:
		if c.warmPending() {
			c.decodePending(c.warm, warmDecodeSlice)
		}
	default: // an event type added without its case here
		c.unknownEvents.Add(1)
		c.cfg.Logger.Error("controller: unknown event dropped", "event", ev.name(), "type", fmt.Sprintf("%T", ev))
	}
	if errors.Is(err, metadata.ErrControllerMoved) {
		c.stale = c.stale || c.ctx != nil
		c.resign(slog.LevelWarn, "controller moved")
		return
	}
	if err != nil && ctx.Err() == nil {
		c.cfg.Logger.Error("controller event failed", "event", ev.name(), "err", err)
		if c.ctx != nil {
			c.reload(ctx)
		}
	}
}

// reload starts an active controller's tenure again from the store after
// an event failed part way (its session ended, or an error the store does
// not retry): what the event changed in memory may not be in the store, or
// not told to the brokers. Its state is dropped, not kept warm, and read
// again as a new controller reads it, under a new epoch; the brokers get
// every partition's leadership again. Kafka's controller gets there by
// resigning when its ZooKeeper session ends, the only way its writes fail.
func (c *Controller) reload(ctx context.Context) {
	c.stale = true
	c.resign(slog.LevelWarn, "an event failed part way; reading the state again from the store")
	c.failover(ctx)
}

// usableWarm is the warm context a failover may start from: none when the
// last tenure's context may differ from the store (stale).
func (c *Controller) usableWarm() *Context {
	if c.stale {
		return nil
	}
	return c.warm
}

// elect campaigns for /controller; the winner fails over.
func (c *Controller) elect(ctx context.Context) error {
	if c.session == nil {
		return nil
	}
	select {
	case <-c.session.Done():
		return nil // a new session brings a new Startup
	default:
	}
	won, ver, err := c.md.TryBecomeController(ctx, c.session, c.cfg.NodeID, c.cfg.Now())
	if err != nil {
		return err
	}
	if !won {
		id, _, err := c.md.Controller(ctx)
		if err != nil {
			return err
		}
		c.setController(id, false)
		return nil
	}
	c.ctrlVersion = ver
	if c.warm != nil {
		// Fail over once the warm copy has caught up with our own write.
		c.pendingFailover = ver
		if c.warmRev >= ver {
			return c.failover(ctx)
		}
		return nil
	}
	return c.failover(ctx)
}

// failover becomes the active controller, from the warm context when there
// is one.
func (c *Controller) failover(ctx context.Context) error {
	ver := c.ctrlVersion
	c.pendingFailover = 0
	warm := c.usableWarm() != nil
	start := c.cfg.Now()
	if err := c.onControllerFailover(ctx); err != nil {
		if ctx.Err() == nil {
			c.cfg.Logger.Error("controller failover failed; giving up the controllership", "err", err)
		}
		c.resign(slog.LevelWarn, "failover failed")
		c.giveUpControllerKey(ctx, ver)
		return nil
	}
	c.stale = false
	if warm {
		c.warmFailovers.Add(1)
	}
	c.cfg.Logger.Info("became controller", "epoch", c.ctx.epoch, "warm", warm, "brokers", len(c.ctx.liveBrokers),
		"topics", len(c.ctx.topics), "partitions", c.ctx.states.len(), "took", c.cfg.Now().Sub(start))
	return nil
}

// giveUpControllerKey deletes /controller if it is still the one this
// broker wrote (version ver), so that another broker campaigns now rather
// than when this broker's session ends. A failed compare means it is gone
// or another's already: nothing to give up. An error leaves the key to the
// session; it is logged, and the failover's own error was logged before.
func (c *Controller) giveUpControllerKey(ctx context.Context, ver int64) {
	_, err := c.md.Store().Txn(ctx, []metastore.Cmp{{Key: metadata.ControllerKey, Version: ver}}, []metastore.Op{metastore.Delete(metadata.ControllerKey)})
	if err != nil && ctx.Err() == nil {
		c.cfg.Logger.Warn("could not delete /controller after a failed failover; it goes when the session ends", "err", err)
	}
}

// onControllerChange: /controller changed or vanished.
func (c *Controller) onControllerChange(ctx context.Context) error {
	id, found, err := c.md.Controller(ctx)
	if err != nil {
		return err
	}
	if found {
		if c.ctx != nil && id != c.cfg.NodeID {
			c.resign(slog.LevelWarn, "another broker is controller")
		}
		c.setController(id, c.ctx != nil)
		return nil
	}
	if c.ctx != nil {
		c.resign(slog.LevelWarn, "controller key deleted")
	}
	c.setController(-1, false)
	return c.elect(ctx)
}

// resign stops acting as controller and drops its state (Kafka's
// onControllerResignation), logging why at level (a stopping broker's
// resignation is no warning).
func (c *Controller) resign(level slog.Level, why string) {
	if c.ctx == nil {
		return
	}
	c.cfg.Logger.Log(context.Background(), level, "resigning as controller", "reason", why, "epoch", c.ctx.epoch)
	for id := range c.ctx.liveBrokers {
		c.cfg.Sender.RemoveBroker(id)
	}
	if c.warm != nil || c.mirroring {
		// What the active context holds stays warm for the next election.
		c.warm, c.warmRev = c.ctx, 0
		c.warm.liveBrokers = c.warm.registered
	}
	c.ctx = nil
	c.setController(-1, false)
}

// send builds and sends a batch.
func (c *Controller) send(b *requestBatch) {
	b.build(c, c.sendRequest)
}

func (c *Controller) sendRequest(broker int32, req kmsg.Request) {
	c.cfg.Sender.Send(broker, req, func(resp kmsg.Response, err error) {
		c.enqueue(response{broker: broker, req: req, resp: resp, err: err})
	})
}

// sendFullMetadata sends brokers an UpdateMetadata with every partition,
// marked a full snapshot (KIP-866's Type): a broker drops the topics it
// does not list, which were deleted while it did not hear of it.
func (c *Controller) sendFullMetadata(brokers []int32) {
	if len(brokers) == 0 {
		return
	}
	full := c.fullUpdateMetadata()
	kafka.MarkFullUpdateMetadata(full)
	for _, id := range brokers {
		req := *full
		req.BrokerEpoch = c.ctx.liveBrokers[id].Epoch
		c.sendRequest(id, &req)
	}
}

func (c *Controller) onResponse(ctx context.Context, r response) error {
	if r.err != nil {
		c.cfg.Logger.Debug("controller request failed", "broker", r.broker, "api", kmsg.NameForKey(r.req.Key()), "err", r.err)
		return nil
	}
	switch resp := r.resp.(type) {
	case *kmsg.StopReplicaResponse:
		return c.onStopReplicaResponse(ctx, r.broker, resp)
	case *kmsg.LeaderAndISRResponse:
		if resp.ErrorCode != 0 {
			c.cfg.Logger.Warn("LeaderAndIsr refused", "broker", r.broker, "code", resp.ErrorCode)
		}
	case *kmsg.UpdateMetadataResponse:
		if resp.ErrorCode != 0 {
			c.cfg.Logger.Warn("UpdateMetadata refused", "broker", r.broker, "code", resp.ErrorCode)
		}
	}
	return nil
}

func (c *Controller) shuttingDown(id int32) bool { return c.shutting[id] }
