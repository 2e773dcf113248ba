// Package config reads a broker's server.properties and resolves topic
// configuration, with Apache Kafka's property names, types, defaults,
// synonyms and error wording.
//
// One table (brokerSettings, assembled in broker_table*.go; topicKeys in
// topic_table.go) defines every key: name, Kafka type, default, validator,
// documentation and, for topic keys, the broker keys it falls back to.
// Every one of Kafka 3.9's broker and topic configs is in it
// (testdata/kafka-*-configs.txt lists Kafka's names); keys Samsa does not
// act on say "Samsa: accepted, no effect." in their documentation, and
// PASSWORD keys describe as null. Parsing, defaults, the
// precedence of synonyms (log.retention.ms over .minutes over .hours) and
// DescribeConfigs answers are all derived from that table; no code switches
// on key names. Each broker key also carries its update mode (KIP-226):
// read-only, per-broker or cluster-wide; Samsa's mode is Kafka's except for
// keys Samsa cannot apply at run time, which stay read-only and say so in
// their documentation.
//
// Dynamic broker configs (dynamic.go) layer as Kafka's DynamicBrokerConfig:
// /config/brokers/<id> over /config/brokers/<default> over server.properties
// over the defaults. WithDynamic builds a new Broker with given layers (the
// static one is never changed); ValidateBrokerConfigs checks what
// AlterConfigs may write to either layer, and ValidateListenerUpdate a
// change of the per-broker listener keys as a whole (listeners_dynamic.go,
// Kafka's DynamicListenerConfig; DiffListeners says what to close and
// bind). DescribeBroker, DescribeTopic and
// DescribeBrokerDefault report each value's source and synonyms in Kafka's
// order: within a synonym group, the per-broker layer, the <default> layer,
// the static file, then the defaults, from the described key's own first
// entry on (Kafka's ConfigHelper).
//
// Invariants:
//   - A Broker returned by Load is fully validated: every explicitly set key
//     parsed and passed its validator, listeners are PLAINTEXT only.
//   - Within a synonym group the first key that was set explicitly wins; when
//     none was set, the first key with a non-null default does (Kafka's rule).
//   - Durations are time.Duration; Kafka's Long.MAX_VALUE and any value too
//     large for a Duration become Unlimited; negative values keep Kafka's
//     meaning (-1: no limit) and stay negative.
//   - A layered Broker holds only entries that passed ValidateBrokerConfigs;
//     invalid stored entries are skipped and reported, never fatal; so are
//     dynamic listener keys that break a listener rule with the static
//     configuration.
//   - Invalid values and unknown topic configs wrap ErrInvalidConfig, which
//     the API layer maps to Kafka's INVALID_CONFIG.
//
// The package is pure: no goroutines, and the only I/O is LoadFile reading
// the one file it is given.
package config
