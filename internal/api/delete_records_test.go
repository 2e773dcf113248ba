package api

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// deleteRecords asks to delete partition 0 of topic below offset.
func (x *harness) deleteRecords(ctx context.Context, topic string, offset int64, timeoutMillis int32) kmsg.DeleteRecordsResponseTopicPartition {
	x.t.Helper()
	req := kmsg.NewPtrDeleteRecordsRequest()
	req.Version, req.TimeoutMillis = 2, timeoutMillis
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewDeleteRecordsRequestTopicPartition()
	rp.Offset = offset
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := x.do(ctx, req)
	if resp == nil {
		x.t.Error("delete records: no response")
		return kmsg.DeleteRecordsResponseTopicPartition{ErrorCode: -2}
	}
	return resp.(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0]
}

// followerFetch is follower 2's fetch of partition 0 of topic at offset,
// reporting its log start offset, answered at once.
func (x *harness) followerFetch(ctx context.Context, topic string, offset, logStart int64) {
	x.t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.ReplicaID, req.MaxBytes = 12, 2, 1<<20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset, rp.LogStartOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = offset, logStart, 1<<20, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := x.do(ctx, req).(*kmsg.FetchResponse)
	if resp.ErrorCode != 0 || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		x.t.Fatalf("follower fetch: %+v", resp)
	}
}

// DeleteRecords waits for the low watermark, the least log start offset over
// the ISR as the followers report it in their fetches (Kafka's
// DelayedDeleteRecords): with the follower silent it times out with
// REQUEST_TIMED_OUT, the leader's own log start raised all the same; the
// follower's fetch reporting the new log start completes a waiting one.
func TestDeleteRecordsWaitsForFollowerLogStart(t *testing.T) {
	x := newHarness(t)
	p := x.lead("t", 1, []int32{1, 2}, []int32{1, 2}, 1)
	ctx := context.Background()
	if sp := x.produce(ctx, "t", 1, 1000, "a", "b", "c"); sp.ErrorCode != 0 {
		t.Fatalf("produce: %+v", sp)
	}
	x.followerFetch(ctx, "t", 3, 0) // the follower holds all three: HW 3
	if hw := p.HighWatermark(); hw != 3 {
		t.Fatalf("hw %d", hw)
	}

	if sp := x.deleteRecords(ctx, "t", 2, 100); sp.ErrorCode != kerr.RequestTimedOut.Code {
		t.Fatalf("with a silent follower: %+v", sp)
	}
	if start := p.LogStartOffset(); start != 2 {
		t.Fatalf("leader's log start %d", start)
	}

	done := make(chan kmsg.DeleteRecordsResponseTopicPartition, 1)
	go func() { done <- x.deleteRecords(ctx, "t", 2, 30000) }()
	select {
	case sp := <-done:
		t.Fatalf("answered before the follower reported its log start: %+v", sp)
	case <-time.After(100 * time.Millisecond):
	}
	x.followerFetch(ctx, "t", 3, 2)
	select {
	case sp := <-done:
		if sp.ErrorCode != 0 || sp.LowWatermark != 2 {
			t.Fatalf("delete records: %+v", sp)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("delete records not completed by the follower's fetch")
	}
}
