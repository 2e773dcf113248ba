package broker

// The group coordinator's place in the broker: its log is the
// __consumer_offsets partitions this broker leads (groupLog), it is told
// of their leadership by LeaderAndIsr and StopReplica (control.go), and
// its timers run on the broker's context.

import (
	"context"

	"github.com/samsa-kafka/samsa/internal/api"
	"github.com/samsa-kafka/samsa/internal/group"
	"github.com/samsa-kafka/samsa/internal/replica"
)

// newGroupCoordinator makes the broker's group coordinator.
func (b *Broker) newGroupCoordinator() *group.Coordinator {
	cfg := b.cfg
	return group.NewCoordinator(group.CoordinatorConfig{
		Group: group.Config{
			MinSessionTimeout: cfg.GroupMinSessionTimeout, MaxSessionTimeout: cfg.GroupMaxSessionTimeout,
			InitialRebalanceDelay: cfg.GroupInitialRebalanceDelay, MaxSize: int(cfg.GroupMaxSize),
		},
		Partitions: cfg.OffsetsTopicNumPartitions,
		PartitionCount: func() int32 {
			t, _ := b.cache.Topic(api.OffsetsTopic)
			return int32(len(t.Partitions))
		},
		Retention:        cfg.OffsetsRetention,
		RetentionCheck:   cfg.OffsetsRetentionCheck,
		CommitTimeout:    cfg.OffsetsCommitTimeout,
		MetadataMaxBytes: int(cfg.OffsetMetadataMaxBytes),
		Log:              newGroupLog(b.replicas),
		Logger:           b.log.With("component", "group-coordinator"),
	})
}

// lowerOffsetsReplication: a broker on its own embedded store (a one-broker
// samsa server) may create __consumer_offsets with fewer replicas than
// offsets.topic.replication.factor, unless that was set explicitly.
func (b *Broker) lowerOffsetsReplication() bool {
	_, set := b.cfg.Explicit()["offsets.topic.replication.factor"]
	return b.embedded != nil && !set
}

// groupLog is group.Log over this broker's __consumer_offsets replicas.
type groupLog struct{ coordLog }

func newGroupLog(replicas *replica.Manager) *groupLog {
	return &groupLog{coordLog{replicas: replicas, topic: api.OffsetsTopic}}
}

// Load reads the partition's batches from its start to its log end offset.
func (l *groupLog) Load(ctx context.Context, partition int32, fn group.LoadFunc) error {
	return l.read(ctx, partition, func(b []byte) (int64, error) { return group.ReadBatches(b, fn) })
}
