package controller

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/metastore"
)

// writeLegacyTopic writes a topic the way an earlier build did: its
// assignment and one state key per partition, leader epoch 7.
func writeLegacyTopic(t *testing.T, cl *cluster, name string) {
	t.Helper()
	a := metadata.Assignment{Partitions: map[int32][]int32{0: {1, 2, 3}, 1: {2, 3, 1}}}
	copy(a.TopicID[:], "legacy-topic-id!")
	ops := []metastore.Op{metastore.Put(metadata.TopicKey(name), metadata.EncodeAssignment(a))}
	for p, rs := range a.Partitions {
		doc, _ := json.Marshal(metadata.LeaderAndIsr{Leader: rs[0], LeaderEpoch: 7, ISR: rs, ControllerEpoch: 1, PartitionEpoch: 9, Version: 1})
		ops = append(ops, metastore.Put(metadata.LegacyStateKey(name, p), doc))
	}
	if _, err := cl.store.Txn(context.Background(), nil, ops); err != nil {
		t.Fatal(err)
	}
}

// checkMigrated: the states kept their leader epochs and partition epochs,
// now in a chunk, and the per-partition keys are gone.
func checkMigrated(t *testing.T, cl *cluster, name string) {
	t.Helper()
	for p := range int32(2) {
		if s := cl.state(name, p); s.LeaderEpoch != 7 || s.PartitionEpoch != 9 || len(s.ISR) != 3 {
			t.Fatalf("%s-%d after migration: %+v", name, p, s)
		}
		if _, found, _ := cl.store.Get(context.Background(), metadata.LegacyStateKey(name, p)); found {
			t.Fatalf("%s-%d: the per-partition key is still there", name, p)
		}
	}
}

// A controller loading a store of the per-partition layout keeps its
// states (no re-initialization at leader epoch 0) and moves them into
// chunks.
func TestLegacyStatesMigratedOnLoad(t *testing.T) {
	cl := newCluster(t, 1, 2, 3)
	writeLegacyTopic(t, cl, "old")
	cl.startupAll()
	if a := cl.active(); len(a) != 1 {
		t.Fatalf("active %v", a)
	}
	checkMigrated(t, cl, "old")
	// What the brokers are told carries the old leader epochs.
	for _, s := range cl.nodes[cl.active()[0]].sender.take() {
		if lr, ok := s.req.(*kmsg.LeaderAndISRRequest); ok {
			for _, ts := range lr.TopicStates {
				for _, ps := range ts.PartitionStates {
					if ps.LeaderEpoch != 7 {
						t.Fatalf("LeaderAndIsr to %d: %s-%d at leader epoch %d", s.broker, ts.Topic, ps.Partition, ps.LeaderEpoch)
					}
				}
			}
		}
	}
}

// A standby that saw the per-partition keys through its watch takes over
// from its warm context with them and migrates them too.
func TestLegacyStatesMigratedByStandby(t *testing.T) {
	cl := newCluster(t, 1, 2, 3)
	ctx := context.Background()
	writeLegacyTopic(t, cl, "old")
	n := cl.nodes[1]
	kvs, rev, err := cl.store.List(ctx, "/")
	if err != nil {
		t.Fatal(err)
	}
	n.c.Handle(ctx, storeChange{snapshot: true, kvs: kvs, revision: rev})
	n.c.Handle(ctx, Startup{Session: n.sess})
	// The watch then brings its own /controller write; the warm copy has
	// caught up and it takes over.
	kv, _, _ := cl.store.Get(ctx, metadata.ControllerKey)
	n.c.Handle(ctx, storeChange{events: []metastore.Event{{Type: metastore.EventPut, KV: kv}}, revision: kv.Version})
	if !n.c.IsActive() || n.c.warmFailovers.Load() != 1 {
		t.Fatalf("active=%v warm failovers=%d", n.c.IsActive(), n.c.warmFailovers.Load())
	}
	checkMigrated(t, cl, "old")
}
