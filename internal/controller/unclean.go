package controller

// unclean.leader.election.enable, as Kafka's ZooKeeper-mode controller
// resolves it: a topic's override (/config/topics/<t>) wins; otherwise the
// controller broker's own value, its dynamic per-broker entry
// (/config/brokers/<id>) over the cluster default
// (/config/brokers/<default>) over its static configuration. Both kinds of
// documents reach the loop as store changes (standby.go) and are folded
// here. When the broker-level value turns true, an active controller
// elects every offline partition again (Kafka's UncleanLeaderElectionEnable
// event: triggerOnlinePartitionStateChange).

import (
	"context"
	"strconv"
	"strings"

	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/metastore"
)

const uncleanKey = "unclean.leader.election.enable"

// uncleanAllowed: the topic's override, else the broker-level value.
func (c *Controller) uncleanAllowed(topic string) bool {
	if v, ok := c.unclean[topic]; ok {
		return v
	}
	return c.brokerUnclean()
}

// brokerUnclean is the controller broker's unclean.leader.election.enable.
func (c *Controller) brokerUnclean() bool {
	for _, v := range []*bool{c.uncleanOwn, c.uncleanDefault} {
		if v != nil {
			return *v
		}
	}
	return c.cfg.UncleanLeaderElection
}

func (c *Controller) applyTopicConfig(kv metastore.KV) {
	topic := kv.Key[len(metadata.TopicConfigsPrefix):]
	cfg, err := metadata.DecodeTopicConfig(kv.Value)
	if err != nil {
		c.cfg.Logger.Warn("bad topic config", "topic", topic, "err", err)
		return
	}
	if v, ok := cfg[uncleanKey]; ok {
		b, _ := strconv.ParseBool(v)
		c.unclean[topic] = b
	} else {
		delete(c.unclean, topic)
	}
}

// applyBrokerConfig folds a write or deletion of /config/brokers/<default>
// or of this broker's entry; other brokers' entries are theirs.
func (c *Controller) applyBrokerConfig(ev metastore.Event) {
	id, perBroker, ok := metadata.ParseBrokerConfigKey(ev.KV.Key)
	if !ok || (perBroker && id != c.cfg.NodeID) {
		return
	}
	var v *bool
	if ev.Type == metastore.EventPut {
		cfg, err := metadata.DecodeTopicConfig(ev.KV.Value)
		if err != nil {
			c.cfg.Logger.Warn("bad broker config", "key", ev.KV.Key, "err", err)
			return
		}
		if s, ok := cfg[uncleanKey]; ok {
			b := strings.EqualFold(strings.TrimSpace(s), "true")
			v = &b
		}
	}
	if perBroker {
		c.uncleanOwn = v
	} else {
		c.uncleanDefault = v
	}
}

// loadBrokerConfigs reads this broker's and the default broker config
// documents (a failover without a warm context).
func (c *Controller) loadBrokerConfigs(ctx context.Context) error {
	c.uncleanDefault, c.uncleanOwn = nil, nil
	kvs, _, err := c.md.Store().List(ctx, metadata.BrokerConfigsPrefix)
	if err != nil {
		return err
	}
	for _, kv := range kvs {
		c.applyBrokerConfig(metastore.Event{Type: metastore.EventPut, KV: kv})
	}
	return nil
}

// onUncleanEnabled elects the offline partitions again now that the
// broker-level value allows unclean election.
func (c *Controller) onUncleanEnabled(ctx context.Context) error {
	c.cfg.Logger.Info("unclean leader election enabled at the broker level; electing offline partitions")
	b := newBatch()
	if err := c.electOffline(ctx, b); err != nil {
		return err
	}
	c.send(b)
	return nil
}
