package api

import (
	"context"
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/record/recordtest"
	"github.com/samsa-kafka/samsa/internal/replica"
)

// idemBatch is one batch of vals of producer pid at epoch and sequence seq.
func idemBatch(pid int64, epoch int16, seq int32, vals ...string) []byte {
	return recordtest.Idempotent(recordtest.Values(1000, vals...), pid, epoch, seq)
}

// produceBatches sends one batch per topic (partition 0 each).
func (x *harness) produceBatches(acks int16, timeoutMillis int32, batches map[string][]byte) map[string]kmsg.ProduceResponseTopicPartition {
	x.t.Helper()
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 9, acks, timeoutMillis
	for topic, b := range batches {
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = b
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
	}
	resp := x.do(context.Background(), req).(*kmsg.ProduceResponse)
	out := map[string]kmsg.ProduceResponseTopicPartition{}
	for _, t := range resp.Topics {
		out[t.Topic] = t.Partitions[0]
	}
	return out
}

func (x *harness) produceOne(topic string, acks int16, timeoutMillis int32, b []byte) kmsg.ProduceResponseTopicPartition {
	x.t.Helper()
	return x.produceBatches(acks, timeoutMillis, map[string][]byte{topic: b})[topic]
}

func TestProduceIdempotentRetryGetsOriginalOffset(t *testing.T) {
	x := newHarness(t)
	p := x.lead("t", 1, []int32{1}, []int32{1}, 1)
	x.produce(context.Background(), "t", 1, 1000, "plain")
	first := x.produceOne("t", -1, 1000, idemBatch(5, 0, 0, "a", "b"))
	again := x.produceOne("t", -1, 1000, idemBatch(5, 0, 0, "a", "b"))
	if first.ErrorCode != 0 || first.BaseOffset != 1 || again.ErrorCode != 0 || again.BaseOffset != 1 {
		t.Fatalf("first %+v, retry %+v: want both at 1", first, again)
	}
	if leo := p.LogEndOffset(); leo != 3 {
		t.Fatalf("LEO %d after a retry, want 3", leo)
	}
}

// Each bad batch gets its code; the other partition of the request is
// appended all the same.
func TestProduceIdempotentErrors(t *testing.T) {
	x := newHarness(t)
	x.h.ProducerIDs = &fakeProducerIDs{next: 100} // ids 0..99 were issued
	p := x.lead("t", 1, []int32{1}, []int32{1}, 1)
	x.lead("u", 1, []int32{1}, []int32{1}, 1)
	if sp := x.produceOne("t", 1, 1000, idemBatch(5, 3, 0, "a")); sp.ErrorCode != 0 {
		t.Fatalf("first batch: %+v", sp)
	}
	wrongCount := idemBatch(5, 3, 1, "a", "b")
	binary.BigEndian.PutUint32(wrongCount[57:], 3)
	binary.BigEndian.PutUint32(wrongCount[17:], crc32.Checksum(wrongCount[21:], crc32.MakeTable(crc32.Castagnoli)))
	cases := []struct {
		name  string
		batch []byte
		code  int16
	}{
		{"gap", idemBatch(5, 3, 2, "a"), kerr.OutOfOrderSequenceNumber.Code},
		{"old epoch", idemBatch(5, 2, 1, "a"), kerr.InvalidProducerEpoch.Code},
		{"new epoch not at 0", idemBatch(5, 4, 1, "a"), kerr.OutOfOrderSequenceNumber.Code},
		{"negative sequence", idemBatch(5, 3, -1, "a"), kerr.InvalidRecord.Code},
		{"negative epoch", idemBatch(5, -1, 1, "a"), kerr.InvalidRecord.Code},
		{"record count not the sequence range", wrongCount, kerr.InvalidRecord.Code},
		{"producer id never issued", idemBatch(100, 0, 0, "a"), kerr.UnknownProducerID.Code},
	}
	for i, c := range cases {
		res := x.produceBatches(1, 1000, map[string][]byte{"t": c.batch, "u": recordtest.Values(1000, "ok")})
		if res["t"].ErrorCode != c.code || res["t"].BaseOffset != -1 {
			t.Errorf("%s: %+v, want code %d", c.name, res["t"], c.code)
		}
		if res["u"].ErrorCode != 0 || res["u"].BaseOffset != int64(i) {
			t.Errorf("%s: the other partition got %+v", c.name, res["u"])
		}
	}
	if leo := p.LogEndOffset(); leo != 1 {
		t.Fatalf("refused batches appended: LEO %d", leo)
	}
	if sp := x.produceOne("t", 1, 1000, idemBatch(5, 3, 1, "b")); sp.ErrorCode != 0 || sp.BaseOffset != 1 {
		t.Fatalf("the next sequence after the refusals: %+v", sp)
	}
}

// A retry with acks=-1 waits until the high watermark covers the original
// batch, which an acks=1 produce appended.
func TestProduceIdempotentRetryWaitsForOriginal(t *testing.T) {
	x := newHarness(t)
	x.lead("t", 1, []int32{1, 2}, []int32{1, 2}, 1)
	if sp := x.produceOne("t", 1, 1000, idemBatch(5, 0, 0, "a", "b")); sp.ErrorCode != 0 {
		t.Fatalf("acks=1: %+v", sp)
	}
	if sp := x.produceOne("t", -1, 100, idemBatch(5, 0, 0, "a", "b")); sp.ErrorCode != kerr.RequestTimedOut.Code || sp.BaseOffset != 0 {
		t.Fatalf("retry before the follower has it: %+v, want REQUEST_TIMED_OUT at 0", sp)
	}
	ctx := context.Background()
	x.fetch(ctx, 12, "t", 2, 0, 0)
	x.fetch(ctx, 12, "t", 2, 2, 0) // the follower has offsets 0..1: HW 2
	if sp := x.produceOne("t", -1, 30000, idemBatch(5, 0, 0, "a", "b")); sp.ErrorCode != 0 || sp.BaseOffset != 0 {
		t.Fatalf("retry once replicated: %+v", sp)
	}
}

func TestDescribeProducers(t *testing.T) {
	x := newHarness(t)
	x.lead("t", 1, []int32{1}, []int32{1}, 1)
	x.become("f", replica.Follower, 2, 1, []int32{1, 2}, []int32{1, 2}, 1)
	x.produceOne("t", 1, 1000, idemBatch(5, 2, 0, "a", "b"))
	req := kmsg.NewPtrDescribeProducersRequest()
	for _, topic := range []string{"t", "f", "nope"} {
		rt := kmsg.NewDescribeProducersRequestTopic()
		rt.Topic, rt.Partitions = topic, []int32{0}
		req.Topics = append(req.Topics, rt)
	}
	resp := x.do(context.Background(), req).(*kmsg.DescribeProducersResponse)
	got := map[string]kmsg.DescribeProducersResponseTopicPartition{}
	for _, rt := range resp.Topics {
		got[rt.Topic] = rt.Partitions[0]
	}
	tp := got["t"]
	if tp.ErrorCode != 0 || len(tp.ActiveProducers) != 1 {
		t.Fatalf("leader: %+v", tp)
	}
	if ap := tp.ActiveProducers[0]; ap.ProducerID != 5 || ap.ProducerEpoch != 2 || ap.LastSequence != 1 ||
		ap.LastTimestamp != 1001 || ap.CurrentTxnStartOffset != -1 {
		t.Fatalf("producer: %+v", ap)
	}
	if c := got["f"].ErrorCode; c != kerr.NotLeaderForPartition.Code {
		t.Errorf("follower: code %d", c)
	}
	if c := got["nope"].ErrorCode; c != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("unknown topic: code %d", c)
	}
}
