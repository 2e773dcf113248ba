package api

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/replica"
)

// A follower reads what is above the high watermark, a consumer does not;
// the follower's fetch offset moves the high watermark, after which the
// consumer reads too. v12 names the follower in ReplicaID, v15 in
// ReplicaState.
func TestFollowerFetchReadsAboveHighWatermark(t *testing.T) {
	x := newHarness(t)
	p := x.lead("t", 1, []int32{1, 2, 3}, []int32{1, 2, 3}, 1)
	ctx := context.Background()
	if sp := x.produce(ctx, "t", 1, 1000, "a", "b"); sp.ErrorCode != 0 {
		t.Fatalf("produce: %+v", sp)
	}
	if c := x.fetch(ctx, 12, "t", -1, 0, 0); c.ErrorCode != 0 || len(c.RecordBatches) != 0 || c.HighWatermark != 0 {
		t.Fatalf("consumer below the HW: err %d hw %d %d bytes", c.ErrorCode, c.HighWatermark, len(c.RecordBatches))
	}
	for _, v := range []int16{12, 15} {
		f := x.fetch(ctx, v, "t", 2, 0, 0)
		if f.ErrorCode != 0 || len(f.RecordBatches) == 0 || f.HighWatermark != 0 {
			t.Fatalf("v%d follower: err %d hw %d %d bytes", v, f.ErrorCode, f.HighWatermark, len(f.RecordBatches))
		}
	}
	x.fetch(ctx, 15, "t", 2, 2, 0)
	x.fetch(ctx, 12, "t", 3, 2, 0)
	if hw := p.HighWatermark(); hw != 2 {
		t.Fatalf("hw after both followers reached 2: %d", hw)
	}
	if c := x.fetch(ctx, 12, "t", -1, 0, 0); len(c.RecordBatches) == 0 || c.HighWatermark != 2 {
		t.Fatalf("consumer after replication: hw %d %d bytes", c.HighWatermark, len(c.RecordBatches))
	}
	// Past the log end: out of range, with the log start offset.
	if f := x.fetch(ctx, 12, "t", 2, 3, 0); f.ErrorCode != kerr.OffsetOutOfRange.Code || f.LogStartOffset != 0 {
		t.Fatalf("follower past the LEO: %+v", f)
	}
}

// A follower fetch at the log end waits (MinBytes/MaxWait) and is woken by
// the next append.
func TestFollowerFetchWokenByAppend(t *testing.T) {
	x := newHarness(t)
	p := x.lead("t", 1, []int32{1, 2}, []int32{1, 2}, 1)
	ctx := context.Background()
	got := make(chan kmsg.FetchResponseTopicPartition, 1)
	go func() { got <- x.fetch(ctx, 12, "t", 2, 0, 30000) }()
	select {
	case f := <-got:
		t.Fatalf("follower fetch with nothing to read answered at once: %+v", f)
	case <-time.After(100 * time.Millisecond):
	}
	if sp := x.produce(ctx, "t", 1, 1000, "a"); sp.ErrorCode != 0 {
		t.Fatalf("produce: %+v", sp)
	}
	select {
	case f := <-got:
		if f.ErrorCode != 0 || len(f.RecordBatches) == 0 {
			t.Fatalf("woken follower fetch: %+v", f)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("follower fetch not woken by the append")
	}
	if p.HighWatermark() != 0 {
		t.Fatalf("hw %d before the follower fetched past the record", p.HighWatermark())
	}
}

// Only the leader serves follower fetches, and only to its replicas.
func TestFollowerFetchErrors(t *testing.T) {
	x := newHarness(t)
	x.lead("t", 1, []int32{1, 2}, []int32{1, 2}, 1)
	x.become("f", replica.Follower, 2, 1, []int32{1, 2}, []int32{1, 2}, 1)
	ctx := context.Background()
	if f := x.fetch(ctx, 12, "t", 3, 0, 0); f.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("fetch by a non-replica: %+v", f)
	}
	if f := x.fetch(ctx, 12, "f", 2, 0, 0); f.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("follower fetch from a follower: %+v", f)
	}
}
