package api

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func listOffset(x *harness, replicaID int32, topic string, ts int64) kmsg.ListOffsetsResponseTopicPartition {
	x.t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version, req.ReplicaID = 8, replicaID
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp = ts
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return x.do(context.Background(), req).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
}

// While a follower lags, consumers see latest = HW < LEO and lookups find
// nothing at or above the HW; brokers are bounded by the LEO.
func TestListOffsetsBoundedByHighWatermark(t *testing.T) {
	x := newHarness(t)
	p := x.lead("t", 1, []int32{1, 2}, []int32{1, 2}, 1)
	ctx := context.Background()
	x.produce(ctx, "t", 1, 1000, "a", "b") // offsets 0, 1; timestamps 1000, 1001
	x.fetch(ctx, 12, "t", 2, 1, 0)         // the follower holds offset 0 only
	if hw, leo := p.HighWatermark(), p.LogEndOffset(); hw != 1 || leo != 2 {
		t.Fatalf("hw %d leo %d", hw, leo)
	}
	check := func(what string, got kmsg.ListOffsetsResponseTopicPartition, off int64) {
		t.Helper()
		if got.ErrorCode != 0 || got.Offset != off {
			t.Errorf("%s: err %d offset %d, want %d", what, got.ErrorCode, got.Offset, off)
		}
	}
	check("latest", listOffset(x, -1, "t", -1), 1)
	check("timestamp of offset 0", listOffset(x, -1, "t", 1000), 0)
	check("timestamp of offset 1", listOffset(x, -1, "t", 1001), -1)
	check("max timestamp (offset 1)", listOffset(x, -1, "t", -3), -1)
	check("broker latest", listOffset(x, 2, "t", -1), 2)
	check("broker timestamp of offset 1", listOffset(x, 2, "t", 1001), 1)

	x.fetch(ctx, 12, "t", 2, 2, 0)
	check("latest after replication", listOffset(x, -1, "t", -1), 2)
	check("max timestamp after replication", listOffset(x, -1, "t", -3), 1)
}

// A new leader whose HW is below the start of its epoch answers consumers
// OFFSET_NOT_AVAILABLE for latest until the followers catch up (KIP-207).
func TestListOffsetsNewLeaderLaggingHW(t *testing.T) {
	x := newHarness(t)
	p := x.lead("t", 1, []int32{1, 2}, []int32{1, 2}, 1)
	ctx := context.Background()
	x.produce(ctx, "t", 1, 1000, "a", "b")
	x.lead("t", 2, []int32{1, 2}, []int32{1, 2}, 1) // epoch 2 starts at 2, HW 0
	if got := listOffset(x, -1, "t", -1); got.ErrorCode != kerr.OffsetNotAvailable.Code {
		t.Fatalf("latest with a lagging HW: %+v", got)
	}
	if got := listOffset(x, -1, "t", -2); got.ErrorCode != 0 || got.Offset != 0 {
		t.Fatalf("earliest with a lagging HW: %+v", got)
	}
	x.fetch(ctx, 12, "t", 2, 2, 0)
	if got := listOffset(x, -1, "t", -1); got.ErrorCode != 0 || got.Offset != 2 || p.HighWatermark() != 2 {
		t.Fatalf("latest once caught up: %+v (hw %d)", got, p.HighWatermark())
	}
}
