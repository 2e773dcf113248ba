package api

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/replica"
)

// fetchAtEpoch is a sessionless v12 fetch of partition 0 of topic by
// replicaID, naming currentEpoch as the current leader epoch.
func (x *harness) fetchAtEpoch(topic string, replicaID, currentEpoch int32) kmsg.FetchResponseTopicPartition {
	x.t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.ReplicaID, req.MinBytes, req.MaxBytes = 12, replicaID, 1, 1<<20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = 1<<20, currentEpoch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := x.do(context.Background(), req).(*kmsg.FetchResponse)
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		x.t.Fatalf("fetch response %+v", resp)
	}
	return resp.Topics[0].Partitions[0]
}

// A broker that does not lead a partition checks the fetch's leader epoch
// first, as Kafka's Partition.getLocalLog: a follower still at an older
// epoch (its leader moved, its LeaderAndIsr not applied yet) is fenced, and
// then waits for that LeaderAndIsr; one at a newer epoch (this broker has
// not applied the LeaderAndIsr making it leader) learns the epoch is
// unknown, and retries soon. Only at the same epoch is it
// NOT_LEADER_OR_FOLLOWER.
func TestFetchFromNonLeaderChecksEpochFirst(t *testing.T) {
	x := newHarness(t)
	x.become("f", replica.Follower, 2, 5, []int32{1, 2, 3}, []int32{1, 2, 3}, 1)
	for _, c := range []struct {
		epoch int32
		want  int16
	}{
		{4, kerr.FencedLeaderEpoch.Code},
		{6, kerr.UnknownLeaderEpoch.Code},
		{5, kerr.NotLeaderForPartition.Code},
		{-1, kerr.NotLeaderForPartition.Code},
	} {
		if got := x.fetchAtEpoch("f", 3, c.epoch).ErrorCode; got != c.want {
			t.Errorf("fetch at epoch %d from a follower at 5: %v, want %v", c.epoch, kerr.ErrorForCode(got), kerr.ErrorForCode(c.want))
		}
	}
}

// A follower session reads the partition it listens to without looking it
// up, but not once that partition stopped being hosted: the partition
// hosted anew under the same name (here leading at a new epoch, with a new
// record) is read instead.
func TestFollowerSessionReadsReplacedPartition(t *testing.T) {
	x := newHarness(t)
	x.lead("a", 1, []int32{1, 2}, []int32{1, 2}, 1)
	ctx := context.Background()
	if sp := x.produce(ctx, "a", 1, 1000, "x"); sp.ErrorCode != 0 {
		t.Fatalf("produce: %+v", sp)
	}
	open := x.sessionFetch(ctx, 2, 0, 0, map[string]int64{"a": 0}, nil, 1<<20, 0)
	if open.ErrorCode != 0 || open.SessionID == 0 || listed(open)["a"] == 0 {
		t.Fatalf("opening fetch: err %d session %d %v", open.ErrorCode, open.SessionID, listed(open))
	}
	if err := x.rm.Remove(kafka.TopicPartition{Topic: "a", Partition: 0}, false); err != nil {
		t.Fatal(err)
	}
	x.lead("a", 2, []int32{1, 2}, []int32{1, 2}, 1)
	if sp := x.produce(ctx, "a", 1, 1000, "y"); sp.ErrorCode != 0 {
		t.Fatalf("produce to the new partition: %+v", sp)
	}
	r := x.sessionFetch(ctx, 2, open.SessionID, 1, map[string]int64{"a": 1}, nil, 1<<20, 0)
	if r.ErrorCode != 0 || len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
		t.Fatalf("incremental fetch: %+v", r)
	}
	if p := r.Topics[0].Partitions[0]; p.ErrorCode != 0 || len(p.RecordBatches) == 0 {
		t.Fatalf("incremental fetch after the partition was replaced: err %v, %d bytes", kerr.ErrorForCode(p.ErrorCode), len(p.RecordBatches))
	}
}
