package txn

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

func TestRecordRoundTrip(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_123)
	for _, tr := range []Transit{
		{ID: "a", ProducerID: 7, ProducerEpoch: 3, TimeoutMs: 60000, State: Empty, LastUpdate: now},
		{ID: "b", ProducerID: 8, ProducerEpoch: 0, TimeoutMs: 1000, State: Ongoing, Start: now, LastUpdate: now.Add(time.Second),
			Partitions: []kafka.TopicPartition{tpn("t", 0), tpn("t", 2), tpn("u", 1)}},
		{ID: "c", ProducerID: 9, ProducerEpoch: 1, TimeoutMs: 1000, State: PrepareCommit, Start: now, LastUpdate: now,
			Partitions: []kafka.TopicPartition{tpn("__consumer_offsets", 3)}},
		{ID: "d", ProducerID: 9, ProducerEpoch: 1, TimeoutMs: 1000, State: CompleteAbort, Start: now, LastUpdate: now},
	} {
		kv := Record(&tr)
		got, dead, err := Decode(kv.Key, kv.Value)
		if err != nil || dead {
			t.Fatalf("%s: %v dead=%v", tr.ID, err, dead)
		}
		tr.LastProducerID, tr.LastProducerEpoch = NoProducerID, NoProducerEpoch
		if !reflect.DeepEqual(got, tr) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, tr)
		}
	}
	// Kafka's layout: key version 0 then the id; value version 0 with
	// the state byte Kafka uses (PrepareCommit = 2).
	kv := Record(&Transit{ID: "c", ProducerID: 9, State: PrepareCommit, Partitions: []kafka.TopicPartition{tpn("t", 1)}})
	if !bytes.Equal(kv.Key, []byte{0, 0, 0, 1, 'c'}) {
		t.Errorf("key % x", kv.Key)
	}
	v := kmsg.NewTxnMetadataValue()
	if err := v.ReadFrom(kv.Value); err != nil || v.Version != 0 || v.State != 2 || v.StartTimestamp != -1 {
		t.Errorf("value %+v %v", v, err)
	}
}

func TestRecordTombstoneAndBad(t *testing.T) {
	kv := Record(&Transit{ID: "gone", State: Dead})
	if kv.Value != nil {
		t.Fatal("Dead is not a tombstone")
	}
	if got, dead, err := Decode(kv.Key, nil); err != nil || !dead || got.ID != "gone" {
		t.Fatalf("%+v %v %v", got, dead, err)
	}
	for _, bad := range [][2][]byte{{{0}, nil}, {{0, 1, 0, 1, 'x'}, nil}, {{0, 0, 0, 1, 'x'}, {0, 0, 1}}} {
		if _, _, err := Decode(bad[0], bad[1]); !errors.Is(err, ErrBadRecord) {
			t.Errorf("% x / % x: %v", bad[0], bad[1], err)
		}
	}
}

func tpn(topic string, p int32) kafka.TopicPartition {
	return kafka.TopicPartition{Topic: topic, Partition: p}
}
