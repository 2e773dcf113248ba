package controller

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/metastore"
)

// eventually polls cond (bounded), failing with what after the deadline.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
	}
}

// With real loops following the store, the standby takes over from its warm
// context (no reload) and tells every live broker the whole state.
func TestHotStandbyFailover(t *testing.T) {
	cl := newCluster(t, 1, 2, 3)
	ctx := cl.runLoops()
	eventually(t, "one active controller", func() bool { return len(cl.active()) == 1 })
	first := cl.active()[0]
	if err := metadata.New(cl.store).CreateTopic(ctx, "warm", metadata.Assignment{Partitions: map[int32][]int32{0: {3, 2, 1}, 1: {2, 1, 3}}}, nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, "leaders for the new topic", func() bool {
		states, _ := metadata.New(cl.store).ReadStates(ctx, "warm")
		return len(states) == 2
	})
	// A third partition: the states chunk is written a second time, and the
	// standby must take over with that latest copy.
	kv, _, err := cl.store.Get(ctx, metadata.TopicKey("warm"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := metadata.DecodeAssignment(kv.Value)
	if err != nil {
		t.Fatal(err)
	}
	a.Partitions[2] = []int32{1, 3, 2}
	if _, err := cl.store.Txn(ctx, nil, []metastore.Op{metastore.Put(metadata.TopicKey("warm"), metadata.EncodeAssignment(a))}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a leader for the added partition", func() bool {
		states, _ := metadata.New(cl.store).ReadStates(ctx, "warm")
		return len(states) == 3
	})
	for _, id := range cl.ids() {
		cl.nodes[id].sender.take()
	}
	cl.expire(cl.nodes[first])
	var next int32 = -1
	eventually(t, "a new active controller", func() bool {
		for _, id := range cl.ids() {
			if id != first && cl.nodes[id].c.IsActive() {
				next = id
				return true
			}
		}
		return false
	})
	nc := cl.nodes[next].c
	if nc.warmFailovers.Load() != 1 {
		t.Fatal("the new controller reloaded the store instead of using its warm context")
	}
	eventually(t, "UpdateMetadata with all three partitions to both live brokers", func() bool {
		got := map[int32]int{}
		for _, s := range cl.nodes[next].sender.sentSoFar() {
			if um, ok := s.req.(*kmsg.UpdateMetadataRequest); ok && um.ControllerEpoch == 2 {
				for _, ts := range um.TopicStates {
					got[s.broker] += len(ts.PartitionStates)
				}
			}
		}
		for _, id := range cl.ids() {
			if id != first && got[id] < 3 {
				return false
			}
		}
		return true
	})
	// Partition 0 was led by... its leader is still a live broker or was
	// moved off the dead one; either way every leader is live.
	for p := range int32(3) {
		if s := cl.state("warm", p); s.Leader == first || s.Leader < 0 {
			t.Fatalf("partition %d led by %d after %d died", p, s.Leader, first)
		}
	}
}

// Five brokers campaign at once with real loops: exactly one controller at
// a time, and each failover raises the epoch.
func TestConcurrentCampaignsElectOne(t *testing.T) {
	cl := newCluster(t, 1, 2, 3, 4, 5)
	cl.runLoops()
	prev := int32(0)
	for round := 0; round < 4; round++ {
		eventually(t, "exactly one active controller", func() bool { return len(cl.active()) == 1 && cl.epoch() > prev })
		if a := cl.active(); len(a) != 1 {
			t.Fatalf("round %d: active %v", round, a)
		}
		prev = cl.epoch()
		cl.kill(cl.active()[0])
	}
}

// A broken watch (compaction) starts over with a snapshot of the store. An
// active controller learns from it the brokers that vanished meanwhile —
// the snapshot holds only the keys that exist — and keeps the deletions it
// drives: a topic being deleted is not elected for, and its replica on
// the dead broker is deletion-ineligible.
func TestActiveControllerStartsOverFromSnapshot(t *testing.T) {
	cl := newCluster(t, 1, 2, 3)
	cl.startupAll()
	cl.createTopic("t", map[int32][]int32{0: {3, 1, 2}})
	cl.createTopic("gone", map[int32][]int32{0: {3, 1, 2}})
	cl.markForDeletion("gone") // StopReplicas sent, not answered yet
	cl.nodes[1].sender.take()
	// Broker 3 dies while node 1's watch is broken: it only ever sees the
	// snapshot its loop reads when it starts over.
	cl.expire(cl.nodes[3])
	kvs, rev, err := cl.store.List(cl.ctx, "/")
	if err != nil {
		t.Fatal(err)
	}
	cl.handle(1, storeChange{snapshot: true, kvs: kvs, revision: rev})
	if st := cl.state("t", 0); st.Leader != 1 || slices.Contains(st.ISR, 3) {
		t.Fatalf("t-0 after broker 3 vanished during the gap: %+v", st)
	}
	if b, sent := cl.tookLeaderAndIsrFor(1, "gone"); sent {
		t.Fatalf("LeaderAndIsr for the topic being deleted to broker %d", b)
	}
	c := cl.nodes[1].c
	if !c.deleting["gone"] {
		t.Fatal("the deletion in progress was forgotten")
	}
	// Its replica on the dead broker will never answer StopReplica: the
	// deletion waits for the broker's return, not for that answer.
	if st := c.ctx.replicaSt.at(replicaKey{TP{Topic: "gone", Partition: 0}, 3}); st != ReplicaDeletionIneligible {
		t.Fatalf("gone-0's replica on the dead broker is %v, want ReplicaDeletionIneligible", st)
	}
}
