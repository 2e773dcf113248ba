package api

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/replica"
)

func offsetForEpoch(x *harness, version int16, replicaID int32, topic string, partition, current, epoch int32) kmsg.OffsetForLeaderEpochResponseTopicPartition {
	x.t.Helper()
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.Version, req.ReplicaID = version, replicaID
	rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
	rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = partition, current, epoch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := x.do(context.Background(), req).(*kmsg.OffsetForLeaderEpochResponse)
	return resp.Topics[0].Partitions[0]
}

// The leader answers from its epoch cache: epochs 1 (offsets 0-1) and 3
// (offset 2 on).
func TestOffsetForLeaderEpoch(t *testing.T) {
	x := newHarness(t)
	x.lead("t", 1, []int32{1}, []int32{1}, 1)
	ctx := context.Background()
	x.produce(ctx, "t", 1, 1000, "a", "b")
	x.lead("t", 3, []int32{1}, []int32{1}, 1)
	x.produce(ctx, "t", 1, 1000, "c")

	for _, c := range []struct {
		ask, epoch int32
		end        int64
	}{
		{3, 3, 3},   // the latest epoch ends at the LEO
		{2, 1, 2},   // unknown epoch: the largest below it, ending where 3 starts
		{1, 1, 2},   //
		{0, 0, 0},   // before the first epoch: itself, ending where 1 starts
		{5, -1, -1}, // newer than any: undefined
		{-1, -1, -1},
	} {
		got := offsetForEpoch(x, 4, -1, "t", 0, 3, c.ask)
		if got.ErrorCode != 0 || got.LeaderEpoch != c.epoch || got.EndOffset != c.end {
			t.Errorf("epoch %d: err %d (%d, %d), want (%d, %d)", c.ask, got.ErrorCode, got.LeaderEpoch, got.EndOffset, c.epoch, c.end)
		}
	}
	// v0 has no leader epoch in the response, only the end offset.
	if got := offsetForEpoch(x, 0, -2, "t", 0, -1, 1); got.ErrorCode != 0 || got.EndOffset != 2 {
		t.Errorf("v0: %+v", got)
	}
}

func TestOffsetForLeaderEpochErrors(t *testing.T) {
	x := newHarness(t)
	x.lead("t", 3, []int32{1, 2}, []int32{1, 2}, 1)
	x.become("f", replica.Follower, 2, 3, []int32{1, 2}, []int32{1, 2}, 1)
	for _, c := range []struct {
		name             string
		replica          int32
		topic            string
		part, cur, epoch int32
		code             int16
	}{
		{"unknown topic", -1, "nope", 0, -1, 3, kerr.UnknownTopicOrPartition.Code},
		{"unknown partition", -1, "t", 5, -1, 3, kerr.UnknownTopicOrPartition.Code},
		{"partition hosted elsewhere", -1, "t", 1, -1, 3, kerr.NotLeaderForPartition.Code},
		{"fenced", -1, "t", 0, 2, 3, kerr.FencedLeaderEpoch.Code},
		{"newer current epoch", -1, "t", 0, 4, 3, kerr.UnknownLeaderEpoch.Code},
		{"follower asked by a follower", 2, "f", 0, 3, 3, kerr.NotLeaderForPartition.Code},
		{"follower asked by a consumer", -1, "f", 0, -1, 3, kerr.NotLeaderForPartition.Code},
		{"follower asked for debugging", -2, "f", 0, 3, 3, 0},
		{"leader", 2, "t", 0, 3, 3, 0},
	} {
		got := offsetForEpoch(x, 3, c.replica, c.topic, c.part, c.cur, c.epoch)
		if got.ErrorCode != c.code {
			t.Errorf("%s: code %d, want %d", c.name, got.ErrorCode, c.code)
		}
		if c.code != 0 && (got.LeaderEpoch != -1 || got.EndOffset != -1) {
			t.Errorf("%s: error with (%d, %d)", c.name, got.LeaderEpoch, got.EndOffset)
		}
	}
}
