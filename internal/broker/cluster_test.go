package broker

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// An RF=3 topic on three brokers: leaders spread over the brokers, every
// broker hosts every partition, and only the leader serves clients —
// followers answer NOT_LEADER_OR_FOLLOWER to Produce, Fetch and ListOffsets.
func TestReplicatedTopicLeadersAndFollowers(t *testing.T) {
	brokers := startCluster(t, 3, nil)
	ctrl := controllerOf(t, brokers)
	cl := newClient(t, ctrl)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := kadm.NewClient(cl).CreateTopic(ctx, 6, 3, nil, "spread")
	if err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	td, err := kadm.NewClient(newClient(t, brokers[0])).ListTopics(ctx, "spread")
	if err != nil {
		t.Fatal(err)
	}
	leaders := map[int32]int{}
	for _, p := range td["spread"].Partitions {
		leaders[p.Leader]++
		if len(p.Replicas) != 3 || len(p.ISR) != 3 {
			t.Fatalf("partition %d: replicas %v isr %v", p.Partition, p.Replicas, p.ISR)
		}
	}
	if len(leaders) != 3 || leaders[0] != 2 || leaders[1] != 2 || leaders[2] != 2 {
		t.Fatalf("leaders not spread: %v", leaders)
	}
	p0 := td["spread"].Partitions[0]
	var follower *Broker
	for _, b := range brokers {
		if b.NodeID() != p0.Leader {
			follower = b
			break
		}
		if hosted := b.replicas.Get(tpOf("spread", 0)); hosted == nil {
			t.Fatalf("broker %d does not host its replica", b.NodeID())
		}
	}
	// The answer to CreateTopics does not wait for every broker's
	// LeaderAndIsr: a follower not yet told answers UNKNOWN_TOPIC_OR_PARTITION.
	for follower.replicas.Get(tpOf("spread", 0)) == nil {
		if ctx.Err() != nil {
			t.Fatalf("broker %d never hosted its replica of spread-0", follower.NodeID())
		}
		time.Sleep(10 * time.Millisecond)
	}

	produce := kmsg.NewPtrProduceRequest()
	produce.Acks, produce.TimeoutMillis = 1, 5000
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = "spread"
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Records = recordBatch("x")
	pt.Partitions = append(pt.Partitions, pp)
	produce.Topics = append(produce.Topics, pt)
	produce.Version = 9
	if code := rawRequest(t, follower.Addr().String(), produce).(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode; code != kerr.NotLeaderForPartition.Code {
		t.Fatalf("produce to follower: %v", kerr.ErrorForCode(code))
	}
	fetch := kmsg.NewPtrFetchRequest()
	fetch.Version, fetch.SessionEpoch = 12, -1
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "spread"
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.PartitionMaxBytes, fp.CurrentLeaderEpoch = 1<<20, -1
	ft.Partitions = append(ft.Partitions, fp)
	fetch.Topics = append(fetch.Topics, ft)
	if code := rawRequest(t, follower.Addr().String(), fetch).(*kmsg.FetchResponse).Topics[0].Partitions[0].ErrorCode; code != kerr.NotLeaderForPartition.Code {
		t.Fatalf("fetch from follower: %v", kerr.ErrorForCode(code))
	}
	lo := kmsg.NewPtrListOffsetsRequest()
	lo.Version = 5
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = "spread"
	lp := kmsg.NewListOffsetsRequestTopicPartition()
	lp.Timestamp = -1
	lt.Partitions = append(lt.Partitions, lp)
	lo.Topics = append(lo.Topics, lt)
	if code := rawRequest(t, follower.Addr().String(), lo).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0].ErrorCode; code != kerr.NotLeaderForPartition.Code {
		t.Fatalf("list offsets on follower: %v", kerr.ErrorForCode(code))
	}
	// Through the leader (the client routes there) it all works.
	pc := newClient(t, ctrl, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := pc.ProduceSync(ctx, &kgo.Record{Topic: "spread", Partition: 0, Value: []byte("ok")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// With broker.rack set, an RF=2 topic on brokers in two racks puts each
// partition's replicas on both racks.
func TestRackAwareCreateTopic(t *testing.T) {
	brokers := startClusterRacks(t, []string{"r1", "r1", "r2", "r2"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := newClient(t, controllerOf(t, brokers))
	res, err := kadm.NewClient(cl).CreateTopic(ctx, 12, 2, nil, "racked")
	if err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	rackOf := map[int32]string{0: "r1", 1: "r1", 2: "r2", 3: "r2"}
	td, err := kadm.NewClient(newClient(t, brokers[0])).ListTopics(ctx, "racked")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range td["racked"].Partitions {
		if len(p.Replicas) != 2 || rackOf[p.Replicas[0]] == rackOf[p.Replicas[1]] {
			t.Fatalf("partition %d replicas %v not spread over racks", p.Partition, p.Replicas)
		}
	}
}
