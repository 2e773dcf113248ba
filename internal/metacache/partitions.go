package metacache

// A topic's partitions are a kafka.Partitions: at their number in a slice
// rather than in a map. A controller numbers them 0 to N-1, UpdateMetadata
// lists them in order, and a TopicInfo wants them sorted, so the slice
// serves as the TopicInfo's partition list itself once it has no hole
// (Partitions.Sorted; copied before the next change to it, as TopicInfos
// are shared). The replica lists of the partitions a request brings are
// copied into one allocation for the topic (ints).
//
// Evidence: BenchmarkUpdateMetadataApply/apply 21 -> 12-16 ms, 23.7 -> 11.5
// MB, 100734 -> 334 allocs/op; apply+topic 44 -> 16-17 ms, 102334 -> 434
// allocs/op (commit ed973e7: the slice, its sharing and ints together).

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/api"
	"github.com/samsa-kafka/samsa/internal/kafka"
)

type topic struct {
	id    [16]byte
	parts kafka.Partitions[api.PartitionInfo]
	info  *api.TopicInfo
	ints  []int32 // spare capacity for replica lists (cloneInto)
}

func newTopic(sizeHint int) *topic {
	t := &topic{}
	t.parts.Reserve(sizeHint)
	return t
}

func (t *topic) get(p int32) (api.PartitionInfo, bool) { return t.parts.Get(p) }

// put stores pi at its number, replacing any partition there.
func (t *topic) put(pi api.PartitionInfo) {
	t.info = nil // rebuilt after the change
	t.parts.Set(pi.ID, pi)
}

// remove drops partition p, if present.
func (t *topic) remove(p int32) {
	if _, ok := t.parts.Delete(p); ok {
		t.info = nil
	}
}

// partitions lists the partitions sorted by number: the slice itself when
// it has no hole, which it then shares until the next change.
func (t *topic) partitions() []api.PartitionInfo { return t.parts.Sorted() }

// reserveLists makes room in t.ints for the replica lists of ps, so that
// applying them allocates once for the topic.
func (t *topic) reserveLists(ps []kmsg.UpdateMetadataRequestTopicPartition) {
	n := 0
	for i := range ps {
		if ps[i].Leader == kafka.LeaderDuringDelete {
			continue
		}
		n += len(ps[i].Replicas) + len(ps[i].ISR) + len(ps[i].OfflineReplicas)
	}
	if cap(t.ints)-len(t.ints) < n {
		t.ints = make([]int32, 0, n)
	}
}

// partitionInfo is ps with its lists copied into t.ints (allocated there
// when it lacks room).
func (t *topic) partitionInfo(ps *kmsg.UpdateMetadataRequestTopicPartition) api.PartitionInfo {
	if n := len(ps.Replicas) + len(ps.ISR) + len(ps.OfflineReplicas); cap(t.ints)-len(t.ints) < n {
		t.ints = make([]int32, 0, n)
	}
	return api.PartitionInfo{
		ID: ps.Partition, Leader: ps.Leader, LeaderEpoch: ps.LeaderEpoch,
		Replicas: cloneInto(&t.ints, ps.Replicas), ISR: cloneInto(&t.ints, ps.ISR), Offline: cloneInto(&t.ints, ps.OfflineReplicas),
	}
}

// cloneInto is slices.Clone (nil stays nil) taking the copy from the
// spare capacity of *buf, capped so that appending to it never writes
// into what follows.
func cloneInto(buf *[]int32, s []int32) []int32 {
	if s == nil {
		return nil
	}
	start := len(*buf)
	*buf = append(*buf, s...)
	return (*buf)[start:len(*buf):len(*buf)]
}
