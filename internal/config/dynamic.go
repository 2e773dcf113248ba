package config

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Dynamic broker configs (KIP-226), as Kafka's DynamicBrokerConfig layers
// them: /config/brokers/<id> (DYNAMIC_BROKER_CONFIG) over
// /config/brokers/<default> (DYNAMIC_DEFAULT_BROKER_CONFIG) over
// server.properties (STATIC_BROKER_CONFIG) over Kafka's defaults.

// dynamicOnlyKeys are broker configs Kafka accepts only dynamically
// (QuotaConfigs.brokerQuotaConfigs): they are not KafkaConfig keys, so Load
// warns about them, but AlterConfigs takes them at both levels.
var dynamicOnlyKeys = indexKeys(
	tLong("leader.replication.throttled.rate", longMax, atLeast(0),
		"A long representing the upper bound (bytes/sec) on replication traffic for leaders enumerated in the property leader.replication.throttled.replicas (for each topic). This property can be only set dynamically. Samsa: accepted, no effect (no replication throttling).").cluster(),
	tLong("follower.replication.throttled.rate", longMax, atLeast(0),
		"A long representing the upper bound (bytes/sec) on replication traffic for followers enumerated in the property follower.replication.throttled.replicas (for each topic). This property can be only set dynamically. Samsa: accepted, no effect (no replication throttling).").cluster(),
	tLong("replica.alter.log.dirs.io.max.bytes.per.second", longMax, atLeast(0),
		"A long representing the upper bound (bytes/sec) on disk IO used for moving replica between log directories on the same broker. This property can be only set dynamically. Samsa: accepted, no effect.").cluster(),
)

func indexKeys(keys ...key) map[string]key {
	m := make(map[string]key, len(keys))
	for _, k := range keys {
		m[k.name] = k
	}
	return m
}

// listenerOnlyKeys are Kafka's SslConfigs.RECONFIGURABLE_CONFIGS: dynamic
// only with a listener.name.<listener>. prefix.
var listenerOnlyKeys = []string{
	"ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
	"ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password",
	"ssl.keystore.key", "ssl.keystore.certificate.chain", "ssl.truststore.certificates",
}

// clusterListenerKeys may be set per listener at the <default> entity too
// (Kafka's ClusterLevelListenerConfigs).
var clusterListenerKeys = []string{"max.connections", "max.connection.creation.rate", "num.network.threads"}

const listenerPrefix = "listener.name."

// listenerBase splits listener.name.<listener>.<config> into its config
// name; ok is false for other names.
func listenerBase(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, listenerPrefix)
	if !ok {
		return "", false
	}
	_, base, ok := strings.Cut(rest, ".")
	return base, ok && base != ""
}

// dynamicKey returns the definition AlterConfigs checks a name against:
// a broker key, a dynamic-only key, or for listener.name.<l>.<config> the
// definition of <config>. ok is false for custom names (Kafka accepts
// those without checking, for plugins).
func dynamicKey(name string) (key, bool) {
	if base, ok := listenerBase(name); ok {
		name = base
	}
	if k, ok := brokerKeys[name]; ok {
		return k, true
	}
	k, ok := dynamicOnlyKeys[name]
	return k, ok
}

// ValidateBrokerConfigs checks dynamic broker overrides as Kafka's
// AlterConfigs does for a BROKER resource (DynamicBrokerConfig.validate);
// perBroker is true for /config/brokers/<id>, false for
// /config/brokers/<default>. In Kafka's order: keys that cannot change at
// run time, SSL keys without a listener prefix, bad values, and per-broker
// keys at <default> are errors wrapping ErrInvalidConfig, with Kafka's
// messages. Custom names (no Kafka or Samsa key) are accepted unchecked, as
// Kafka does. Returns the normalized values.
func ValidateBrokerConfigs(overrides map[string]string, perBroker bool) (map[string]string, error) {
	names := slices.Sorted(maps.Keys(overrides))
	if bad := filter(names, nonDynamic); len(bad) > 0 {
		return nil, errorf("Cannot update these configs dynamically: %s", scalaSet(bad))
	}
	if bad := filter(names, func(n string) bool { return slices.Contains(listenerOnlyKeys, n) }); len(bad) > 0 {
		return nil, errorf("These security configs can be dynamically updated only per-listener using the listener prefix: %s", scalaSet(bad))
	}
	out := make(map[string]string, len(overrides))
	var errs []error
	for _, n := range names {
		v, err := normalizeDynamic(n, overrides[n])
		if err != nil {
			errs = append(errs, err)
		}
		out[n] = v
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if bad := filter(names, perBrokerOnly); !perBroker && len(bad) > 0 {
		return nil, errorf("Cannot update these configs at default cluster level, broker id must be specified: %s", scalaSet(bad))
	}
	return out, nil
}

// nonDynamic: a known broker key that Samsa does not let change at run time.
func nonDynamic(name string) bool {
	k, ok := brokerKeys[name]
	return ok && k.mode == readOnly
}

// perBrokerOnly: a per-broker key, or a listener-prefixed key other than
// Kafka's cluster-level listener configs.
func perBrokerOnly(name string) bool {
	if base, ok := listenerBase(name); ok {
		return !slices.Contains(clusterListenerKeys, base)
	}
	k, ok := brokerKeys[name]
	return ok && k.mode == perBroker
}

// normalizeDynamic checks a value against its key's type and validator when
// the key (or, for listener-prefixed names, its base) is dynamic; other
// values pass unchanged, as Kafka's DynamicConfig.Broker.validate does.
func normalizeDynamic(name, v string) (string, error) {
	k, ok := dynamicKey(name)
	if !ok || k.mode == readOnly {
		return v, nil
	}
	k.name = name
	return k.normalize(v)
}

func filter(names []string, pred func(string) bool) []string {
	var out []string
	for _, n := range names {
		if pred(n) {
			out = append(out, n)
		}
	}
	return out
}

// scalaSet prints names as Kafka's messages do (Scala's Set.toString).
func scalaSet(names []string) string {
	return "Set(" + strings.Join(names, ", ") + ")"
}

// WithDynamic returns a copy of b with the dynamic layers over its static
// configuration: perBroker over clusterDefault over static over default.
// The layers replace any b already had. Keys that fail validation are
// skipped and reported, never fatal (Kafka's DynamicBrokerConfig logs and
// drops them the same way); so are the listener keys when they break a
// cross-key rule (listeners_dynamic.go).
func (b *Broker) WithDynamic(clusterDefault, perBroker map[string]string) (*Broker, []error) {
	nb, errs, err := b.layered(clusterDefault, perBroker)
	if err != nil {
		return b.withoutListeners(clusterDefault, perBroker, err)
	}
	return nb, errs
}

// validLayer keeps the entries of one dynamic layer that pass
// ValidateBrokerConfigs on their own, normalized; nil when none do.
func validLayer(layer map[string]string, perBroker bool) (map[string]string, []error) {
	entity := "<default>"
	if perBroker {
		entity = "broker"
	}
	var out map[string]string
	var errs []error
	for _, n := range slices.Sorted(maps.Keys(layer)) {
		v, err := ValidateBrokerConfigs(map[string]string{n: layer[n]}, perBroker)
		if err != nil {
			errs = append(errs, fmt.Errorf("config: dynamic %s config %s ignored: %w", entity, n, err))
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[n] = v[n]
	}
	return out, errs
}

// Dynamic returns the dynamic layers b was built with (nil maps if none).
func (b *Broker) Dynamic() (clusterDefault, perBroker map[string]string) {
	return maps.Clone(b.dynDefault), maps.Clone(b.dynBroker)
}

// layer is one place a broker config value can come from.
type layer struct {
	values map[string]string
	source int8
}

// layers lists b's set values, highest priority first.
func (b *Broker) layers() []layer {
	return []layer{
		{b.dynBroker, sourceDynBroker},
		{b.dynDefault, sourceDynDefault},
		{b.explicit, sourceStatic},
	}
}

// set returns name's value in the highest layer that sets it.
func (b *Broker) set(name string) (string, int8, bool) {
	for _, l := range b.layers() {
		if v, ok := l.values[name]; ok {
			return v, l.source, true
		}
	}
	return "", 0, false
}
