package broker

// The group coordinator's place in the broker: its log is the
// __consumer_offsets partitions this broker leads (groupLog), it is told
// of their leadership by LeaderAndIsr and StopReplica (control.go), and
// its timers run on the broker's context.

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-kafka/samsa/internal/api"
	"github.com/samsa-kafka/samsa/internal/group"
	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/record"
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
		Log:              &groupLog{replicas: b.replicas},
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
type groupLog struct{ replicas *replica.Manager }

func offsetsTP(partition int32) kafka.TopicPartition {
	return kafka.TopicPartition{Topic: api.OffsetsTopic, Partition: partition}
}

// Append writes a batch as leader with acks=all semantics.
func (l *groupLog) Append(partition int32, batch []byte) (func(context.Context) error, int64, error) {
	tp := offsetsTP(partition)
	p := l.replicas.Get(tp)
	if p == nil {
		return nil, 0, kerr.NotLeaderForPartition
	}
	hdrs, err := record.Validate(batch, len(batch))
	if err != nil {
		return nil, 0, err
	}
	info, err := p.AppendAsLeader(batch, hdrs, time.Now(), -1)
	if err != nil {
		return nil, 0, replicaError(err)
	}
	required := info.LastOffset + 1
	return func(ctx context.Context) error { return l.await(ctx, tp, p, required) }, info.FirstOffset, nil
}

// await waits until the high watermark reaches required (the delayed
// produce's rule, replica.Partition.Acked).
func (l *groupLog) await(ctx context.Context, tp kafka.TopicPartition, p *replica.Partition, required int64) error {
	w := replica.NewWaiter()
	p.AddWaiter(w)
	defer p.RemoveWaiter(w)
	for {
		if l.replicas.Get(tp) != p {
			return kerr.NotLeaderForPartition
		}
		if done, err := p.Acked(required); done {
			return replicaError(err)
		}
		select {
		case <-w.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func replicaError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, replica.ErrNotLeader):
		return kerr.NotLeaderForPartition
	case errors.Is(err, replica.ErrNotEnoughReplicas):
		return kerr.NotEnoughReplicas
	case errors.Is(err, replica.ErrNotEnoughReplicasAfterAppend):
		return kerr.NotEnoughReplicasAfterAppend
	}
	return err
}

// Load reads the partition from its start to its log end offset.
func (l *groupLog) Load(ctx context.Context, partition int32, fn func(offset int64, key, value []byte)) error {
	p := l.replicas.Get(offsetsTP(partition))
	if p == nil {
		return kerr.NotLeaderForPartition
	}
	offset, end := p.LogStartOffset(), p.LogEndOffset()
	for offset < end && ctx.Err() == nil {
		res, err := p.Log().Read(offset, end, 1<<20, true)
		if err != nil {
			return err
		}
		if len(res.Records) == 0 {
			break
		}
		next, err := eachRecord(res.Records, fn)
		if err != nil {
			return err
		}
		offset = max(next, offset+1)
	}
	return ctx.Err()
}

// eachRecord calls fn for the records of whole batches (control batches
// skipped) and returns the offset after the last batch.
func eachRecord(b []byte, fn func(offset int64, key, value []byte)) (int64, error) {
	var next int64
	for len(b) > 0 {
		h, err := record.ReadHeader(b)
		if err != nil || h.Size() > len(b) {
			break
		}
		if !h.Control() {
			err = record.Records(b[:h.Size()], func(r record.Record) bool {
				fn(r.Offset, r.Key, r.Value)
				return true
			})
			if err != nil {
				return next, err
			}
		}
		next = h.LastOffset() + 1
		b = b[h.Size():]
	}
	return next, nil
}
