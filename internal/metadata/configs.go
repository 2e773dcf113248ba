package metadata

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/samsa-kafka/samsa/internal/metastore"
)

// Dynamic configs (KIP-226), Kafka's ZooKeeper layout: every entity's
// overrides are one {"version":1,"config":{...}} document (the topic config
// codec, codec.go) under /config/<entity type>/<name>. Any broker writes
// them, conditional on the version it read (Kafka's AdminZkClient writes
// them from the broker that got the request); every broker watches the
// prefix instead of Kafka's /config/changes sequence nodes.
const (
	// BrokerConfigsPrefix holds /config/brokers/<id> and
	// /config/brokers/<default>.
	BrokerConfigsPrefix = "/config/brokers/"
	// DefaultEntity is Kafka's ConfigEntityName.Default: the cluster-wide
	// entity of a config type.
	DefaultEntity = "<default>"
)

// BrokerConfigKey is /config/brokers/<id>.
func BrokerConfigKey(id int32) string { return BrokerConfigsPrefix + strconv.Itoa(int(id)) }

// BrokerDefaultConfigKey is /config/brokers/<default>.
const BrokerDefaultConfigKey = BrokerConfigsPrefix + DefaultEntity

// ParseBrokerConfigKey names the entity of a key under BrokerConfigsPrefix:
// perBroker with its id, or the <default> entity; ok is false otherwise.
func ParseBrokerConfigKey(key string) (id int32, perBroker, ok bool) {
	rest, found := strings.CutPrefix(key, BrokerConfigsPrefix)
	if !found {
		return 0, false, false
	}
	if rest == DefaultEntity {
		return 0, false, true
	}
	n, err := strconv.ParseInt(rest, 10, 32)
	if err != nil || n < 0 || strconv.Itoa(int(n)) != rest {
		return 0, false, false
	}
	return int32(n), true, true
}

// EntityConfig reads the config document at key: its overrides (nil when
// the key is absent) and the version to write against (0: absent).
func (c *Client) EntityConfig(ctx context.Context, key string) (map[string]string, int64, error) {
	kv, found, err := c.s.Get(ctx, key)
	if err != nil || !found {
		return nil, 0, err
	}
	cfg, err := DecodeTopicConfig(kv.Value)
	if err != nil {
		return nil, 0, fmt.Errorf("metadata: %s: %w", key, err)
	}
	return cfg, kv.Version, nil
}

// SetEntityConfig writes cfg as the config document at key provided the
// key is still at version (0: absent) and every guard holds, and returns
// the store revision of the write; 0 when a compare failed (read again and
// retry). An empty cfg is written as an empty document, as Kafka's
// AdminZkClient does.
func (c *Client) SetEntityConfig(ctx context.Context, key string, version int64, cfg map[string]string, guards ...metastore.Cmp) (int64, error) {
	cmps := append([]metastore.Cmp{{Key: key, Version: version}}, guards...)
	res, err := c.s.Txn(ctx, cmps, []metastore.Op{metastore.Put(key, EncodeTopicConfig(cfg))})
	if err != nil || !res.Succeeded {
		return 0, err
	}
	return res.Revision, nil
}
