package broker

// Dynamic configs (KIP-226), as Kafka's DynamicBrokerConfig and
// ConfigHandler apply them in ZooKeeper mode, with a store watch in place of
// /config/changes notifications:
//
//   - /config/brokers/<default> and /config/brokers/<this id> are read at
//     start (before any partition is hosted) and watched; at every change
//     the broker's current configuration becomes static.WithDynamic(default,
//     own) and every hosted partition's config is resolved again with it
//     (log.retention.*, log.segment.bytes, message.max.bytes,
//     min.insync.replicas, …: the keys internal/config marks dynamic), and
//     the follower fetchers are resized to num.replica.fetchers (a write
//     that changes it is checked first: threadpool.go); the listeners
//     follow listeners and advertised.listeners (listeners.go; the ones
//     read at start are bound at start).
//   - Topic overrides (/config/topics/<t>, watchTopicConfigs in broker.go)
//     resolve over that same current configuration.
//   - Any broker writes any of these keys (AlterConfigs,
//     IncrementalAlterConfigs), conditional on the version it read and
//     retried on a concurrent write; a write to a broker key is answered
//     once this broker has applied it.
//
// dynConfig.mu serializes every application of configs to partitions: a
// broker config change, a topic override change, and LeaderAndIsr from
// resolving its partitions' configs to hosting them (control.go). So a
// partition never keeps a config computed from an older broker
// configuration than the latest applied. Lock order: controlPlane.mu, then
// dynConfig.mu.

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-kafka/samsa/internal/api"
	"github.com/samsa-kafka/samsa/internal/config"
	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/metastore"
	"github.com/samsa-kafka/samsa/internal/quota"
)

// dynConfig is the broker's configuration with its dynamic layers.
type dynConfig struct {
	cur atomic.Pointer[config.Broker]

	mu       sync.Mutex // serializes applications to partitions
	def, own map[string]string
	applied  int64         // store revision of the last watch response applied
	changed  chan struct{} // closed (and replaced) when applied grows
}

// current is the broker's configuration with the dynamic layers applied.
func (b *Broker) current() *config.Broker {
	if b.dyn == nil { // brokers built by control tests: static only
		return b.cfg
	}
	return b.dyn.cur.Load()
}

// loadDynamicConfigs reads the broker's dynamic layers before anything
// uses its configuration, and returns the revision to watch from.
func (b *Broker) loadDynamicConfigs(ctx context.Context) (int64, error) {
	b.dyn = &dynConfig{changed: make(chan struct{})}
	b.dyn.cur.Store(b.cfg)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	kvs, rev, err := b.store.List(ctx, metadata.BrokerConfigsPrefix)
	if err != nil {
		return 0, fmt.Errorf("broker: reading dynamic broker configs: %w", err)
	}
	def, own := b.brokerLayers(kvs)
	b.applyBrokerConfigs(def, own, rev)
	return rev, nil
}

// brokerLayers picks this broker's two layers out of the keys under
// /config/brokers/.
func (b *Broker) brokerLayers(kvs []metastore.KV) (def, own map[string]string) {
	for _, kv := range kvs {
		if layer, ok := b.brokerLayer(kv.Key, kv.Value); ok {
			if _, perBroker, _ := metadata.ParseBrokerConfigKey(kv.Key); perBroker {
				own = layer
			} else {
				def = layer
			}
		}
	}
	return def, own
}

// brokerLayer decodes a config document of <default> or this broker (nil
// value: deleted); ok is false for other keys and undecodable documents.
func (b *Broker) brokerLayer(key string, value []byte) (map[string]string, bool) {
	id, perBroker, ok := metadata.ParseBrokerConfigKey(key)
	if !ok || (perBroker && id != b.nodeID) {
		return nil, false
	}
	if value == nil {
		return nil, true
	}
	cfg, err := metadata.DecodeTopicConfig(value)
	if err != nil {
		b.log.Warn("bad dynamic broker config document", "key", key, "err", err)
		return nil, false
	}
	return cfg, true
}

// watchBrokerConfigs applies every change to this broker's dynamic layers,
// from revision from+1 on; after a compaction or a store error it reads
// them again.
func (b *Broker) watchBrokerConfigs(ctx context.Context, from int64) {
	for ctx.Err() == nil {
		if from == 0 {
			kvs, rev, err := b.store.List(ctx, metadata.BrokerConfigsPrefix)
			if err != nil {
				select {
				case <-ctx.Done():
				case <-time.After(200 * time.Millisecond):
				}
				continue
			}
			def, own := b.brokerLayers(kvs)
			b.applyBrokerConfigs(def, own, rev)
			from = rev
		}
		for resp := range b.store.WatchPrefix(ctx, metadata.BrokerConfigsPrefix, from+1) {
			if resp.Err != nil {
				break
			}
			def, own := b.dyn.layers()
			for _, ev := range resp.Events {
				layer, ok := b.brokerLayer(ev.KV.Key, ev.KV.Value)
				if _, perBroker, _ := metadata.ParseBrokerConfigKey(ev.KV.Key); ok && perBroker {
					own = layer
				} else if ok {
					def = layer
				}
			}
			b.applyBrokerConfigs(def, own, resp.Revision)
			from = resp.Revision
		}
		from = 0
	}
}

func (d *dynConfig) layers() (def, own map[string]string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.def, d.own
}

// applyBrokerConfigs makes def and own the broker's dynamic layers, as of
// store revision rev; when they changed, every hosted partition's config is
// resolved again and the listeners follow (listeners.go, outside d.mu: a
// listener closing waits for its connections' handlers). Waiters see rev
// applied once all that is done.
func (b *Broker) applyBrokerConfigs(def, own map[string]string, rev int64) {
	if cur := b.applyLayers(def, own); cur != nil {
		b.reconfigureListeners(cur)
	}
	d := b.dyn
	d.mu.Lock()
	defer d.mu.Unlock()
	if rev > d.applied {
		d.applied = rev
		close(d.changed)
		d.changed = make(chan struct{})
	}
}

// applyLayers makes def and own the layers of the current configuration
// and applies it to the cleaner, fetchers and partitions; it returns the
// new configuration, nil when the layers did not change.
func (b *Broker) applyLayers(def, own map[string]string) *config.Broker {
	d := b.dyn
	d.mu.Lock()
	defer d.mu.Unlock()
	if maps.Equal(def, d.def) && maps.Equal(own, d.own) {
		return nil
	}
	cur, errs := b.cfg.WithDynamic(def, own)
	for _, err := range errs {
		b.log.Warn("dynamic broker config ignored", "err", err)
	}
	d.def, d.own = def, own
	prev := d.cur.Swap(cur)
	b.reconfigureCleaner(prev, cur)
	if b.fetchers != nil { // nil at start: startReplication reads cur
		b.fetchers.Resize(int(cur.NumReplicaFetchers))
	}
	b.reconfigureConnLimits(prev, cur)
	n := b.reapplyPartitionConfigs()
	b.log.Info("dynamic broker configs applied", "default", def, "broker", own, "partitions", n)
	return cur
}

// reapplyPartitionConfigs resolves every hosted partition's config again
// with the current broker configuration; d.mu held. It returns how many
// partitions it set.
func (b *Broker) reapplyPartitionConfigs() int {
	if b.cache == nil || b.replicas == nil { // at start, before storage opens
		return 0
	}
	n := 0
	for _, t := range b.cache.Topics() {
		pc, err := b.partitionConfig(t.Configs)
		if err != nil {
			b.log.Warn("invalid topic config", "topic", t.Name, "err", err)
			continue
		}
		for _, p := range t.Partitions {
			if part := b.replicas.Get(kafka.TopicPartition{Topic: t.Name, Partition: p.ID}); part != nil {
				part.SetConfig(pc)
				n++
			}
		}
	}
	return n
}

// waitApplied returns once this broker has applied store revision rev, or
// ctx ends (REQUEST_TIMED_OUT); not the request's time (quota.Parked).
func (d *dynConfig) waitApplied(ctx context.Context, rev int64) error {
	defer quota.Parked(ctx)()
	for {
		d.mu.Lock()
		done, ch := d.applied >= rev, d.changed
		d.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: the broker config was written but not yet applied here", kerr.RequestTimedOut)
		case <-ch:
		}
	}
}

// syncedWait bounds Synced: a describe is not held longer by a store or a
// watch that does not answer.
const syncedWait = 10 * time.Second

// configsAPI serves api.Configs for the handlers.
type configsAPI struct{ b *Broker }

var _ api.Configs = configsAPI{}

func (c configsAPI) Current() *config.Broker { return c.b.current() }

// Synced waits until this broker has applied the last write of
// /config/brokers/<default> and of its own key (a deleted key's delete is
// not waited for: the store keeps no revision of it), then is Current. It
// reads both in one request, a list of /config/brokers/ (a document per
// broker with dynamic configs at most). It gives up after syncedWait
// (REQUEST_TIMED_OUT, or the store's error).
func (c configsAPI) Synced(ctx context.Context) (*config.Broker, error) {
	ctx, cancel := context.WithTimeout(ctx, syncedWait)
	defer cancel()
	kvs, _, err := c.b.store.List(ctx, metadata.BrokerConfigsPrefix)
	if err != nil {
		return nil, err
	}
	var rev int64
	own := metadata.BrokerConfigKey(c.b.nodeID)
	for _, kv := range kvs {
		if kv.Key == metadata.BrokerDefaultConfigKey || kv.Key == own {
			rev = max(rev, kv.Version)
		}
	}
	if err := c.b.dyn.waitApplied(ctx, rev); err != nil {
		return nil, err
	}
	return c.b.current(), nil
}

// AlterTopicConfig rewrites /config/topics/<topic>, conditional on the
// document read and on the topic's assignment (the topic still exists).
func (c configsAPI) AlterTopicConfig(ctx context.Context, topic string, validateOnly bool, edit api.ConfigEdit) error {
	for {
		kv, found, err := c.b.store.Get(ctx, metadata.TopicKey(topic))
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("%w: The topic '%s' does not exist.", kerr.UnknownTopicOrPartition, topic)
		}
		rev, err := c.write(ctx, metadata.TopicConfigKey(topic), validateOnly, edit,
			metastore.Cmp{Key: kv.Key, Version: kv.Version})
		if err != nil || rev != 0 || validateOnly {
			return err
		}
	}
}

// AlterBrokerConfig rewrites /config/brokers/<this id> or <default>, once
// the configuration it makes here passes validateReconfiguration, and waits
// until this broker has applied it.
func (c configsAPI) AlterBrokerConfig(ctx context.Context, perBroker, validateOnly bool, edit api.ConfigEdit) error {
	key := metadata.BrokerDefaultConfigKey
	if perBroker {
		key = metadata.BrokerConfigKey(c.b.nodeID)
	}
	checked := func(stored map[string]string) (map[string]string, error) {
		next, err := edit(stored)
		if err != nil {
			return nil, err
		}
		def, own := c.b.current().Dynamic()
		if perBroker {
			own = next
		} else {
			def = next
		}
		return next, c.b.validateReconfiguration(def, own)
	}
	for {
		rev, err := c.write(ctx, key, validateOnly, checked)
		if err != nil || validateOnly {
			return err
		}
		if rev != 0 {
			return c.b.dyn.waitApplied(ctx, rev)
		}
	}
}

// validateReconfiguration checks the configuration this broker would have
// with def and own as its dynamic layers against its current one, as
// Kafka's DynamicBrokerConfig.validate does: a listener change as a whole
// first (the new KafkaConfig's rules, then DynamicListenerConfig's:
// listeners.go), then its BrokerReconfigurables: the thread pools
// (threadpool.go), then the cleaner (cleanerconfig.go). For a <default>
// write too, the current values are this broker's own.
func (b *Broker) validateReconfiguration(def, own map[string]string) error {
	if err := b.cfg.ValidateListenerUpdate(b.current(), def, own); err != nil {
		return err
	}
	next, _ := b.cfg.WithDynamic(def, own)
	if err := validateThreadPools(b.current(), next); err != nil {
		return err
	}
	return b.validateCleanerConfig(next)
}

// write is one read-edit-write of a config document; revision 0 with no
// error means a concurrent write won (or validateOnly).
func (c configsAPI) write(ctx context.Context, key string, validateOnly bool, edit api.ConfigEdit, guards ...metastore.Cmp) (int64, error) {
	stored, ver, err := c.b.md.EntityConfig(ctx, key)
	if err != nil {
		return 0, err
	}
	next, err := edit(stored)
	if err != nil || validateOnly {
		return 0, err
	}
	rev, err := c.b.md.SetEntityConfig(ctx, key, ver, next, guards...)
	if err == nil && rev != 0 {
		c.b.log.Info("config updated", "key", key, "config", next)
	}
	return rev, err
}
