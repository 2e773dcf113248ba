package metacache

import (
	"testing"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A topic's partitions are applied with one look-up of the topic: a
// partition that deletes the topic's last one, then one that brings the
// topic back, and a topic re-created under another id in the same request,
// leave the cache as applying each partition alone would.
func TestApplyTopicRuns(t *testing.T) {
	c := New(1)
	if code := c.ApplyUpdateMetadata(updateMetadata(1, -1, []int32{1}, part{"a", 1, 0, 1, 1, []int32{1}}, part{"b", 2, 0, 1, 1, []int32{1}})); code != 0 {
		t.Fatal(code)
	}
	req := updateMetadata(1, -1, []int32{1},
		part{"a", 1, 0, kafka.LeaderDuringDelete, 2, []int32{1}}, // a's last partition: a is gone
		part{"a", 1, 1, 1, 2, []int32{1}},                        // and back
		part{"b", 2, 1, 1, 1, []int32{1}})
	// b re-created under id 3 after its first partition of this request.
	ps := kmsg.NewUpdateMetadataRequestTopicPartition()
	ps.Partition, ps.Leader, ps.LeaderEpoch, ps.Replicas, ps.ISR = 5, 1, 0, []int32{1}, []int32{1}
	ts := kmsg.NewUpdateMetadataRequestTopicState()
	ts.Topic, ts.TopicID, ts.PartitionStates = "b", [16]byte{3}, []kmsg.UpdateMetadataRequestTopicPartition{ps}
	req.TopicStates = append(req.TopicStates, ts)
	if code := c.ApplyUpdateMetadata(req); code != 0 {
		t.Fatal(code)
	}
	if got, want := summary(c), "a/1:1=1@2, b/3:5=1@0, "; got != want {
		t.Fatalf("cache %q, want %q", got, want)
	}
	if _, ok := c.TopicByID([16]byte{2}); ok {
		t.Fatal("b's old id still known")
	}
}
