package config

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// kafkaServerProperties is Kafka's shipped config/server.properties
// (ZooKeeper mode, comments shortened).
const kafkaServerProperties = `# Licensed to the Apache Software Foundation (ASF) under one or more
# contributor license agreements.

#
# This configuration file is intended for use in ZK-based mode, where Apache ZooKeeper is required.
# See kafka.server.KafkaConfig for additional details and defaults
#

############################# Server Basics #############################

# The id of the broker. This must be set to a unique integer for each broker.
broker.id=0

############################# Socket Server Settings #############################

# The address the socket server listens on. If not configured, the host name will be equal to the value of
# java.net.InetAddress.getCanonicalHostName(), with PLAINTEXT listener name, and port 9092.
#   FORMAT:
#     listeners = listener_name://host_name:port
#   EXAMPLE:
#     listeners = PLAINTEXT://your.host.name:9092
#listeners=PLAINTEXT://:9092

# Listener name, hostname and port the broker will advertise to clients.
#advertised.listeners=PLAINTEXT://your.host.name:9092

# Maps listener names to security protocols, the default is for them to be the same.
#listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL

# The number of threads that the server uses for receiving requests from the network and sending responses to the network
num.network.threads=3

# The number of threads that the server uses for processing requests, which may include disk I/O
num.io.threads=8

# The send buffer (SO_SNDBUF) used by the socket server
socket.send.buffer.bytes=102400

# The receive buffer (SO_RCVBUF) used by the socket server
socket.receive.buffer.bytes=102400

# The maximum size of a request that the socket server will accept (protection against OOM)
socket.request.max.bytes=104857600


############################# Log Basics #############################

# A comma separated list of directories under which to store log files
log.dirs=/tmp/kafka-logs

# The default number of log partitions per topic.
num.partitions=1

# The number of threads per data directory to be used for log recovery at startup and flushing at shutdown.
num.recovery.threads.per.data.dir=1

############################# Internal Topic Settings  #############################
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1

############################# Log Flush Policy #############################

# The number of messages to accept before forcing a flush of data to disk
#log.flush.interval.messages=10000

# The maximum amount of time a message can sit in a log before we force a flush
#log.flush.interval.ms=1000

############################# Log Retention Policy #############################

# The minimum age of a log file to be eligible for deletion due to age
log.retention.hours=168

# A size-based retention policy for logs.
#log.retention.bytes=1073741824

# The maximum size of a log segment file. When this size is reached a new log segment will be created.
#log.segment.bytes=1073741824

# The interval at which log segments are checked to see if they can be deleted according
# to the retention policies
log.retention.check.interval.ms=300000

############################# Zookeeper #############################

# Zookeeper connection string (see zookeeper docs for details).
zookeeper.connect=localhost:2181

# Timeout in ms for connecting to zookeeper
zookeeper.connection.timeout.ms=18000


############################# Group Coordinator Settings #############################

group.initial.rebalance.delay.ms=0
`

func load(t *testing.T, props map[string]string) *Broker {
	t.Helper()
	b, warnings, err := Load(props)
	if err != nil {
		t.Fatalf("Load(%v): %v", props, err)
	}
	if len(warnings) > 0 {
		t.Fatalf("Load(%v): unexpected warnings %q", props, warnings)
	}
	return b
}

func TestLoadKafkaServerProperties(t *testing.T) {
	props, err := ParseProperties(strings.NewReader(kafkaServerProperties))
	if err != nil {
		t.Fatal(err)
	}
	if len(props) != 17 {
		t.Errorf("parsed %d properties, want 17: %v", len(props), props)
	}
	b := load(t, props)
	if b.BrokerID != 0 || b.OffsetsTopicReplication != 1 || b.GroupInitialRebalanceDelay != 0 {
		t.Errorf("broker.id=%d offsets.topic.replication.factor=%d group.initial.rebalance.delay=%v",
			b.BrokerID, b.OffsetsTopicReplication, b.GroupInitialRebalanceDelay)
	}
	if !slices.Equal(b.LogDirs, []string{"/tmp/kafka-logs"}) || b.LogRetention != 168*time.Hour {
		t.Errorf("log.dirs=%v retention=%v", b.LogDirs, b.LogRetention)
	}
}

func TestDefaults(t *testing.T) {
	b := load(t, nil)
	tests := []struct {
		name      string
		got, want any
	}{
		{"broker.id", b.BrokerID, int32(-1)},
		{"broker.rack", b.BrokerRack, ""},
		{"listeners", b.Listeners, []Listener{{Name: "PLAINTEXT", Port: 9092, Protocol: "PLAINTEXT"}}},
		{"advertised.listeners", b.AdvertisedListeners, b.Listeners},
		{"inter.broker.listener.name", b.InterBrokerListenerName, "PLAINTEXT"},
		{"log.dirs", b.LogDirs, []string{"/tmp/kafka-logs"}},
		{"num.partitions", b.NumPartitions, int32(1)},
		{"default.replication.factor", b.DefaultReplicationFactor, int32(1)},
		{"auto.create.topics.enable", b.AutoCreateTopicsEnable, true},
		{"delete.topic.enable", b.DeleteTopicEnable, true},
		{"log.segment.bytes", b.LogSegmentBytes, int32(1 << 30)},
		{"log.roll", b.LogRoll, 168 * time.Hour},
		{"log.retention", b.LogRetention, 168 * time.Hour},
		{"log.retention.bytes", b.LogRetentionBytes, int64(-1)},
		{"log.retention.check.interval.ms", b.LogRetentionCheckInterval, 5 * time.Minute},
		{"log.segment.delete.delay.ms", b.LogSegmentDeleteDelay, time.Minute},
		{"log.flush.interval.messages", b.LogFlushIntervalMessages, int64(1<<63 - 1)},
		{"log.flush.interval", b.LogFlushInterval, Unlimited},
		{"log.flush.scheduler.interval.ms", b.LogFlushSchedulerInterval, Unlimited},
		{"log.index.interval.bytes", b.LogIndexIntervalBytes, int32(4096)},
		{"log.index.size.max.bytes", b.LogIndexSizeMaxBytes, int32(10485760)},
		{"log.message.timestamp.type", b.LogMessageTimestampType, "CreateTime"},
		{"log.cleanup.policy", b.LogCleanupPolicy, []string{"delete"}},
		{"log.cleaner.enable", b.LogCleanerEnable, true},
		{"log.cleaner.threads", b.LogCleanerThreads, int32(1)},
		{"log.cleaner.dedupe.buffer.size", b.LogCleanerDedupeBufferSize, int64(134217728)},
		{"log.cleaner.io.buffer.size", b.LogCleanerIOBufferSize, int32(524288)},
		{"log.cleaner.io.max.bytes.per.second", b.LogCleanerIOMaxBytesPerSecond, math.MaxFloat64},
		{"log.cleaner.backoff.ms", b.LogCleanerBackoff, 15 * time.Second},
		{"message.max.bytes", b.MessageMaxBytes, int32(1048588)},
		{"socket.request.max.bytes", b.SocketRequestMaxBytes, int32(104857600)},
		{"connections.max.idle.ms", b.ConnectionsMaxIdle, 10 * time.Minute},
		{"min.insync.replicas", b.MinInsyncReplicas, int32(1)},
		{"unclean.leader.election.enable", b.UncleanLeaderElection, false},
		{"replica.lag.time.max.ms", b.ReplicaLagTimeMax, 30 * time.Second},
		{"replica.fetch.max.bytes", b.ReplicaFetchMaxBytes, int32(1048576)},
		{"replica.fetch.wait.max.ms", b.ReplicaFetchWaitMax, 500 * time.Millisecond},
		{"replica.fetch.min.bytes", b.ReplicaFetchMinBytes, int32(1)},
		{"num.replica.fetchers", b.NumReplicaFetchers, int32(1)},
		{"controlled.shutdown.enable", b.ControlledShutdownEnable, true},
		{"controlled.shutdown.max.retries", b.ControlledShutdownRetries, int32(3)},
		{"controlled.shutdown.retry.backoff.ms", b.ControlledShutdownBackoff, 5 * time.Second},
		{"auto.leader.rebalance.enable", b.AutoLeaderRebalanceEnable, true},
		{"leader.imbalance.per.broker.percentage", b.LeaderImbalancePercentage, int32(10)},
		{"leader.imbalance.check.interval.seconds", b.LeaderImbalanceCheck, 300 * time.Second},
		{"offsets.topic.replication.factor", b.OffsetsTopicReplication, int16(3)},
		{"offsets.retention.minutes", b.OffsetsRetention, 7 * 24 * time.Hour},
		{"group.initial.rebalance.delay.ms", b.GroupInitialRebalanceDelay, 3 * time.Second},
		{"metadata.store.connect", b.MetadataStoreConnect, ""},
		{"metadata.store.session.timeout.ms", b.MetadataStoreSessionTimeout, 6 * time.Second},
		{"metadata.store.data.dir", b.MetadataStoreDataDir, ""},
		{"producer.id.expiration.ms", b.ProducerIDExpiration, 24 * time.Hour},
		{"producer.id.expiration.check.interval.ms", b.ProducerIDExpirationCheck, 10 * time.Minute},
	}
	for _, tt := range tests {
		if !equal(tt.got, tt.want) {
			t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}

func equal(a, b any) bool {
	switch a := a.(type) {
	case []string:
		return slices.Equal(a, b.([]string))
	case []Listener:
		return slices.Equal(a, b.([]Listener))
	}
	return a == b
}

func TestPrecedence(t *testing.T) {
	tests := []struct {
		name  string
		props map[string]string
		field func(*Broker) any
		want  any
	}{
		{"retention hours", map[string]string{"log.retention.hours": "24"},
			func(b *Broker) any { return b.LogRetention }, 24 * time.Hour},
		{"retention minutes beat hours", map[string]string{"log.retention.hours": "24", "log.retention.minutes": "30"},
			func(b *Broker) any { return b.LogRetention }, 30 * time.Minute},
		{"retention ms beats minutes and hours", map[string]string{"log.retention.hours": "24", "log.retention.minutes": "30", "log.retention.ms": "1500"},
			func(b *Broker) any { return b.LogRetention }, 1500 * time.Millisecond},
		{"retention -1 unlimited", map[string]string{"log.retention.ms": "-1"},
			func(b *Broker) any { return b.LogRetention < 0 }, true},
		{"roll hours", map[string]string{"log.roll.hours": "1"},
			func(b *Broker) any { return b.LogRoll }, time.Hour},
		{"roll ms beats hours", map[string]string{"log.roll.hours": "1", "log.roll.ms": "60000"},
			func(b *Broker) any { return b.LogRoll }, time.Minute},
		{"log.dirs beats log.dir", map[string]string{"log.dir": "/a", "log.dirs": "/b, /c,"},
			func(b *Broker) any { return strings.Join(b.LogDirs, ";") }, "/b;/c"},
		{"log.dir alone", map[string]string{"log.dir": "/a"},
			func(b *Broker) any { return strings.Join(b.LogDirs, ";") }, "/a"},
		{"flush falls back to scheduler interval", map[string]string{"log.flush.scheduler.interval.ms": "2000"},
			func(b *Broker) any { return b.LogFlushInterval }, 2 * time.Second},
		{"flush interval beats scheduler", map[string]string{"log.flush.scheduler.interval.ms": "2000", "log.flush.interval.ms": "1000"},
			func(b *Broker) any { return b.LogFlushInterval }, time.Second},
		{"file.delete.delay.ms alias", map[string]string{"file.delete.delay.ms": "10"},
			func(b *Broker) any { return b.LogSegmentDeleteDelay }, 10 * time.Millisecond},
		{"kafka name beats alias", map[string]string{"file.delete.delay.ms": "10", "log.segment.delete.delay.ms": "20"},
			func(b *Broker) any { return b.LogSegmentDeleteDelay }, 20 * time.Millisecond},
		{"values are trimmed", map[string]string{"num.partitions": " 3 \t"},
			func(b *Broker) any { return b.NumPartitions }, int32(3)},
		{"booleans ignore case", map[string]string{"delete.topic.enable": "FALSE"},
			func(b *Broker) any { return b.DeleteTopicEnable }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.field(load(t, tt.props)); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestInvalidValues(t *testing.T) {
	tests := []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{"log.segment.bytes": "abc"}, `config: invalid value "abc" for log.segment.bytes: not a number`},
		{map[string]string{"log.segment.bytes": "13"}, `config: invalid value "13" for log.segment.bytes: must be at least 14`},
		{map[string]string{"log.segment.bytes": "4294967296"}, `config: invalid value "4294967296" for log.segment.bytes: out of range for INT`},
		{map[string]string{"offsets.topic.replication.factor": "40000"}, `for offsets.topic.replication.factor: out of range for SHORT`},
		{map[string]string{"auto.create.topics.enable": "yes"}, `config: invalid value "yes" for auto.create.topics.enable: expected true or false`},
		{map[string]string{"log.message.timestamp.type": "createtime"}, `must be one of CreateTime, LogAppendTime`},
		{map[string]string{"log.cleanup.policy": "delete,shred"}, `for log.cleanup.policy: element "shred" must be one of delete, compact`},
		{map[string]string{"metadata.store.session.timeout.ms": "1999"}, `for metadata.store.session.timeout.ms: must be at least 2000`},
		{map[string]string{"log.retention.hours": "1.5"}, `for log.retention.hours: not a number`},
		{map[string]string{"listeners": "SSL://:9093"}, `config: invalid value "SSL://:9093" for listeners: listener SSL uses SSL; only PLAINTEXT is supported`},
		{map[string]string{"listeners": "PLAINTEXT://:9092,PLAINTEXT://:9093"}, `for listeners: each listener must have a different name`},
		{map[string]string{"listeners": "PLAINTEXT://9092"}, `for listeners: "PLAINTEXT://9092" is not NAME://host:port`},
		{map[string]string{"listeners": "PLAINTEXT://:99999"}, `for listeners: bad port`},
		{map[string]string{"listeners": "INTERNAL://:9092"}, `no security protocol defined for listener INTERNAL`},
		{map[string]string{"listeners": "PLAINTEXT://0.0.0.0:9092"}, `for listeners: cannot advertise the nonroutable meta-address 0.0.0.0`},
		{map[string]string{"advertised.listeners": "OTHER://h:1"}, `for advertised.listeners: no security protocol defined for listener OTHER`},
		{map[string]string{"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT", "listeners": "INTERNAL://:9092"},
			`invalid value "PLAINTEXT" for inter.broker.listener.name: must be a listener name defined in advertised.listeners`},
		{map[string]string{"security.inter.broker.protocol": "SSL"}, `for security.inter.broker.protocol: must be one of PLAINTEXT`},
		{map[string]string{"log.dirs": " , "}, `invalid value "," for log.dirs: at least one log directory`},
		{map[string]string{"replica.fetch.wait.max.ms": "40000"}, `for replica.fetch.wait.max.ms: must not exceed replica.socket.timeout.ms`},
	}
	for _, tt := range tests {
		_, _, err := Load(tt.props)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Load(%v) = %v, want error containing %q", tt.props, err, tt.want)
			continue
		}
		if !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("Load(%v): %v does not wrap ErrInvalidConfig", tt.props, err)
		}
	}
}

func TestInvalidValuesAllReported(t *testing.T) {
	_, _, err := Load(map[string]string{"num.partitions": "0", "broker.id": "x"})
	if err == nil || !strings.Contains(err.Error(), "num.partitions") || !strings.Contains(err.Error(), "broker.id") {
		t.Errorf("got %v, want both keys named", err)
	}
}

func TestListeners(t *testing.T) {
	b := load(t, map[string]string{
		"listener.security.protocol.map": "INTERNAL:PLAINTEXT,EXTERNAL:plaintext",
		"listeners":                      "internal://127.0.0.1:9092, EXTERNAL://[::1]:0",
		"advertised.listeners":           "EXTERNAL://kafka.example.com:19092,INTERNAL://:9092",
		"inter.broker.listener.name":     "INTERNAL",
	})
	want := []Listener{
		{Name: "INTERNAL", Host: "127.0.0.1", Port: 9092, Protocol: "PLAINTEXT"},
		{Name: "EXTERNAL", Host: "::1", Port: 0, Protocol: "PLAINTEXT"},
	}
	if !slices.Equal(b.Listeners, want) {
		t.Errorf("listeners = %v, want %v", b.Listeners, want)
	}
	if got := b.AdvertisedListeners[0].String(); got != "EXTERNAL://kafka.example.com:19092" {
		t.Errorf("advertised[0] = %s", got)
	}
	if got := b.AdvertisedListeners[1].String(); got != "INTERNAL://:9092" {
		t.Errorf("advertised[1] = %s", got)
	}
	if b.InterBrokerListenerName != "INTERNAL" {
		t.Errorf("inter.broker.listener.name = %q", b.InterBrokerListenerName)
	}
}

func TestUnknownKeysWarn(t *testing.T) {
	b, warnings, err := Load(map[string]string{
		"num.partitons":        "3", // typo
		"zookeeper.ssl.client": "x", // ignored family
		"ssl.keystore.type":    "JKS",
		"num.partitions":       "2",
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(warnings, []string{`unknown config "num.partitons"`}) {
		t.Errorf("warnings = %q", warnings)
	}
	if b.NumPartitions != 2 {
		t.Errorf("num.partitions = %d", b.NumPartitions)
	}
}

func TestLoadFileOverrides(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.properties")
	text := "broker.id=1\nlog.dirs=/data/a\nnum.partitions=4\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	b, warnings, err := LoadFile(path, []string{"broker.id=7", "log.retention.ms=1000", "broker.rack=r1=a"})
	if err != nil || len(warnings) > 0 {
		t.Fatalf("LoadFile: %v %q", err, warnings)
	}
	if b.BrokerID != 7 || b.NumPartitions != 4 || b.LogRetention != time.Second || b.BrokerRack != "r1=a" {
		t.Errorf("got id=%d partitions=%d retention=%v rack=%q", b.BrokerID, b.NumPartitions, b.LogRetention, b.BrokerRack)
	}
	if got := b.Explicit()["broker.id"]; got != "7" {
		t.Errorf("explicit broker.id = %q", got)
	}
	if _, _, err := LoadFile(path, []string{"novalue"}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("bad override: got %v", err)
	}
	if _, _, err := LoadFile(filepath.Join(t.TempDir(), "missing"), nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: got %v", err)
	}
}

// TestTableIsConsistent checks every default in the tables passes its own
// type and validator, so a typo in a default cannot hide.
func TestTableIsConsistent(t *testing.T) {
	for name, k := range brokerKeys {
		if k.hasDefault() {
			if _, err := k.normalize(k.dflt); err != nil {
				t.Errorf("broker %s: default: %v", name, err)
			}
		}
	}
	for _, k := range topicKeys {
		if _, err := k.normalize(k.dflt); err != nil {
			t.Errorf("topic %s: default: %v", k.name, err)
		}
		for _, s := range k.synonyms {
			if _, ok := brokerKeys[s]; !ok {
				t.Errorf("topic %s: synonym %s is not a broker key", k.name, s)
			}
		}
	}
}

// TestHostileValuesNeverPanic feeds every known key malformed values: each
// must load or fail with ErrInvalidConfig, never panic.
func TestHostileValuesNeverPanic(t *testing.T) {
	values := []string{"", " ", "-", "9223372036854775808", "-9223372036854775809", "1e9", "NaN",
		"Infinity", "0x10", "://", "a://b:c", "PLAINTEXT://[::1", ",,,", "\x00", "\u00e9"}
	for name := range brokerKeys {
		for _, v := range values {
			if _, _, err := Load(map[string]string{name: v}); err != nil && !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("Load(%s=%q): %v does not wrap ErrInvalidConfig", name, v, err)
			}
		}
	}
	b := load(t, nil)
	for _, k := range topicKeys {
		for _, v := range values {
			if _, err := b.ResolveTopic(map[string]string{k.name: v}); err != nil && !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("ResolveTopic(%s=%q): %v does not wrap ErrInvalidConfig", k.name, v, err)
			}
			_ = b.DescribeTopic(map[string]string{k.name: v})
		}
	}
}

// metrics.listener takes host:port or nothing.
func TestMetricsListenerConfig(t *testing.T) {
	for v, ok := range map[string]bool{"": true, "127.0.0.1:9404": true, ":9404": true, "[::1]:0": true,
		"9404": false, "localhost:http": false, "h:70000": false} {
		_, _, err := Load(map[string]string{"log.dirs": t.TempDir(), "metrics.listener": v})
		if (err == nil) != ok {
			t.Errorf("metrics.listener=%q: err %v", v, err)
		}
	}
}

// An override is key=value, the key trimmed and the value kept as given;
// anything else is refused. samsa-chaos -broker-config checks its values
// with it; TestLoadFileOverrides covers LoadFile's use.
func TestParseOverride(t *testing.T) {
	k, v, err := ParseOverride(" replica.socket.timeout.ms =5000 ")
	if err != nil || k != "replica.socket.timeout.ms" || v != "5000 " {
		t.Fatalf("got %q %q %v", k, v, err)
	}
	for _, bad := range []string{"replica.socket.timeout.ms", "=5000", "  =x", ""} {
		if _, _, err := ParseOverride(bad); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%q: got %v, want ErrInvalidConfig", bad, err)
		}
	}
}
