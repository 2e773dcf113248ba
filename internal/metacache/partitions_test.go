package metacache

import (
	"slices"
	"testing"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// The partition table: partitions numbered far apart (kept aside), holes
// left by deletions and filled again, and replica lists copied into one
// allocation give the same answers as a map would; a TopicInfo handed out
// does not change when the topic changes later.
func TestPartitionTable(t *testing.T) {
	c := New(1)
	apply := func(parts ...part) {
		t.Helper()
		if code := c.ApplyUpdateMetadata(updateMetadata(1, -1, []int32{1, 2, 3}, parts...)); code != 0 {
			t.Fatal(code)
		}
	}
	apply(part{"a", 1, 0, 1, 1, []int32{1, 2}}, part{"a", 1, 1, 2, 1, []int32{2, 3}},
		part{"a", 1, 1 << 30, 3, 1, []int32{3, 1}}, part{"a", 1, 2, 3, 1, []int32{3}})
	before, _ := c.Topic("a")
	if got, want := summary(c), "a/1:0=1@1,1=2@1,2=3@1,1073741824=3@1, "; got != want {
		t.Fatalf("cache %q, want %q", got, want)
	}
	if p, ok := c.Partition("a", 1<<30); !ok || !slices.Equal(p.Replicas, []int32{3, 1}) {
		t.Fatalf("far partition: %+v %v", p, ok)
	}
	// The lists of one request share an allocation: appending to one must
	// not write into the next.
	p0, _ := c.Partition("a", 0)
	_ = append(p0.Replicas, 9)
	if p0.ISR[0] != 1 {
		t.Fatalf("appending to partition 0's replicas changed its ISR: %v", p0.ISR)
	}

	apply(part{"a", 1, 1, kafka.LeaderDuringDelete, 1, []int32{2, 3}}, part{"a", 1, 1 << 30, kafka.LeaderDuringDelete, 1, []int32{3, 1}},
		part{"a", 1, 0, 2, 2, []int32{1, 2}})
	if got, want := summary(c), "a/1:0=2@2,2=3@1, "; got != want {
		t.Fatalf("after deletions: cache %q, want %q", got, want)
	}
	if _, ok := c.Partition("a", 1); ok {
		t.Fatal("deleted partition 1 still known")
	}
	if len(before.Partitions) != 4 || before.Partitions[0].Leader != 1 || before.Partitions[1].ID != 1 {
		t.Fatalf("a TopicInfo handed out changed with the topic: %+v", before.Partitions)
	}

	shared, _ := c.Topic("a") // no hole left once 1 is back: the table itself
	apply(part{"a", 1, 1, 1, 3, []int32{1}})
	if got, want := summary(c), "a/1:0=2@2,1=1@3,2=3@1, "; got != want {
		t.Fatalf("hole filled: cache %q, want %q", got, want)
	}
	now, _ := c.Topic("a")
	apply(part{"a", 1, 2, 1, 4, []int32{1}})
	if len(shared.Partitions) != 2 || now.Partitions[2].Leader != 3 {
		t.Fatalf("TopicInfos changed with the topic: %+v then %+v", shared.Partitions, now.Partitions)
	}
}
