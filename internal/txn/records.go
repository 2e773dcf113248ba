package txn

// The records of __transaction_state, with Kafka's schemas (franz-go's
// kmsg.TxnMetadataKey and kmsg.TxnMetadataValue, Kafka's TransactionLog):
// key version 0 is the transactional id; value version 0 its producer id
// and epoch, timeout, state, partitions and timestamps, as Kafka 2.x–3.x
// write it (the last producer id and epoch are not in it, so a KIP-360
// retry does not survive a coordinator move — Kafka's own limit). A nil
// value is a tombstone (the id expired: Dead).

import (
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/record"
)

// ErrBadRecord is a record of __transaction_state that does not decode.
var ErrBadRecord = errors.New("txn: undecodable __transaction_state record")

// Record encodes a transit (Dead: the id's tombstone).
func Record(t *Transit) record.KV {
	k := kmsg.NewTxnMetadataKey()
	k.Version, k.TransactionalID = 0, t.ID
	kv := record.KV{Key: k.AppendTo(nil)}
	if t.State == Dead {
		return kv
	}
	v := kmsg.NewTxnMetadataValue()
	v.Version, v.ProducerID, v.ProducerEpoch, v.TimeoutMillis = 0, t.ProducerID, t.ProducerEpoch, t.TimeoutMs
	v.State = kmsg.TransactionState(t.State)
	v.LastUpdateTimestamp, v.StartTimestamp = millis(t.LastUpdate), millis(t.Start)
	for _, tp := range t.Partitions { // sorted: one entry per topic
		if n := len(v.Topics); n == 0 || v.Topics[n-1].Topic != tp.Topic {
			vt := kmsg.NewTxnMetadataValueTopic()
			vt.Topic = tp.Topic
			v.Topics = append(v.Topics, vt)
		}
		vt := &v.Topics[len(v.Topics)-1]
		vt.Partitions = append(vt.Partitions, tp.Partition)
	}
	kv.Value = v.AppendTo(nil)
	return kv
}

func millis(t time.Time) int64 {
	if t.IsZero() {
		return -1
	}
	return t.UnixMilli()
}

func fromMillis(ms int64) time.Time {
	if ms < 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// Decode reads one record: the id and, unless it is a tombstone (dead),
// its state as a Transit.
func Decode(key, value []byte) (t Transit, dead bool, err error) {
	k := kmsg.NewTxnMetadataKey()
	if err := k.ReadFrom(key); err != nil {
		return Transit{}, false, fmt.Errorf("%w: key: %w", ErrBadRecord, err)
	}
	if k.Version != 0 {
		return Transit{}, false, fmt.Errorf("%w: key version %d", ErrBadRecord, k.Version)
	}
	t.ID = k.TransactionalID
	if value == nil {
		t.State = Dead
		return t, true, nil
	}
	v := kmsg.NewTxnMetadataValue()
	if err := v.ReadFrom(value); err != nil {
		return Transit{}, false, fmt.Errorf("%w: value of %q: %w", ErrBadRecord, t.ID, err)
	}
	st := State(v.State)
	if st < Empty || st > PrepareEpochFence {
		return Transit{}, false, fmt.Errorf("%w: %q in state %d", ErrBadRecord, t.ID, v.State)
	}
	t.ProducerID, t.ProducerEpoch, t.TimeoutMs, t.State = v.ProducerID, v.ProducerEpoch, v.TimeoutMillis, st
	t.LastProducerID, t.LastProducerEpoch = NoProducerID, NoProducerEpoch
	t.LastUpdate, t.Start = fromMillis(v.LastUpdateTimestamp), fromMillis(v.StartTimestamp)
	for _, vt := range v.Topics {
		for _, p := range vt.Partitions {
			t.Partitions = append(t.Partitions, kafka.TopicPartition{Topic: vt.Topic, Partition: p})
		}
	}
	sortTPs(t.Partitions)
	return t, false, nil
}
