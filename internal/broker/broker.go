package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/samsa-kafka/samsa/internal/api"
	"github.com/samsa-kafka/samsa/internal/config"
	"github.com/samsa-kafka/samsa/internal/replica"
	"github.com/samsa-kafka/samsa/internal/server"
	"github.com/samsa-kafka/samsa/internal/storage"
)

// Broker is one running Samsa broker.
type Broker struct {
	cfg       *config.Broker
	log       *slog.Logger
	nodeID    int32
	clusterID string

	logs     *storage.Manager
	replicas *replica.Manager
	meta     *localMeta
	srv      *server.Server

	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	closed bool
}

// Options are the parts of a broker that are not Kafka configuration.
type Options struct {
	Logger   *slog.Logger
	Registry prometheus.Registerer // nil: metrics are not registered
}

// Start opens storage, loads the topics, hosts their partitions and starts
// listening. The broker serves until Close.
func Start(cfg *config.Broker, opts Options) (*Broker, error) {
	b := &Broker{cfg: cfg, log: opts.Logger, nodeID: cfg.BrokerID}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	if b.nodeID < 0 {
		b.nodeID = 0
	}
	var err error
	if b.clusterID, err = ensureMetaProperties(cfg.LogDirs, b.nodeID); err != nil {
		return nil, err
	}
	b.logs, err = storage.OpenManager(storage.ManagerConfig{
		Dirs:                   cfg.LogDirs,
		RetentionCheckInterval: cfg.LogRetentionCheckInterval,
		FileDeleteDelay:        cfg.LogSegmentDeleteDelay,
		FlushCheckInterval:     min(cfg.LogFlushSchedulerInterval, cfg.LogRetentionCheckInterval),
		Logger:                 b.log.With("component", "storage"),
	})
	if err != nil {
		return nil, err
	}
	b.replicas = replica.NewManager(b.logs)
	reg, err := openTopicRegistry(cfg.LogDirs[0], b.nodeID)
	if err != nil {
		b.logs.Close()
		return nil, err
	}
	b.meta = &localMeta{topicRegistry: reg, b: b}
	if err := b.hostAll(); err != nil {
		b.logs.Close()
		return nil, err
	}
	h := api.New(api.Config{
		NodeID: b.nodeID, Broker: cfg, Meta: b.meta, Admin: b.meta, Partitions: b.replicas,
		Logger: b.log.With("component", "api"),
	})
	b.srv, err = server.New(server.Config{
		Addr:            net.JoinHostPort(cfg.Listeners[0].Host, strconv.Itoa(int(cfg.Listeners[0].Port))),
		MaxRequestBytes: cfg.SocketRequestMaxBytes,
		IdleTimeout:     cfg.ConnectionsMaxIdle,
		Logger:          b.log.With("component", "server"),
		Handler:         h,
		Registerer:      opts.Registry,
	})
	if err != nil {
		b.logs.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.cancel = cancel
	b.wg.Add(2)
	go func() { defer b.wg.Done(); b.logs.Run(ctx) }()
	go func() {
		defer b.wg.Done()
		if err := b.srv.Serve(); err != nil {
			b.log.Error("listener stopped", "err", err)
		}
	}()
	b.log.Info("broker started", "node", b.nodeID, "cluster", b.clusterID, "listener", b.srv.Addr().String(), "log.dirs", cfg.LogDirs)
	return b, nil
}

// Addr is the address the listener is bound to.
func (b *Broker) Addr() net.Addr { return b.srv.Addr() }

// NodeID is the broker's id.
func (b *Broker) NodeID() int32 { return b.nodeID }

// Close stops accepting requests, then flushes and closes storage.
func (b *Broker) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.mu.Unlock()
	err := b.srv.Close()
	b.cancel()
	b.wg.Wait()
	err = errors.Join(err, b.logs.Close())
	b.log.Info("broker stopped", "node", b.nodeID)
	return err
}

// self is this broker as clients reach it: the advertised listener, with the
// bound address filling in what it leaves out.
func (b *Broker) self() api.BrokerInfo {
	host, port := "", 0
	if len(b.cfg.AdvertisedListeners) > 0 {
		host, port = b.cfg.AdvertisedListeners[0].Host, int(b.cfg.AdvertisedListeners[0].Port)
	}
	if tcp, ok := b.srv.Addr().(*net.TCPAddr); ok {
		if host == "" {
			host = tcp.IP.String()
			if tcp.IP.IsUnspecified() {
				host = "localhost"
			}
		}
		if port == 0 {
			port = tcp.Port
		}
	}
	var rack *string
	if b.cfg.BrokerRack != "" {
		r := b.cfg.BrokerRack
		rack = &r
	}
	return api.BrokerInfo{ID: b.nodeID, Host: host, Port: int32(port), Rack: rack}
}

// partitionConfig resolves a topic's configuration for its partitions.
func (b *Broker) partitionConfig(overrides map[string]string) (replica.Config, error) {
	t, err := b.cfg.ResolveTopic(overrides)
	if err != nil {
		return replica.Config{}, err
	}
	return replica.Config{Log: logConfig(t), MaxMessageBytes: int(t.MaxMessageBytes)}, nil
}

func logConfig(t config.Topic) storage.LogConfig {
	retention := t.Retention.Milliseconds()
	if t.Retention < 0 {
		retention = -1
	}
	return storage.LogConfig{
		SegmentBytes: int64(t.SegmentBytes), SegmentMs: t.Segment.Milliseconds(),
		RetentionMs: retention, RetentionBytes: t.RetentionBytes,
		FlushMessages: t.FlushMessages, FlushMs: t.Flush.Milliseconds(),
		IndexIntervalBytes: t.IndexIntervalBytes, SegmentIndexBytes: t.SegmentIndexBytes,
		LogAppendTime: t.MessageTimestampType == "LogAppendTime",
	}
}

// hostTopic makes every partition of t hosted here.
func (b *Broker) hostTopic(t api.TopicInfo) error {
	pc, err := b.partitionConfig(t.Configs)
	if err != nil {
		return err
	}
	for _, p := range t.Partitions {
		tp := storage.TopicPartition{Topic: t.Name, Partition: p.ID}
		if _, err := b.replicas.Ensure(tp, t.ID, pc); err != nil {
			return fmt.Errorf("broker: hosting %s-%d: %w", t.Name, p.ID, err)
		}
	}
	return nil
}

func (b *Broker) unhostTopic(name string, partitions int32) error {
	var errs []error
	for p := range partitions {
		errs = append(errs, b.replicas.Remove(storage.TopicPartition{Topic: name, Partition: p}, true))
	}
	return errors.Join(errs...)
}

// hostAll hosts every registered topic and deletes logs that belong to no
// registered topic (left by a crash between unregistering and deleting).
func (b *Broker) hostAll() error {
	for _, t := range b.meta.Topics() {
		if err := b.hostTopic(t); err != nil {
			return err
		}
	}
	for _, tp := range b.logs.Partitions() {
		if b.replicas.Get(tp) == nil {
			b.log.Warn("deleting log of unknown topic", "topic", tp.Topic, "partition", tp.Partition)
			if err := b.logs.Delete(tp); err != nil {
				return err
			}
		}
	}
	return nil
}
