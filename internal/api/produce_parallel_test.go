package api

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/record/recordtest"
	"github.com/samsa-kafka/samsa/internal/replica"
)

// A request of parallelAppendBytes or more over several partitions is
// appended on several goroutines (appendAll): each partition gets its own
// answer in the request's order, a refused partition (hosted elsewhere,
// unknown, a corrupt batch, a follower here) refuses only itself, the
// others are appended whole, and acks=-1 waits for each appended one. Run
// under -race, this also checks the goroutines share nothing unguarded.
func TestProduceLargeRequestInParallel(t *testing.T) {
	x := newHarness(t)
	ctx := context.Background()
	const led = 6
	parts := map[string]*replica.Partition{}
	for i := range led {
		topic := fmt.Sprintf("t%d", i)
		parts[topic] = x.lead(topic, 1, []int32{1}, []int32{1}, 1)
	}
	x.become("f", replica.Follower, 2, 1, []int32{1, 2}, []int32{1, 2}, 1)
	vals := make([]string, 256) // 256 KiB a batch: 1.5 MiB over the led partitions
	for i := range vals {
		vals[i] = strings.Repeat(string(rune('a'+i%26)), 1024)
	}
	batch := func(topic string, partition int32, corrupt bool) kmsg.ProduceRequestTopic {
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition, rp.Records = partition, recordtest.Values(1000, vals...)
		if corrupt {
			rp.Records[len(rp.Records)-1] ^= 0xff // after the CRC: CORRUPT_MESSAGE
		}
		rt.Partitions = append(rt.Partitions, rp)
		return rt
	}
	for round, acks := range []int16{1, -1} {
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks, req.TimeoutMillis = 9, acks, 10_000
		for i := range led {
			req.Topics = append(req.Topics, batch(fmt.Sprintf("t%d", i), 0, i == 3))
		}
		req.Topics = append(req.Topics, batch("t0", 1, false), batch("nope", 0, false), batch("f", 0, false))
		resp := x.do(ctx, req).(*kmsg.ProduceResponse)
		if len(resp.Topics) != len(req.Topics) {
			t.Fatalf("acks=%d: %d topics answered, want %d", acks, len(resp.Topics), len(req.Topics))
		}
		for i, st := range resp.Topics {
			if st.Topic != req.Topics[i].Topic || len(st.Partitions) != 1 || st.Partitions[0].Partition != req.Topics[i].Partitions[0].Partition {
				t.Fatalf("acks=%d: answer %d is %s/%+v, want %s/%d", acks, i, st.Topic, st.Partitions, req.Topics[i].Topic, req.Topics[i].Partitions[0].Partition)
			}
			sp := st.Partitions[0]
			want := int16(0)
			switch {
			case st.Topic == "t3":
				want = kerr.CorruptMessage.Code
			case st.Topic == "t0" && sp.Partition == 1, st.Topic == "f":
				want = kerr.NotLeaderForPartition.Code
			case st.Topic == "nope":
				want = kerr.UnknownTopicOrPartition.Code
			}
			if sp.ErrorCode != want {
				t.Errorf("acks=%d: %s/%d answered %v, want %v", acks, st.Topic, sp.Partition, kerr.ErrorForCode(sp.ErrorCode), kerr.ErrorForCode(want))
			}
			if want == 0 && sp.BaseOffset != int64(round*len(vals)) {
				t.Errorf("acks=%d: %s/%d base offset %d, want %d", acks, st.Topic, sp.Partition, sp.BaseOffset, round*len(vals))
			}
		}
	}
	for topic, p := range parts {
		want := int64(2 * len(vals))
		if topic == "t3" {
			want = 0
		}
		if leo := p.LogEndOffset(); leo != want {
			t.Errorf("%s: log end offset %d, want %d", topic, leo, want)
		}
	}
	// Every appended batch reads back whole: the second one of t5.
	got := x.fetch(ctx, 12, "t5", -1, int64(len(vals)), 0)
	if got.ErrorCode != 0 || len(got.RecordBatches) != len(recordtest.Values(1000, vals...)) {
		t.Errorf("t5 read back: %v, %d bytes", kerr.ErrorForCode(got.ErrorCode), len(got.RecordBatches))
	}
}

// A large request naming a partition more than once is appended in request
// order: an idempotent producer's batches, one after the other in
// sequence, each get the next offsets (appended in parallel, a later batch
// could go first and be refused as out of order).
func TestProduceLargeRequestRepeatingAPartition(t *testing.T) {
	x := newHarness(t)
	x.lead("t", 1, []int32{1}, []int32{1}, 1)
	vals := make([]string, 128) // 128 KiB a batch, 2 MiB in all
	for i := range vals {
		vals[i] = strings.Repeat("v", 1024)
	}
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 9, 1, 10_000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "t"
	const batches = 16
	for i := range batches {
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = idemBatch(7, 0, int32(i*len(vals)), vals...)
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp := x.do(context.Background(), req).(*kmsg.ProduceResponse)
	for i, sp := range resp.Topics[0].Partitions {
		if sp.ErrorCode != 0 || sp.BaseOffset != int64(i*len(vals)) {
			t.Errorf("batch %d: %v at offset %d, want offset %d", i, kerr.ErrorForCode(sp.ErrorCode), sp.BaseOffset, i*len(vals))
		}
	}
}
