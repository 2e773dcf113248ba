package broker

// Client quotas: the store side of DescribeClientQuotas/AlterClientQuotas
// (api.ClientQuotas over /config/users and /config/clients) and the watch
// that keeps this broker's quota.Manager in step with them, as Kafka's
// ZK-mode brokers apply quota config changes (QuotaConfigHandler).

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/samsa-kafka/samsa/internal/config"
	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/metastore"
	"github.com/samsa-kafka/samsa/internal/quota"
)

// newQuotas makes the broker's quota manager from quota.window.num and
// quota.window.size.seconds.
func (b *Broker) newQuotas() { b.quotas = quota.New(quotaWindow(b.cfg)) }

// quotaWindow is quota.window.num and quota.window.size.seconds, the
// windows of the client quotas and of max.connection.creation.rate.
func quotaWindow(cfg *config.Broker) quota.Config {
	return quota.Config{Samples: int(cfg.QuotaWindowNum), Window: cfg.QuotaWindowSize}
}

// watchQuotas applies every stored quota entity before it returns (Start
// calls it before the broker registers, so clients are served under the
// quotas in force, as Kafka's DynamicConfigManager.startup), then watches
// for changes on goroutines of its own.
func (b *Broker) watchQuotas(ctx context.Context) {
	for _, prefix := range []string{metadata.UserConfigsPrefix, metadata.ClientConfigsPrefix} {
		applied := map[string]bool{}
		rev, err := b.loadQuotas(ctx, prefix, applied)
		if err != nil {
			b.log.Warn("loading client quotas", "prefix", prefix, "err", err)
		}
		b.goRun(func() { b.watchQuotaPrefix(ctx, prefix, rev, applied) })
	}
}

// loadQuotas applies every entity stored under prefix and removes those
// applied before that are gone (deleted while no watch ran); applied
// holds the keys in force.
func (b *Broker) loadQuotas(ctx context.Context, prefix string, applied map[string]bool) (int64, error) {
	kvs, rev, err := b.store.List(ctx, prefix)
	if err != nil {
		return 0, err
	}
	gone := maps.Clone(applied)
	for _, kv := range kvs {
		b.applyQuota(kv.Key, kv.Value)
		applied[kv.Key] = true
		delete(gone, kv.Key)
	}
	for key := range gone {
		b.applyQuota(key, nil)
		delete(applied, key)
	}
	return rev, nil
}

// watchQuotaPrefix applies the changes after rev (0: load first), loading
// again when the watch breaks.
func (b *Broker) watchQuotaPrefix(ctx context.Context, prefix string, rev int64, applied map[string]bool) {
	for ctx.Err() == nil {
		if rev == 0 {
			var err error
			if rev, err = b.loadQuotas(ctx, prefix, applied); err != nil {
				select {
				case <-ctx.Done():
				case <-time.After(200 * time.Millisecond):
				}
				continue
			}
		}
		for resp := range b.store.WatchPrefix(ctx, prefix, rev+1) {
			if resp.Err != nil {
				break
			}
			for _, ev := range resp.Events {
				b.applyQuota(ev.KV.Key, ev.KV.Value)
				if ev.Type == metastore.EventDelete {
					delete(applied, ev.KV.Key)
				} else {
					applied[ev.KV.Key] = true
				}
			}
		}
		rev = 0
	}
}

func (b *Broker) applyQuota(key string, value []byte) {
	user, client, ok := metadata.ParseQuotaEntityKey(key)
	if !ok {
		return
	}
	e := quota.Entity{User: user, ClientID: client}
	if value == nil {
		b.quotas.Set(e, nil)
		return
	}
	cfg, err := metadata.DecodeEntityConfig(value)
	if err != nil {
		b.log.Warn("bad quota config", "key", key, "err", err)
		return
	}
	values := map[string]float64{}
	for k, v := range cfg {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			values[k] = f
		}
	}
	b.quotas.Set(e, values)
}

// clientQuotas is api.ClientQuotas on the store: any broker writes, as
// Kafka's ZkAdminManager writes ZooKeeper from the broker that got the
// request, each write conditional on the version it read.
type clientQuotas struct{ store metastore.Store }

func (q clientQuotas) QuotaEntities(ctx context.Context) (map[quota.Entity]map[string]string, error) {
	out := map[quota.Entity]map[string]string{}
	for _, prefix := range []string{metadata.UserConfigsPrefix, metadata.ClientConfigsPrefix} {
		kvs, _, err := q.store.List(ctx, prefix)
		if err != nil {
			return nil, err
		}
		for _, kv := range kvs {
			user, client, ok := metadata.ParseQuotaEntityKey(kv.Key)
			if !ok {
				continue
			}
			if cfg, err := metadata.DecodeEntityConfig(kv.Value); err == nil {
				out[quota.Entity{User: user, ClientID: client}] = cfg
			}
		}
	}
	return out, nil
}

func (q clientQuotas) AlterQuotaEntity(ctx context.Context, e quota.Entity, edit func(map[string]string) (map[string]string, error)) error {
	key := metadata.QuotaEntityKey(e.User, e.ClientID)
	for ctx.Err() == nil {
		kv, found, err := q.store.Get(ctx, key)
		if err != nil {
			return err
		}
		var cur map[string]string
		var version int64
		if found {
			version = kv.Version
			if cur, err = metadata.DecodeEntityConfig(kv.Value); err != nil {
				return err
			}
		}
		next, err := edit(maps.Clone(cur))
		if err != nil {
			return err
		}
		op := metastore.Put(key, metadata.EncodeEntityConfig(next))
		if len(next) == 0 {
			op = metastore.Delete(key)
		}
		res, err := q.store.Txn(ctx, []metastore.Cmp{{Key: key, Version: version}}, []metastore.Op{op})
		if err != nil {
			return err
		}
		if res.Succeeded {
			return nil
		}
	}
	return fmt.Errorf("broker: alter %s: %w", key, ctx.Err())
}
