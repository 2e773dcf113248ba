package main

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/metastore"
	"github.com/samsa-kafka/samsa/internal/metastore/memstore"
	"github.com/samsa-kafka/samsa/internal/wire"
)

func TestLayoutLoadsEveryPartitionOnline(t *testing.T) {
	for _, tc := range []struct{ partitions, perTopic, rf, brokers, topics int }{
		{10, 4, 3, 3, 3},
		{1000, 1000, 3, 3, 1},
		{7, 10, 1, 2, 1},
	} {
		l := layout{partitions: tc.partitions, perTopic: tc.perTopic, rf: tc.rf, brokers: tc.brokers}
		s := memstore.New()
		if err := load(context.Background(), s, l, 3); err != nil {
			t.Fatal(err)
		}
		topics, _, err := metadata.New(s).LoadTopics(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(topics) != tc.topics {
			t.Fatalf("%+v: %d topics, want %d", tc, len(topics), tc.topics)
		}
		n := 0
		for name, ts := range topics {
			for p, replicas := range ts.Assignment.Partitions {
				st, ok := ts.States[p]
				if !ok || len(replicas) != tc.rf || st.Leader != replicas[0] || len(st.ISR) != tc.rf || st.ControllerEpoch != 1 {
					t.Fatalf("%s-%d: replicas %v state %+v (found %v)", name, p, replicas, st, ok)
				}
				for _, r := range replicas {
					if r < 1 || int(r) > tc.brokers {
						t.Fatalf("%s-%d: replica %d outside 1..%d", name, p, r, tc.brokers)
					}
				}
				n++
			}
		}
		if n != tc.partitions {
			t.Fatalf("%+v: %d partitions, want %d", tc, n, tc.partitions)
		}
	}
}

// byteLimited refuses, as ZooKeeper's jute.maxbuffer does, transactions
// whose values exceed max bytes, and records the keys of each one it takes.
type byteLimited struct {
	metastore.Store
	max  int
	txns [][]string
}

func (s *byteLimited) Txn(ctx context.Context, cmps []metastore.Cmp, ops []metastore.Op) (metastore.TxnResult, error) {
	n := 0
	var keys []string
	for _, op := range ops {
		n += len(op.Value)
		keys = append(keys, op.Key)
	}
	if n > s.max {
		return metastore.TxnResult{}, fmt.Errorf("%d bytes: %w", n, metastore.ErrTooManyOps)
	}
	s.txns = append(s.txns, keys)
	return s.Store.Txn(ctx, cmps, ops)
}

func TestLoadSplitsTransactionsTheStoreRefuses(t *testing.T) {
	l := layout{partitions: 2000, perTopic: 2000, rf: 3, brokers: 3}
	ops := l.topicOps(0) // 8 state chunks, then the assignment
	largest := 0
	for _, op := range ops {
		largest = max(largest, len(op.Value))
	}
	s := &byteLimited{Store: memstore.New(), max: largest}
	if err := writeOps(context.Background(), s, ops); err != nil {
		t.Fatal(err)
	}
	if len(s.txns) < 3 {
		t.Errorf("%d values written in %d transactions of at most %d bytes (the largest value): %v", len(ops), len(s.txns), largest, s.txns)
	}
	var order []string
	for _, keys := range s.txns {
		order = append(order, keys...)
	}
	want := make([]string, len(ops))
	for i, op := range ops {
		want[i] = op.Key
	}
	if !slices.Equal(order, want) {
		t.Fatalf("written in order %v, want %v", order, want)
	}
	s.max = 10 // smaller than any one value: no split helps
	if err := writeOps(context.Background(), s, l.topicOps(1)); err == nil {
		t.Fatal("a value larger than the limit was written")
	}
}

func TestParseStores(t *testing.T) {
	for in, want := range map[string][]string{"etcd": {"etcd"}, "zookeeper, etcd": {"zookeeper", "etcd"}, "etcd,zookeeper": {"etcd", "zookeeper"}} {
		if got, err := parseStores(in); err != nil || !slices.Equal(got, want) {
			t.Errorf("parseStores(%q) = %v %v, want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "zk", "etcd,etcd"} {
		if got, err := parseStores(in); err == nil {
			t.Errorf("parseStores(%q) = %v, want an error", in, got)
		}
	}
}

func TestLoadStopsOnStoreError(t *testing.T) {
	s := memstore.New()
	s.Close()
	err := load(context.Background(), s, layout{partitions: 50, perTopic: 5, rf: 1, brokers: 1}, 4)
	if err == nil {
		t.Fatal("load into a closed store succeeded")
	}
}

func TestStandInRecordsFirstUpdateMetadataPerEpoch(t *testing.T) {
	notify := make(chan struct{}, 1)
	s := &standIn{id: 1, want: 5, firstUM: map[int32]umArrival{}, fullUM: map[int32]umArrival{}, notify: notify}
	um := func(epoch int32, parts int) {
		req := kmsg.NewPtrUpdateMetadataRequest()
		req.ControllerEpoch = epoch
		ts := kmsg.NewUpdateMetadataRequestTopicState()
		ts.PartitionStates = make([]kmsg.UpdateMetadataRequestTopicPartition, parts)
		req.TopicStates = append(req.TopicStates, ts)
		resp, err := s.Handle(context.Background(), nil, wire.RequestHeader{Key: int16(kmsg.UpdateMetadata), Version: 7}, req)
		if err != nil || resp.(*kmsg.UpdateMetadataResponse).ErrorCode != 0 {
			t.Fatalf("UpdateMetadata: %v %v", resp, err)
		}
	}
	um(1, 0) // the first of an epoch: live brokers only
	um(1, 5)
	um(1, 0) // a later, empty one of the same epoch does not count
	if a, ok := s.arrival(1, false); !ok || a.partitions != 0 {
		t.Fatalf("epoch 1 first: %+v %v", a, ok)
	}
	if a, ok := s.arrival(1, true); !ok || a.partitions != 5 {
		t.Fatalf("epoch 1 full: %+v %v", a, ok)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := waitUM(ctx, notify, []*standIn{s}, 2, false); err == nil {
		t.Fatal("waitUM returned for an epoch never sent")
	}
	um(2, 3)
	a, err := waitUM(context.Background(), notify, []*standIn{s}, 2, false)
	if err != nil || a.partitions != 3 {
		t.Fatalf("epoch 2: %+v %v", a, err)
	}
	if _, ok := s.arrival(2, true); ok {
		t.Fatal("an UpdateMetadata with 3 of 5 partitions counted as complete")
	}
	if _, err := s.Handle(context.Background(), nil, wire.RequestHeader{Key: int16(kmsg.Produce)}, kmsg.NewPtrProduceRequest()); err == nil {
		t.Fatal("a Produce request was served")
	}
}

func TestStandInWatchesCrashedLeaders(t *testing.T) {
	s := &standIn{id: 1, firstUM: map[int32]umArrival{}, fullUM: map[int32]umArrival{}, notify: make(chan struct{}, 1)}
	um := func(leaders ...int32) {
		req := kmsg.NewPtrUpdateMetadataRequest()
		ts := kmsg.NewUpdateMetadataRequestTopicState()
		ts.Topic = "t"
		for p, l := range leaders {
			if l == -9 { // not in this request
				continue
			}
			ps := kmsg.NewUpdateMetadataRequestTopicPartition()
			ps.Partition, ps.Leader = int32(p), l
			ts.PartitionStates = append(ts.PartitionStates, ps)
		}
		req.TopicStates = append(req.TopicStates, ts)
		if _, err := s.Handle(context.Background(), nil, wire.RequestHeader{Key: int16(kmsg.UpdateMetadata), Version: 7}, req); err != nil {
			t.Fatal(err)
		}
	}
	um(3, 1, 3, 2)
	if n := s.watchCrash(3); n != 2 {
		t.Fatalf("broker 3 leads %d partitions, want 2", n)
	}
	um(1, -9, -1, -9) // partition 0 moved; 2 offline: not yet
	if _, ok := s.crashHandled(); ok {
		t.Fatal("handled while partition 2 has no leader")
	}
	um(-9, -9, 2, -9)
	if a, ok := s.crashHandled(); !ok || a.at.IsZero() {
		t.Fatal("not handled after every partition of broker 3 moved")
	}
}
