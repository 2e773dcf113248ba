package broker

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/samsa-kafka/samsa/internal/alterpartition"
	"github.com/samsa-kafka/samsa/internal/api"
	"github.com/samsa-kafka/samsa/internal/config"
	"github.com/samsa-kafka/samsa/internal/controller"
	"github.com/samsa-kafka/samsa/internal/controller/channel"
	"github.com/samsa-kafka/samsa/internal/fetcher"
	"github.com/samsa-kafka/samsa/internal/group"
	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/metacache"
	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/metastore"
	"github.com/samsa-kafka/samsa/internal/metastore/embedetcd"
	"github.com/samsa-kafka/samsa/internal/metastore/etcdstore"
	"github.com/samsa-kafka/samsa/internal/metastore/zkstore"
	"github.com/samsa-kafka/samsa/internal/producerid"
	"github.com/samsa-kafka/samsa/internal/quota"
	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/samsa-kafka/samsa/internal/replica"
	"github.com/samsa-kafka/samsa/internal/server"
	"github.com/samsa-kafka/samsa/internal/storage"
	"github.com/samsa-kafka/samsa/internal/txn"
)

// Broker is one running Samsa broker.
type Broker struct {
	cfg       *config.Broker
	log       *slog.Logger
	nodeID    int32
	clusterID string

	store    metastore.Store
	ownStore bool
	embedded *embedetcd.Server
	md       *metadata.Client
	dyn      *dynConfig // dynamic broker configs (dynconfig.go)

	logs      *storage.Manager
	replicas  *replica.Manager
	cache     *metacache.Cache
	ctrl      *controller.Controller
	loop      *controller.Loop
	channels  *channel.Manager
	ln        listeners          // bound listeners (listeners.go)
	conns     *server.ConnLimits // max.connections(.per.ip), shared by the listeners (listeners.go)
	fetchers  *fetcher.Manager
	alter     *alterpartition.Manager
	pids      *producerid.Manager
	groups    *group.Coordinator
	txns      *txn.Coordinator
	quotas    *quota.Manager         // client quotas (quotas.go)
	stats     kafka.BrokerTopicStats // bytes in and out (metrics.go)
	purgatory api.Purgatory          // requests waiting (metrics.go)
	// sessionEnds counts the store sessions that ended under this broker
	// (keepSession; metrics.go).
	sessionEnds atomic.Int64

	txnClients *txnClients // the transaction coordinator's clients to brokers

	regMu  sync.Mutex // serializes registration writes (listeners.go)
	sessMu sync.Mutex
	sess   metastore.Session

	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	closed bool
}

// Options are the parts of a broker that are not Kafka configuration.
type Options struct {
	Logger   *slog.Logger
	Registry prometheus.Registerer // nil: metrics are not registered
	// Store is a coordination store shared with other brokers of this
	// process (samsa dev, tests). Nil: metadata.store.connect, or an
	// embedded single-node etcd when that is empty.
	Store metastore.Store
}

// Start joins the cluster: it opens the store and storage, starts
// listening, registers the broker, and campaigns for controller. The broker
// serves until Close. Clients are served only once it is registered and
// caught up with the controller's metadata (api/ready.go); ApiVersions and
// the requests of other brokers are served from the start.
func Start(cfg *config.Broker, opts Options) (_ *Broker, err error) {
	b := &Broker{cfg: cfg, log: opts.Logger, nodeID: max(cfg.BrokerID, 0), conns: server.NewConnLimits(quotaWindow(cfg))}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	b.log = b.log.With("broker", b.nodeID)
	defer func() {
		if err != nil {
			b.teardown()
		}
	}()
	if err := b.openStore(opts.Store); err != nil {
		return nil, err
	}
	b.md = metadata.New(b.store)
	if err := b.joinCluster(); err != nil {
		return nil, err
	}
	dynRev, err := b.loadDynamicConfigs(context.Background())
	if err != nil {
		return nil, err
	}
	if err := b.openStorage(); err != nil {
		return nil, err
	}
	// Any registration of this broker id so far was made by a previous
	// life of this broker (or another broker with its id): its epoch is at
	// most dynRev, ours will be above it.
	b.cache.SetStaleUpTo(dynRev)
	b.newController()
	b.startReplication()
	b.pids = b.newProducerIDs()
	b.groups = b.newGroupCoordinator()
	b.txns = b.newTxnCoordinator()
	b.newQuotas()
	if err := b.listen(opts.Registry); err != nil {
		return nil, err
	}
	if opts.Registry != nil {
		if err := registerMetrics(opts.Registry, b); err != nil {
			return nil, fmt.Errorf("registering the broker's metrics: %w", err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.cancel = cancel
	b.goRun(func() { b.logs.Run(ctx) })
	b.goRun(func() { b.pids.Run(ctx) })
	b.goRun(func() { b.groups.Run(ctx) })
	b.goRun(func() { b.txns.Run(ctx); b.txnClients.close() })
	b.serveAll()
	b.watchQuotas(ctx) // issue 20: client quotas, applied before registering
	sess, err := b.register(ctx)
	if err != nil {
		return nil, err
	}
	b.goRun(func() { b.loop.Run(ctx) })
	b.goRun(func() { b.watchTopicConfigs(ctx) })
	b.goRun(func() { b.watchBrokerConfigs(ctx, dynRev) })
	b.goRun(func() { b.shrinkISRs(ctx) })
	b.goRun(func() { b.keepSession(ctx, sess) })
	b.goRun(func() { b.watchStalls(ctx) })
	b.loop.Enqueue(controller.Startup{Session: sess})
	b.log.Info("broker started", "cluster", b.clusterID, "listeners", b.endpoints(), "log.dirs", cfg.LogDirs)
	return b, nil
}

// openStorage opens the log dirs and the partitions on them.
func (b *Broker) openStorage() (err error) {
	cfg := b.current() // the cleaner starts with its dynamic settings
	b.logs, err = storage.OpenManager(storage.ManagerConfig{
		Dirs:                              cfg.LogDirs,
		RetentionCheckInterval:            cfg.LogRetentionCheckInterval,
		FileDeleteDelay:                   cfg.LogSegmentDeleteDelay,
		FlushCheckInterval:                min(cfg.LogFlushSchedulerInterval, cfg.LogRetentionCheckInterval),
		HighWatermarkCheckpointInterval:   cfg.HighWatermarkCheckpoint,
		ProducerIDExpiration:              cfg.ProducerIDExpiration,
		ProducerIDExpirationCheckInterval: cfg.ProducerIDExpirationCheck,
		CleanerEnable:                     cfg.LogCleanerEnable && cfg.LogCleanerThreads > 0,
		CleanerThreads:                    int(cfg.LogCleanerThreads),
		CleanerDedupeBufferSize:           cfg.LogCleanerDedupeBufferSize,
		CleanerIOBufferSize:               int(cfg.LogCleanerIOBufferSize),
		CleanerIOBufferLoadFactor:         cfg.LogCleanerIOBufferLoadFactor,
		CleanerIOMaxBytesPerSecond:        cfg.LogCleanerIOMaxBytesPerSecond,
		CleanerBackoff:                    cfg.LogCleanerBackoff,
		Logger:                            b.log.With("component", "storage"),
		OnDirFailure:                      b.onLogDirFailure,
		// b.fetchers is set before the retention passes start (Run).
		OnLogStartMoved: func(tps []kafka.TopicPartition) { b.fetchers.LogStartsMoved(tps) },
	})
	if err != nil {
		return err
	}
	b.replicas = replica.NewManager(b.logs)
	b.cache = metacache.New(b.nodeID)
	b.cache.SetListenerName(cfg.InterBrokerListenerName)
	b.cache.SetClusterID(b.clusterID)
	return nil
}

// newController makes this broker's controller (idle until it wins the
// election) and its channels to the brokers.
func (b *Broker) newController() {
	cfg := b.cfg
	b.channels = channel.NewManager(b.log.With("component", "controller-channel"), cfg.ControllerSocketTimeout,
		cfg.ControllerToBrokerListenerName())
	b.ctrl = controller.New(controller.Config{
		NodeID: b.nodeID, Store: b.store, Sender: b.channels,
		UncleanLeaderElection:        cfg.UncleanLeaderElection,
		Logger:                       b.log.With("component", "controller"),
		StateChange:                  b.log.With("component", "state-change"),
		AutoLeaderRebalance:          cfg.AutoLeaderRebalanceEnable,
		LeaderImbalanceCheckInterval: cfg.LeaderImbalanceCheck,
		LeaderImbalancePercentage:    cfg.LeaderImbalancePercentage,
		InterBrokerListener:          cfg.InterBrokerListenerName,
	})
	b.loop = controller.NewLoop(b.ctrl)
}

// listen binds every listener (dynamic ones included), each its own
// server with the request handlers behind it; serveAll starts accepting.
func (b *Broker) listen(reg prometheus.Registerer) error {
	cfg := b.cfg
	h := api.New(api.Config{
		NodeID: b.nodeID, Broker: cfg, Meta: b.cache, Partitions: b.replicas, ProducerIDs: b.pids,
		Groups: b.groups, LowerOffsetsReplication: b.lowerOffsetsReplication(),
		Txns: b.txns, LowerTxnStateReplication: b.lowerTxnStateReplication(),
		TxnVerifier: &txnVerifier{nodeID: b.nodeID, cache: b.cache, txns: b.txns, clients: b.txnClients},
		Admin:       &clusterAdmin{md: b.md, ctrl: b.ctrl, cache: b.cache, store: b.store},
		Control: &controlPlane{cache: b.cache, replicas: b.replicas, logs: b.logs, fetchers: b.fetchers, nodeID: b.nodeID, groups: b.groups, txns: b.txns, stats: &b.stats,
			log: b.log.With("component", "replica"), topicConfig: b.topicConfig, partitionConfig: b.partitionConfig,
			alterPartition: b.loop.AlterPartition, controlledShutdown: b.loop.ControlledShutdown,
			configMu: &b.dyn.mu},
		Elections: &leaderElections{loop: b.loop, cache: b.cache},
		Reassign:  b.loop, // KIP-455, controller/reassignment.go
		Configs:   configsAPI{b},
		LogDirs:   b.logs,
		// issue 20: client quotas
		ClientQuotas: clientQuotas{store: b.store},
		Quotas:       b.quotas,
		Stats:        &b.stats,
		Purgatory:    &b.purgatory,
		Logger:       b.log.With("component", "api"),
	})
	return b.bind(b.current(), h, reg)
}

func (b *Broker) goRun(f func()) {
	b.wg.Add(1)
	go func() { defer b.wg.Done(); f() }()
}

// openStore connects to the configured store, or starts an embedded one.
func (b *Broker) openStore(shared metastore.Store) error {
	if shared != nil {
		b.store = shared
		return nil
	}
	b.ownStore = true
	if b.cfg.ZooKeeperConnect != "" {
		servers, chroot, err := zkstore.ParseConnect(b.cfg.ZooKeeperConnect)
		if err != nil {
			return err
		}
		st, err := zkstore.Connect(zkstore.Config{
			Servers: servers, Chroot: chroot,
			SessionTimeout: b.cfg.ZooKeeperSessionTimeout, ConnectionTimeout: b.cfg.ZooKeeperConnectionTimeout,
			MaxInFlight: int(b.cfg.ZooKeeperMaxInFlight), Logger: b.log.With("component", "store"),
		})
		if err != nil {
			return err
		}
		b.store = st
		return nil
	}
	if b.cfg.MetadataStoreConnect != "" {
		endpoints, chroot, err := etcdstore.ParseConnect(b.cfg.MetadataStoreConnect)
		if err != nil {
			return err
		}
		b.store, err = etcdstore.ConnectMaxOps(endpoints, chroot, 10*time.Second, b.log.With("component", "store"),
			int(b.cfg.MetadataStoreMaxTxnOps))
		return err
	}
	dir := b.cfg.MetadataStoreDataDir
	if dir == "" {
		dir = filepath.Join(b.cfg.LogDirs[0], "__samsa_store")
	}
	srv, err := embedetcd.StartLocal(dir, b.log.With("component", "embedded-store"))
	if err != nil {
		return fmt.Errorf("broker: embedded store: %w", err)
	}
	b.embedded = srv
	b.store, err = etcdstore.ConnectMaxOps(srv.Endpoints(), "", 10*time.Second, b.log.With("component", "store"), embedetcd.MaxTxnOps)
	return err
}

// joinCluster agrees on the cluster id with the store and the log dirs.
func (b *Broker) joinCluster() error {
	candidate, err := localClusterID(b.cfg.LogDirs)
	if err != nil {
		return err
	}
	if candidate == "" {
		id := uuid.New()
		candidate = base64.RawURLEncoding.EncodeToString(id[:])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if b.clusterID, err = b.md.EnsureClusterID(ctx, candidate); err != nil {
		return err
	}
	return ensureMetaProperties(b.cfg.LogDirs, b.nodeID, b.clusterID)
}

// Registration: a broker writes /brokers/ids/<id> bound to a store
// session. A registration left by this broker's previous life (kill -9)
// lasts until its session times out, while a live broker with our id
// renews its own: waiting out a session (twice the timeout: a store that
// restarted extends old leases by an election timeout) tells them apart.
// Until it has registered, a broker serves no client (api/ready.go) and
// says why every few seconds.
const (
	registerRetry        = 200 * time.Millisecond
	registerCallTimeout  = 5 * time.Second // one store call of an attempt
	notRegisteredLogEach = 3 * time.Second
)

// register registers the broker, retrying while another registration
// holds its id, for up to twice the session timeout after the store last
// failed to answer; after that it fails (ErrBrokerIDInUse: another live
// broker has the id). While the store does not answer, it waits as long
// as it takes, as Kafka's ZooKeeper client retries until connected: an
// unreachable store says nothing of another broker, and a broker started
// during a store outage must come up when the store does (the fault
// campaign found brokers exiting after a store majority was cut off for
// longer than that).
func (b *Broker) register(ctx context.Context) (metastore.Session, error) {
	grace := 2*b.cfg.MetadataStoreSessionTimeout + 2*time.Second
	deadline := time.Now().Add(grace)
	var sess metastore.Session
	var lastLog time.Time
	for {
		epoch, err := b.registerOnce(ctx, &sess)
		if err == nil {
			b.cache.SetBrokerEpoch(epoch)
			b.log.Info("registered", "epoch", epoch)
			return sess, nil
		}
		if !errors.Is(err, metadata.ErrBrokerIDInUse) {
			if d := time.Now().Add(grace); d.After(deadline) {
				deadline = d
			}
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			if sess != nil {
				sess.Close()
			}
			if errors.Is(err, metadata.ErrBrokerIDInUse) {
				return nil, fmt.Errorf("broker: another live broker is registered with broker.id=%d: %w", b.nodeID, err)
			}
			return nil, fmt.Errorf("broker: cannot register broker.id=%d: %w", b.nodeID, err)
		}
		if now := time.Now(); now.Sub(lastLog) >= notRegisteredLogEach {
			lastLog = now
			b.log.Warn("not serving clients: cannot register yet", "reason", notRegisteredReason(err),
				"err", err, "gives_up_in", time.Until(deadline).Round(time.Second))
		}
		select {
		case <-ctx.Done():
		case <-time.After(registerRetry):
		}
	}
}

// registerOnce makes one attempt with the endpoints of the moment, and on
// success makes sess the broker's session; regMu held throughout, so a
// listener change is either in the registration or rewrites it after.
func (b *Broker) registerOnce(ctx context.Context, sess *metastore.Session) (int64, error) {
	b.regMu.Lock()
	defer b.regMu.Unlock()
	reg := metadata.NewBroker(b.nodeID, b.endpoints(), b.cfg.BrokerRack, time.Now())
	epoch, err := b.tryRegister(ctx, sess, reg)
	if err == nil {
		b.sessMu.Lock()
		b.sess = *sess
		b.sessMu.Unlock()
	}
	return epoch, err
}

// tryRegister makes one attempt, in *sess (a new session if nil; one that
// failed for any reason but our id being taken is closed and cleared).
func (b *Broker) tryRegister(ctx context.Context, sess *metastore.Session, reg metadata.Broker) (int64, error) {
	cctx, cancel := context.WithTimeout(ctx, registerCallTimeout)
	defer cancel()
	if *sess == nil {
		s, err := b.store.NewSession(cctx, b.cfg.MetadataStoreSessionTimeout)
		if err != nil {
			return 0, err
		}
		*sess = s
	}
	epoch, err := b.md.RegisterBroker(cctx, *sess, reg)
	if err != nil && !errors.Is(err, metadata.ErrBrokerIDInUse) {
		(*sess).Close()
		*sess = nil
	}
	return epoch, err
}

func notRegisteredReason(err error) string {
	if errors.Is(err, metadata.ErrBrokerIDInUse) {
		return "broker.id is registered by another session: this broker's previous life (waiting for its session to expire) or another live broker"
	}
	return "metadata store unreachable or failing"
}

// keepSession re-registers after the store session ends (expiry after a
// stall, store failover) and tells the controller to campaign again. From
// the session's end until the new registration's metadata arrives, clients
// are not served (the cache is unready).
func (b *Broker) keepSession(ctx context.Context, sess metastore.Session) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-sess.Done():
		}
		if ctx.Err() != nil {
			return
		}
		b.sessionEnds.Add(1)
		b.cache.Unready()
		b.log.Warn("store session ended; not serving clients until registered again")
		b.loop.Enqueue(controller.SessionExpired{})
		for {
			s, err := b.register(ctx)
			if err == nil {
				sess = s
				break
			}
			if ctx.Err() != nil {
				return
			}
			b.log.Warn("re-registration failed; retrying", "err", err)
		}
		b.loop.Enqueue(controller.Startup{Session: sess})
	}
}

// watchTopicConfigs keeps topic overrides in the metadata cache and applies
// them to hosted partitions.
func (b *Broker) watchTopicConfigs(ctx context.Context) {
	for ctx.Err() == nil {
		kvs, rev, err := b.store.List(ctx, metadata.TopicConfigsPrefix)
		if err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
			continue
		}
		for _, kv := range kvs {
			b.applyTopicConfig(kv.Key, kv.Value)
		}
		for resp := range b.store.WatchPrefix(ctx, metadata.TopicConfigsPrefix, rev+1) {
			if resp.Err != nil {
				break
			}
			for _, ev := range resp.Events {
				b.applyTopicConfig(ev.KV.Key, ev.KV.Value)
			}
		}
	}
}

func (b *Broker) applyTopicConfig(key string, value []byte) {
	b.dyn.mu.Lock() // dynconfig.go: one application to partitions at a time
	defer b.dyn.mu.Unlock()
	topic := key[len(metadata.TopicConfigsPrefix):]
	if value == nil {
		b.cache.SetTopicConfig(topic, nil)
		return
	}
	cfg, err := metadata.DecodeTopicConfig(value)
	if err != nil {
		b.log.Warn("bad topic config", "topic", topic, "err", err)
		return
	}
	b.cache.SetTopicConfig(topic, cfg)
	pc, err := b.partitionConfig(cfg)
	if err != nil {
		b.log.Warn("invalid topic config", "topic", topic, "err", err)
		return
	}
	if t, ok := b.cache.Topic(topic); ok {
		for _, p := range t.Partitions {
			if part := b.replicas.Get(kafka.TopicPartition{Topic: topic, Partition: p.ID}); part != nil {
				part.SetConfig(pc)
			}
		}
	}
}

// topicConfig reads a topic's overrides, from the cache or the store.
func (b *Broker) topicConfig(ctx context.Context, topic string) (map[string]string, error) {
	if t, ok := b.cache.Topic(topic); ok && t.Configs != nil {
		return t.Configs, nil
	}
	return storeTopicConfig(ctx, b.store, topic)
}

// storeTopicConfig reads a topic's overrides from the store; nil if it has
// none.
func storeTopicConfig(ctx context.Context, store metastore.Store, topic string) (map[string]string, error) {
	kv, found, err := store.Get(ctx, metadata.TopicConfigKey(topic))
	if err != nil || !found {
		return nil, err
	}
	return metadata.DecodeTopicConfig(kv.Value)
}

// NodeID is the broker's id.
func (b *Broker) NodeID() int32 { return b.nodeID }

// IsController reports whether this broker is the active controller.
func (b *Broker) IsController() bool { return b.ctrl.IsActive() }

// Close leaves the cluster: a controlled shutdown first (shutdown.go), then
// the controller resigns, the registration goes, the listener stops,
// storage flushes and closes.
func (b *Broker) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.mu.Unlock()
	b.controlledShutdown()
	err := b.teardown()
	b.log.Info("broker stopped")
	return err
}

func (b *Broker) teardown() error {
	var errs []error
	if b.cancel != nil {
		b.cancel()
	}
	b.sessMu.Lock()
	if b.sess != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = ctx
		errs = append(errs, ignoreExpired(b.sess.Close()))
		cancel()
	}
	b.sessMu.Unlock()
	errs = append(errs, b.closeListeners()...)
	b.wg.Wait()
	if b.fetchers != nil {
		b.fetchers.Close()
	}
	if b.alter != nil {
		b.alter.Close()
	}
	if b.channels != nil {
		b.channels.Close()
	}
	if b.logs != nil {
		errs = append(errs, b.logs.Close())
	}
	if b.ownStore && b.store != nil {
		errs = append(errs, b.store.Close())
	}
	if b.embedded != nil {
		b.embedded.Close()
	}
	return errors.Join(errs...)
}

func ignoreExpired(err error) error {
	if errors.Is(err, metastore.ErrSessionExpired) || errors.Is(err, metastore.ErrClosed) {
		return nil
	}
	return err
}

// partitionConfig resolves a topic's configuration for its partitions, over
// the broker's current (dynamic) configuration.
func (b *Broker) partitionConfig(overrides map[string]string) (replica.Config, error) {
	t, err := b.current().ResolveTopic(overrides)
	if err != nil {
		return replica.Config{}, err
	}
	return replica.Config{Log: logConfig(t), MaxMessageBytes: int(t.MaxMessageBytes),
		MinInsyncReplicas: int(t.MinInsyncReplicas), ReplicaLagTimeMax: b.cfg.ReplicaLagTimeMax}, nil
}

func logConfig(t config.Topic) storage.LogConfig {
	retention := t.Retention.Milliseconds()
	if t.Retention < 0 {
		retention = -1
	}
	return storage.LogConfig{
		SegmentBytes: int64(t.SegmentBytes), SegmentMs: t.Segment.Milliseconds(), SegmentJitterMs: t.SegmentJitter.Milliseconds(),
		RetentionMs: retention, RetentionBytes: t.RetentionBytes,
		FlushMessages: t.FlushMessages, FlushMs: t.Flush.Milliseconds(),
		IndexIntervalBytes: t.IndexIntervalBytes, SegmentIndexBytes: t.SegmentIndexBytes,
		LogAppendTime:     t.MessageTimestampType == "LogAppendTime",
		Compact:           slices.Contains(t.CleanupPolicy, "compact"),
		NoDelete:          !slices.Contains(t.CleanupPolicy, "delete"),
		DeleteRetentionMs: t.DeleteRetention.Milliseconds(), MinCompactionLagMs: t.MinCompactionLag.Milliseconds(),
		MaxCompactionLagMs: t.MaxCompactionLag.Milliseconds(), MinCleanableRatio: t.MinCleanableDirtyRatio,
		Compression: codecOf(t.CompressionType),
		Timestamps: record.TimestampBounds{
			Before: timestampBound(t.MessageTimestampBeforeMax, t.MessageTimestampDifferenceMax),
			After:  timestampBound(t.MessageTimestampAfterMax, t.MessageTimestampDifferenceMax),
		},
	}
}

// codecOf is the codec compression.type stores batches in, -1 for the
// producer's.
func codecOf(compressionType string) int8 {
	switch compressionType {
	case "uncompressed":
		return record.CompressionNone
	case "gzip":
		return record.CompressionGzip
	case "snappy":
		return record.CompressionSnappy
	case "lz4":
		return record.CompressionLz4
	case "zstd":
		return record.CompressionZstd
	}
	return -1
}

// timestampBound is message.timestamp.before.max.ms or .after.max.ms in
// ms, falling back, as Kafka 3.6+ does while the deprecated key lives, to
// message.timestamp.difference.max.ms when it is left at Long.MAX_VALUE.
func timestampBound(bound, difference time.Duration) int64 {
	if bound == config.Unlimited {
		bound = difference
	}
	if bound == config.Unlimited {
		return math.MaxInt64
	}
	return bound.Milliseconds()
}
