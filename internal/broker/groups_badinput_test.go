package broker

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/metadata"
)

// coordinatorReady asks FindCoordinator (batched, v4+) until the keys have
// a coordinator: the first ask creates __consumer_offsets.
func coordinatorReady(t testing.TB, cl *kgo.Client, keys ...string) *kmsg.FindCoordinatorResponse {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorKeys = keys
		resp, err := req.RequestWith(context.Background(), cl)
		if err == nil {
			ok := true
			for _, c := range resp.Coordinators {
				ok = ok && c.ErrorCode == 0
			}
			if ok && len(resp.Coordinators) == len(keys) {
				return resp
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no coordinator: %+v %v", resp, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Bad group input gets Kafka's codes and leaves the group alone; the
// offsets topic is internal: listed so, not writable, not deletable.
func TestGroupBadInput(t *testing.T) {
	b := startBroker(t, t.TempDir(), groupProps)
	cl := newClient(t, b)
	createTopic(t, cl, "bt", 2, nil)
	ctx := context.Background()
	coordinatorReady(t, cl, "g1", "g2", "g3")

	td, err := kadm.NewClient(cl).ListTopicsWithInternal(ctx, "__consumer_offsets")
	if err != nil || !td["__consumer_offsets"].IsInternal || len(td["__consumer_offsets"].Partitions) != 50 {
		t.Fatalf("metadata of __consumer_offsets: %+v %v", td["__consumer_offsets"], err)
	}
	prod := kmsg.NewPtrProduceRequest()
	prod.Version, prod.Acks, prod.TimeoutMillis = 7, 1, 5000
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = "__consumer_offsets"
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Records = recordBatch("x")
	pt.Partitions = append(pt.Partitions, pp)
	prod.Topics = append(prod.Topics, pt)
	if r := rawRequest(t, b.Addr().String(), prod).(*kmsg.ProduceResponse); r.Topics[0].Partitions[0].ErrorCode != kerr.InvalidTopicException.Code {
		t.Fatalf("produce to __consumer_offsets: %v", kerr.ErrorForCode(r.Topics[0].Partitions[0].ErrorCode))
	}
	dr, err := kadm.NewClient(cl).DeleteTopics(ctx, "__consumer_offsets")
	if err != nil || !errors.Is(dr["__consumer_offsets"].Err, kerr.InvalidTopicException) {
		t.Fatalf("delete __consumer_offsets: %+v %v", dr, err)
	}

	join := kmsg.NewPtrJoinGroupRequest()
	join.SessionTimeoutMillis, join.RebalanceTimeoutMillis, join.ProtocolType = 10000, 10000, "consumer"
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range"}}
	if r, err := join.RequestWith(ctx, cl); err != nil || r.ErrorCode != kerr.InvalidGroupID.Code {
		t.Fatalf("empty group id: %+v %v", r, err)
	}
	join.Group, join.SessionTimeoutMillis = "g1", 10
	if r, err := join.RequestWith(ctx, cl); err != nil || r.ErrorCode != kerr.InvalidSessionTimeout.Code {
		t.Fatalf("session timeout: %+v %v", r, err)
	}
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.MemberID, hb.Generation = "g1", "nobody", 1
	if r, err := hb.RequestWith(ctx, cl); err != nil || r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("heartbeat of unknown member: %+v %v", r, err)
	}

	fetch := kmsg.NewPtrOffsetFetchRequest()
	fetch.Group = "g2"
	fetch.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "bt", Partitions: []int32{0, 1}}}
	fr, err := fetch.RequestWith(ctx, cl)
	if err != nil || fr.ErrorCode != 0 || len(fr.Topics) != 1 || fr.Topics[0].Partitions[0].Offset != -1 || fr.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("fetch with nothing committed: %+v %v", fr, err)
	}

	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Group, commit.Generation = "g3", -1
	big := strings.Repeat("m", 4097)
	commit.Topics = []kmsg.OffsetCommitRequestTopic{
		{Topic: "bt", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 7}, {Partition: 1, Offset: 1, Metadata: &big}}},
		{Topic: "nope", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1}}},
	}
	cr, err := commit.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	codes := []int16{cr.Topics[0].Partitions[0].ErrorCode, cr.Topics[0].Partitions[1].ErrorCode, cr.Topics[1].Partitions[0].ErrorCode}
	if codes[0] != 0 || codes[1] != kerr.OffsetMetadataTooLarge.Code || codes[2] != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("commit codes %v", codes)
	}
	os, err := kadm.NewClient(cl).FetchOffsets(ctx, "g3")
	if o, _ := os.Lookup("bt", 0); err != nil || o.At != 7 {
		t.Fatalf("committed: %+v %v", os, err)
	}
	if _, ok := os.Lookup("bt", 1); ok {
		t.Fatal("the oversized metadata's commit was stored")
	}
	// A commit with a generation for a group that does not exist.
	commit.Group, commit.Generation, commit.MemberID = "g-none", 3, "m"
	if cr, _ := commit.RequestWith(ctx, cl); cr.Topics[0].Partitions[0].ErrorCode != kerr.IllegalGeneration.Code {
		t.Fatalf("generation for an unknown group: %v", kerr.ErrorForCode(cr.Topics[0].Partitions[0].ErrorCode))
	}
}

// With fewer live brokers than offsets.topic.replication.factor, and the
// broker not on its own embedded store, __consumer_offsets is not created
// and FindCoordinator answers COORDINATOR_NOT_AVAILABLE, as Kafka.
func TestOffsetsTopicNeedsEnoughBrokers(t *testing.T) {
	brokers := startCluster(t, 1, map[string]string{"offsets.topic.replication.factor": "3"})
	cl := newClient(t, brokers[0])
	for range 3 {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorKeys = []string{"g"}
		resp, err := req.RequestWith(context.Background(), cl)
		if err != nil || resp.Coordinators[0].ErrorCode != kerr.CoordinatorNotAvailable.Code {
			t.Fatalf("find coordinator: %+v %v", resp, err)
		}
	}
	// AutoCreateTopic writes the topic's key synchronously: none was written.
	if _, found, err := brokers[0].store.Get(context.Background(), metadata.TopicKey("__consumer_offsets")); err != nil || found {
		t.Fatalf("__consumer_offsets created on 1 broker with factor 3: %v", err)
	}
}
