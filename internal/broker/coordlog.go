package broker

// coordLog is what the group and transaction coordinators write through:
// the partitions of their internal topic (__consumer_offsets,
// __transaction_state) this broker leads, appended to as leader with
// acks=all semantics and read back from the log start when a partition is
// loaded. groupLog and txnLog add the reading of their records.

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/samsa-kafka/samsa/internal/replica"
	"github.com/samsa-kafka/samsa/internal/storage"
)

type coordLog struct {
	replicas *replica.Manager
	topic    string
}

func (l *coordLog) tp(partition int32) kafka.TopicPartition {
	return kafka.TopicPartition{Topic: l.topic, Partition: partition}
}

// Append writes a batch as leader and returns a wait that ends once the
// high watermark covers it. A batch of a producer (a transactional offset
// commit) continues the producer's sequence on the partition
// (nextSequence).
func (l *coordLog) Append(partition int32, batch []byte) (func(context.Context) error, int64, error) {
	tp := l.tp(partition)
	p := l.replicas.Get(tp)
	if p == nil {
		return nil, 0, kerr.NotLeaderForPartition
	}
	if h, err := record.ReadHeader(batch); err == nil && h.ProducerID >= 0 && !h.Control() {
		setBaseSequence(batch, nextSequence(p, h.ProducerID, h.ProducerEpoch))
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
func (l *coordLog) await(ctx context.Context, tp kafka.TopicPartition, p *replica.Partition, required int64) error {
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

// read hands the partition's batches, from its start to its log end
// offset, to walk, which returns the offset after the last whole batch it
// read.
func (l *coordLog) read(ctx context.Context, partition int32, walk func([]byte) (int64, error)) error {
	p := l.replicas.Get(l.tp(partition))
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
		next, err := walk(res.Records)
		if err != nil {
			return err
		}
		offset = max(next, offset+1)
	}
	return ctx.Err()
}

// nextSequence is the base sequence a transactional offset commit of the
// producer needs on the partition: Kafka appends the coordinator's own
// batches without the sequence rules (AppendOrigin.COORDINATOR, base
// sequence 0 every time); Samsa's log applies them to every leader
// append, so the coordinator continues the producer's sequence there (0
// for an epoch the partition has not seen). The coordinator's appends are
// serialized (its mutex), so nothing comes between this and the append.
func nextSequence(p *replica.Partition, producerID int64, epoch int16) int32 {
	infos, err := p.ActiveProducers()
	if err != nil {
		return 0
	}
	for _, pi := range infos {
		if pi.ProducerID == producerID && pi.ProducerEpoch == epoch && pi.LastSequence >= 0 {
			if pi.LastSequence == math.MaxInt32 {
				return 0
			}
			return pi.LastSequence + 1
		}
	}
	return 0
}

// setBaseSequence stamps a v2 batch's base sequence and its CRC.
func setBaseSequence(batch []byte, seq int32) {
	const offBaseSequence = 53 // the v2 header's base sequence
	binary.BigEndian.PutUint32(batch[offBaseSequence:], uint32(seq))
	record.SetCRC(batch)
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
	case errors.Is(err, storage.ErrInvalidProducerEpoch):
		return kerr.InvalidProducerEpoch // a fenced producer's TxnOffsetCommit
	case errors.Is(err, storage.ErrOutOfOrderSequence):
		return kerr.OutOfOrderSequenceNumber
	}
	return err
}
