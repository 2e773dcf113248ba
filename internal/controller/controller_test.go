package controller

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/metadata"
)

// Three brokers campaign: exactly one becomes controller, the others learn
// who; each failover raises the epoch.
func TestElectionAndFailover(t *testing.T) {
	cl := newCluster(t, 1, 2, 3)
	cl.startupAll()
	if a := cl.active(); len(a) != 1 || a[0] != 1 {
		t.Fatalf("active controllers %v, want [1]", a)
	}
	for _, id := range []int32{2, 3} {
		if got := cl.nodes[id].c.ControllerID(); got != 1 {
			t.Fatalf("broker %d thinks the controller is %d", id, got)
		}
	}
	if e := cl.epoch(); e != 1 {
		t.Fatalf("epoch %d after the first election", e)
	}
	prev := cl.epoch()
	for _, dead := range []int32{1, 2} {
		cl.kill(dead)
		cl.settle()
		a := cl.active()
		if len(a) != 1 {
			t.Fatalf("after killing %d: active %v", dead, a)
		}
		if e := cl.epoch(); e <= prev {
			t.Fatalf("epoch did not grow: %d after %d", e, prev)
		}
		prev = cl.epoch()
	}
}

// Creating a topic: the controller writes leader = first live replica and
// ISR = live replicas, sends LeaderAndIsr to the replicas and UpdateMetadata
// to every broker.
func TestNewTopicGoesOnline(t *testing.T) {
	cl := newCluster(t, 1, 2, 3)
	cl.startupAll()
	cl.nodes[1].sender.take()
	cl.createTopic("orders", map[int32][]int32{0: {2, 3, 1}, 1: {3, 1, 2}, 2: {1, 2, 3}})
	for p, want := range map[int32]int32{0: 2, 1: 3, 2: 1} {
		s := cl.state("orders", p)
		if s.Leader != want || len(s.ISR) != 3 || s.LeaderEpoch != 0 || s.ControllerEpoch != 1 {
			t.Fatalf("partition %d state %+v", p, s)
		}
	}
	got := byKind(cl.nodes[1].sender.take())
	for _, id := range []int32{1, 2, 3} {
		if got[id]["LeaderAndISR"] != 1 || got[id]["UpdateMetadata"] != 1 {
			t.Fatalf("broker %d got %v, want one LeaderAndIsr and one UpdateMetadata", id, got[id])
		}
	}
	// Only the active controller wrote: the others ignore the event.
	for _, id := range []int32{2, 3} {
		if len(cl.nodes[id].sender.take()) != 0 {
			t.Fatalf("inactive controller %d sent requests", id)
		}
	}
}

// A broker that dies loses leadership to the next live ISR member, leaves
// the ISR, and the survivors hear of it.
func TestBrokerFailureElectsFromISR(t *testing.T) {
	cl := newCluster(t, 1, 2, 3)
	cl.startupAll()
	cl.createTopic("t", map[int32][]int32{0: {3, 2, 1}})
	cl.nodes[1].sender.take()
	cl.kill(3)
	cl.settle()
	s := cl.state("t", 0)
	if s.Leader != 2 || slices.Contains(s.ISR, 3) || s.LeaderEpoch != 1 {
		t.Fatalf("after broker 3 died: %+v", s)
	}
	sentTo := byKind(cl.nodes[1].sender.take())
	if sentTo[2]["LeaderAndISR"] == 0 || sentTo[1]["UpdateMetadata"] == 0 {
		t.Fatalf("survivors not told: %v", sentTo)
	}
	// It comes back: it gets the full metadata and its replica's state.
	cl.start(3)
	cl.settle()
	sentTo = byKind(cl.nodes[1].sender.take())
	if sentTo[3]["UpdateMetadata"] == 0 || sentTo[3]["LeaderAndISR"] == 0 {
		t.Fatalf("returning broker not told: %v", sentTo)
	}
}

// A deposed controller — its session gone and a new controller elected
// while its loop was paused — wakes to the changes it missed: it resigns
// before acting on any (were it to write, its fence would fail), and
// keeps what they brought in its warm context.
func TestDeposedControllerIsFenced(t *testing.T) {
	cl := newCluster(t, 1, 2)
	cl.startupAll()
	old := cl.nodes[1]
	// Broker 1 stalls: its session expires, broker 2 takes over.
	old.stalled = true
	cl.expire(old)
	cl.settle()
	if !cl.nodes[2].c.IsActive() || cl.epoch() != 2 {
		t.Fatalf("broker 2 did not take over (epoch %d)", cl.epoch())
	}
	// A topic is created; the stalled controller wakes up and handles it
	// with everything else it missed, before the new controller does.
	if err := metadata.New(cl.store).CreateTopic(cl.ctx, "x", metadata.Assignment{Partitions: map[int32][]int32{0: {2, 1}}}, nil); err != nil {
		t.Fatal(err)
	}
	admin := cl.store.Revision()
	old.stalled = false
	cl.deliver(old.id)
	if old.c.IsActive() {
		t.Fatal("deposed controller still active")
	}
	if old.c.warm == nil || old.c.warm.topic("x") == nil || len(old.c.warm.registered) != 1 || old.c.warm.registered[2].ID != 2 {
		t.Fatal("the deposed controller's warm context lacks what it missed")
	}
	for _, ev := range cl.store.Changes(admin + 1) {
		t.Fatalf("deposed controller wrote %s", ev.KV.Key)
	}
	for _, s := range old.sender.take() {
		if s.req.Key() == int16(kmsg.LeaderAndISR) {
			t.Fatal("deposed controller sent LeaderAndIsr")
		}
	}
}
