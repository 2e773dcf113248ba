package metacache

// A topic's partitions, at their number in a slice rather than in a map: a
// controller numbers them 0 to N-1, UpdateMetadata lists them in order, and
// a TopicInfo wants them sorted, so the slice serves as the TopicInfo's
// partition list itself once it has no hole (copied before the next change
// to it, as TopicInfos are shared). Numbers far past the others (a dense
// slice for them would be mostly empty) are kept in sparse; a partition is
// in one place only. The replica lists of the partitions a request brings
// are copied into one allocation for the topic (ints).

import (
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/api"
	"github.com/samsa-kafka/samsa/internal/kafka"
)

// absent marks an empty place of topic.parts.
const absent = -1

// denseSlack is how far past the dense slice's end a new partition still
// grows it.
const denseSlack = 1024

type topic struct {
	id     [16]byte
	parts  []api.PartitionInfo // at their number; ID absent where none
	sparse map[int32]api.PartitionInfo
	n      int  // partitions in parts and sparse
	shared bool // parts is the Partitions of info: copy before writing
	info   *api.TopicInfo
	ints   []int32 // spare capacity for replica lists (cloneInto)
}

func newTopic(sizeHint int) *topic {
	return &topic{parts: make([]api.PartitionInfo, 0, sizeHint)}
}

func (t *topic) get(p int32) (api.PartitionInfo, bool) {
	if p >= 0 && int(p) < len(t.parts) && t.parts[p].ID != absent {
		return t.parts[p], true
	}
	pi, ok := t.sparse[p]
	return pi, ok
}

// changing is called before any change: the TopicInfo is rebuilt after it,
// and its partition list must not see it.
func (t *topic) changing() {
	t.info = nil
	if t.shared {
		t.parts, t.shared = slices.Clone(t.parts), false
	}
}

// put stores pi at its number, replacing any partition there.
func (t *topic) put(pi api.PartitionInfo) {
	t.changing()
	i := pi.ID
	if _, ok := t.sparse[i]; ok {
		t.sparse[i] = pi
		return
	}
	switch {
	case i >= 0 && int(i) < len(t.parts):
	case i >= 0 && int64(i) <= int64(2*len(t.parts)+denseSlack):
		for int(i) >= len(t.parts) {
			t.parts = append(t.parts, api.PartitionInfo{ID: absent})
		}
	default:
		if t.sparse == nil {
			t.sparse = map[int32]api.PartitionInfo{}
		}
		t.sparse[i] = pi
		t.n++
		return
	}
	if t.parts[i].ID == absent {
		t.n++
	}
	t.parts[i] = pi
}

// remove drops partition p, if present.
func (t *topic) remove(p int32) {
	if _, ok := t.get(p); !ok {
		return
	}
	t.changing()
	if p >= 0 && int(p) < len(t.parts) && t.parts[p].ID != absent {
		t.parts[p] = api.PartitionInfo{ID: absent}
	} else {
		delete(t.sparse, p)
	}
	t.n--
}

// partitions lists the partitions sorted by number: the dense slice itself
// when it has no hole, which it then shares until the next change.
func (t *topic) partitions() []api.PartitionInfo {
	if len(t.sparse) == 0 && t.n == len(t.parts) {
		t.shared = true
		return t.parts[:t.n:t.n]
	}
	out := make([]api.PartitionInfo, 0, t.n)
	for _, pi := range t.parts {
		if pi.ID != absent {
			out = append(out, pi)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(t.sparse)) {
		out = append(out, t.sparse[p])
	}
	return out
}

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
