package controller

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/metastore"
)

// A broker failure elects new leaders for the partitions the broker led
// and takes it out of the ISR of those it followed: the elections are
// written and their LeaderAndIsr sent first, the ISR removals in a second
// write of the same chunk after them.
func TestBrokerFailureTellsNewLeadersFirst(t *testing.T) {
	cl := newCluster(t, 1, 2, 3)
	cl.startupAll()
	cl.createTopic("t", map[int32][]int32{0: {3, 2, 1}, 1: {2, 3, 1}, 300: {1, 3, 2}})
	cl.nodes[1].sender.take()
	before := cl.store.Revision()
	cl.kill(3)
	deregistered := cl.store.Revision()
	cl.settle()
	if w := cl.store.Revision() - deregistered; w != 2 || deregistered-before != 1 {
		t.Fatalf("%d store writes for the failure (want 2: elections, ISR removals), %d for the deregistration", w, deregistered-before)
	}
	for p, want := range map[int32][]int32{0: {2, 1}, 1: {2, 1}, 300: {1, 2}} {
		if st := cl.state("t", p); !slices.Equal(st.ISR, want) || st.Leader != want[0] {
			t.Errorf("t-%d: leader %d ISR %v, want leader %d ISR %v", p, st.Leader, st.ISR, want[0], want)
		}
	}
	// To broker 2: the election of t-0, then the ISR removals of t-1 and t-300.
	var told [][]int32
	for _, s := range cl.nodes[1].sender.take() {
		if req, ok := s.req.(*kmsg.LeaderAndISRRequest); ok && s.broker == 2 {
			var ps []int32
			for _, ts := range req.TopicStates {
				for _, p := range ts.PartitionStates {
					ps = append(ps, p.Partition)
				}
			}
			told = append(told, ps)
		}
	}
	if len(told) != 2 || !slices.Equal(told[0], []int32{0}) || !slices.Equal(told[1], []int32{1, 300}) {
		t.Fatalf("LeaderAndIsr to broker 2: %v, want [[0] [1 300]]", told)
	}
}

// A failover that fails (here the epoch's increment) gives /controller up
// at once, so that a broker campaigns again now, not when the failed
// controller's session ends.
func TestFailedFailoverGivesUpController(t *testing.T) {
	cl := newCluster(t, 1, 2)
	failure := errors.New("injected store failure")
	cl.nodes[1].client.beforeTxns(
		func() error { return nil },     // the campaign: won
		func() error { return failure }, // the epoch's increment
	)
	before := cl.store.Revision()
	cl.startupAll()
	deleted := false
	for _, ev := range cl.store.Changes(before + 1) {
		deleted = deleted || ev.KV.Key == metadata.ControllerKey && ev.Type == metastore.EventDelete
	}
	if !deleted {
		t.Fatal("/controller was not given up")
	}
	if a := cl.active(); len(a) != 1 || cl.epoch() != 1 {
		t.Fatalf("after the failed failover: active %v, epoch %d", a, cl.epoch())
	}
}

// A broker whose session ended and who registered again before the
// controller looked (one store change: a bounce) fails and starts: the
// first UpdateMetadata with partitions it is sent is the full image of
// every partition, which its metadata cache takes as the whole truth
// (metacache drops the topics it does not list), not the failure's
// elections.
func TestBouncedBrokerGetsTheFullImageFirst(t *testing.T) {
	cl := newCluster(t, 1, 2, 3)
	cl.startupAll()
	cl.createTopic("t", map[int32][]int32{0: {2, 1}, 1: {2, 3}, 2: {1, 3}})
	ctrl := cl.nodes[1]
	ctrl.sender.take()
	cl.registerAgain(cl.nodes[2])
	var first *kmsg.UpdateMetadataRequest
	for _, s := range ctrl.sender.take() {
		if um, ok := s.req.(*kmsg.UpdateMetadataRequest); ok && s.broker == 2 && len(um.TopicStates) > 0 {
			first = um
			break
		}
	}
	if first == nil {
		t.Fatal("the bounced broker got no UpdateMetadata with partitions")
	}
	parts := 0
	for _, ts := range first.TopicStates {
		parts += len(ts.PartitionStates)
	}
	if parts != 3 || !kafka.IsFullUpdateMetadata(first) {
		t.Fatalf("the first UpdateMetadata with partitions to the bounced broker has %d partitions (full snapshot: %v), want the full image's 3",
			parts, kafka.IsFullUpdateMetadata(first))
	}
}

// A broker that registers again in a cluster whose topics were all
// deleted meanwhile is sent the empty full snapshot, from which it drops
// them (a snapshot is told from the live brokers alone by its Type, not by
// carrying partitions).
func TestRegisteredBrokerGetsAnEmptyFullSnapshot(t *testing.T) {
	cl := newCluster(t, 1, 2)
	cl.startupAll()
	ctrl := cl.nodes[1]
	ctrl.sender.take()
	cl.registerAgain(cl.nodes[2])
	full := 0
	for _, s := range ctrl.sender.take() {
		if um, ok := s.req.(*kmsg.UpdateMetadataRequest); ok && s.broker == 2 && kafka.IsFullUpdateMetadata(um) {
			if len(um.TopicStates) != 0 || len(um.LiveBrokers) != 2 {
				t.Fatalf("full snapshot with %d topics, %d live brokers", len(um.TopicStates), len(um.LiveBrokers))
			}
			full++
		}
	}
	if full != 1 {
		t.Fatalf("%d full snapshots to the registered broker, want 1", full)
	}
}

// registerAgain ends n's store session and registers n under a new one, as
// a broker whose session expired does, and lets the cluster settle.
func (cl *cluster) registerAgain(n *node) {
	cl.t.Helper()
	cl.expire(n)
	sess, err := n.client.NewSession(cl.ctx, 6*time.Second)
	if err != nil {
		cl.t.Fatal(err)
	}
	if _, err := metadata.New(n.client).RegisterBroker(cl.ctx, sess, testRegistration(n.id)); err != nil {
		cl.t.Fatal(err)
	}
	n.sess = sess
	cl.settle()
}
