package controller

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/metadata"
)

// answerStopReplicas feeds every StopReplica a node sent back to it as
// successful answers, as brokers would.
func (cl *cluster) answerStopReplicas(id int32) int {
	n := cl.nodes[id]
	count := 0
	for _, s := range n.sender.take() {
		req, ok := s.req.(*kmsg.StopReplicaRequest)
		if !ok {
			continue
		}
		resp := req.ResponseKind().(*kmsg.StopReplicaResponse)
		for _, t := range req.Topics {
			for _, p := range t.PartitionStates {
				if !p.Delete {
					continue
				}
				rp := kmsg.NewStopReplicaResponsePartition()
				rp.Topic, rp.Partition = t.Topic, p.Partition
				resp.Partitions = append(resp.Partitions, rp)
				count++
			}
		}
		n.c.Handle(cl.ctx, response{broker: s.broker, req: req, resp: resp})
	}
	return count
}

func (cl *cluster) topicKeys(topic string) int {
	n := 0
	for _, prefix := range []string{metadata.TopicKey(topic), metadata.TopicConfigKey(topic), metadata.DeleteTopicKey(topic)} {
		kvs, _, err := cl.store.List(cl.ctx, prefix)
		if err != nil {
			cl.t.Fatal(err)
		}
		n += len(kvs)
	}
	return n
}

// Deleting a topic: StopReplica(delete) to every replica, then, once all
// answered, every key of the topic is gone.
func TestDeleteTopic(t *testing.T) {
	cl := newCluster(t, 1, 2, 3)
	cl.startupAll()
	cl.createTopic("gone", map[int32][]int32{0: {1, 2, 3}, 1: {2, 3, 1}})
	cl.nodes[1].sender.take()
	cl.markForDeletion("gone")
	if n := cl.answerStopReplicas(1); n != 6 {
		t.Fatalf("%d replica deletions answered, want 6", n)
	}
	if n := cl.topicKeys("gone"); n != 0 {
		t.Fatalf("%d keys of the deleted topic remain", n)
	}
}

// A topic with a replica on a dead broker waits (ineligible), and completes
// by itself once the broker returns.
func TestDeleteWaitsForDeadBroker(t *testing.T) {
	cl := newCluster(t, 1, 2, 3)
	cl.startupAll()
	cl.createTopic("wait", map[int32][]int32{0: {1, 2, 3}})
	cl.kill(3)
	cl.settle()
	cl.nodes[1].sender.take()
	cl.markForDeletion("wait")
	cl.answerStopReplicas(1)
	if cl.topicKeys("wait") == 0 {
		t.Fatal("deleted while a replica's broker was dead")
	}
	cl.start(3)
	cl.settle()
	if n := cl.answerStopReplicas(1); n != 3 {
		t.Fatalf("after broker 3 returned: %d deletions answered, want 3 (deletion starts once every replica is live)", n)
	}
	if n := cl.topicKeys("wait"); n != 0 {
		t.Fatalf("%d keys remain after the broker returned", n)
	}
}

// The controller dies mid-deletion; the new one finds the marker and
// finishes.
func TestDeletionResumesAfterFailover(t *testing.T) {
	cl := newCluster(t, 1, 2, 3)
	cl.startupAll()
	cl.createTopic("half", map[int32][]int32{0: {2, 3}})
	cl.markForDeletion("half")
	cl.nodes[1].sender.take() // StopReplicas sent, never answered
	cl.kill(1)
	cl.settle()
	if !cl.nodes[2].c.IsActive() {
		t.Fatal("broker 2 did not take over")
	}
	if n := cl.answerStopReplicas(2); n != 2 {
		t.Fatalf("new controller answered %d deletions, want 2", n)
	}
	if n := cl.topicKeys("half"); n != 0 {
		t.Fatalf("%d keys remain", n)
	}
}

// A snapshot read before the active controller deleted a topic reaches its
// loop after the deletion (the follow goroutine read it while the loop
// deleted: a watch broken meanwhile). It still holds the topic's
// assignment and states; the topic stays deleted: no partition of it is
// created again and no key of it comes back. Created anew later, it is.
func TestStaleSnapshotKeepsTopicDeleted(t *testing.T) {
	cl := newCluster(t, 1, 2, 3)
	cl.startupAll()
	cl.createTopic("gone", map[int32][]int32{0: {1, 2, 3}, 1: {2, 3, 1}})
	cl.nodes[1].sender.take()
	kvs, rev, err := cl.store.List(cl.ctx, "/")
	if err != nil {
		t.Fatal(err)
	}
	cl.markForDeletion("gone")
	if n := cl.answerStopReplicas(1); n != 6 {
		t.Fatalf("%d replica deletions answered, want 6", n)
	}
	cl.handle(1, storeChange{snapshot: true, kvs: kvs, revision: rev})
	c := cl.nodes[1].c
	if c.ctx.topics["gone"] != nil {
		t.Fatal("the stale snapshot brought the deleted topic back into the controller's context")
	}
	if n := cl.topicKeys("gone"); n != 0 {
		t.Fatalf("%d keys of the deleted topic written again after the stale snapshot", n)
	}
	if b, sent := cl.tookLeaderAndIsrFor(1, "gone"); sent {
		t.Fatalf("LeaderAndIsr for the deleted topic to broker %d", b)
	}
	cl.settle() // the deletion's own changes come back through the watch
	if n := cl.topicKeys("gone"); n != 0 || len(c.deletedAt) != 0 {
		t.Fatalf("after the watch caught up: %d keys of the deleted topic, deletions remembered %v", n, c.deletedAt)
	}
	cl.createTopic("gone", map[int32][]int32{0: {2, 3, 1}})
	if st := cl.state("gone", 0); st.Leader != 2 {
		t.Fatalf("the topic created again: gone-0 %+v, want led by 2", st)
	}
}

// tookLeaderAndIsrFor takes what node id sent and reports whether a
// LeaderAndIsr among it names topic, and to which broker.
func (cl *cluster) tookLeaderAndIsrFor(id int32, topic string) (int32, bool) {
	for _, s := range cl.nodes[id].sender.take() {
		if lr, ok := s.req.(*kmsg.LeaderAndISRRequest); ok {
			for _, ts := range lr.TopicStates {
				if ts.Topic == topic {
					return s.broker, true
				}
			}
		}
	}
	return 0, false
}
