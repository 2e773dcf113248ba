package metadata

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/samsa-kafka/samsa/internal/metastore"
	"github.com/samsa-kafka/samsa/internal/metastore/memstore"
)

// Kafka's ReplicaAssignment algebra: RS = TRS + ORS (target first),
// AR = RS − ORS, RR = RS − TRS; reassigning an assignment in progress starts
// from its original replicas; going back to them cancels.
func TestReassignTo(t *testing.T) {
	for _, tc := range []struct {
		name         string
		from         PartitionAssignment
		target       []int32
		want         PartitionAssignment
		reassigning  bool
		origin, trgt []int32
	}{
		{"grow", PartitionAssignment{Replicas: []int32{1, 2}}, []int32{1, 2, 3},
			PartitionAssignment{Replicas: []int32{1, 2, 3}, Adding: []int32{3}}, true, []int32{1, 2}, []int32{1, 2, 3}},
		{"move", PartitionAssignment{Replicas: []int32{0, 1}}, []int32{1, 2},
			PartitionAssignment{Replicas: []int32{1, 2, 0}, Adding: []int32{2}, Removing: []int32{0}}, true, []int32{1, 0}, []int32{1, 2}},
		{"shrink", PartitionAssignment{Replicas: []int32{1, 2, 3}}, []int32{3},
			PartitionAssignment{Replicas: []int32{3, 1, 2}, Removing: []int32{1, 2}}, true, []int32{3, 1, 2}, []int32{3}},
		{"reorder", PartitionAssignment{Replicas: []int32{1, 2}}, []int32{2, 1},
			PartitionAssignment{Replicas: []int32{2, 1}}, false, []int32{2, 1}, []int32{2, 1}},
		{"supersede", PartitionAssignment{Replicas: []int32{1, 2, 0}, Adding: []int32{2}, Removing: []int32{0}}, []int32{3},
			PartitionAssignment{Replicas: []int32{3, 1, 0}, Adding: []int32{3}, Removing: []int32{1, 0}}, true, []int32{1, 0}, []int32{3}},
		{"cancel", PartitionAssignment{Replicas: []int32{1, 2, 0}, Adding: []int32{2}, Removing: []int32{0}}, []int32{1, 0},
			PartitionAssignment{Replicas: []int32{1, 0}}, false, []int32{1, 0}, []int32{1, 0}},
	} {
		got := tc.from.ReassignTo(tc.target)
		if !got.Equal(tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
		if got.Reassigning() != tc.reassigning || !slices.Equal(got.Origin(), tc.origin) || !slices.Equal(got.Target(), tc.trgt) {
			t.Errorf("%s: reassigning=%v origin=%v target=%v", tc.name, got.Reassigning(), got.Origin(), got.Target())
		}
	}
}

// The document keeps Kafka's layout: an in-progress reassignment is in
// adding_replicas/removing_replicas (both decoders agree), and clearing it
// leaves the empty objects Kafka writes.
func TestAssignmentPartitionRoundTrip(t *testing.T) {
	a := Assignment{TopicID: TopicID{1}, Partitions: map[int32][]int32{0: {1, 2}, 1: {2, 3}}}
	a.SetPartition(0, PartitionAssignment{Replicas: []int32{1, 2}}.ReassignTo([]int32{2, 3}))
	doc := EncodeAssignment(a)
	for _, want := range []string{`"partitions":{"0":[2,3,1],"1":[2,3]}`, `"adding_replicas":{"0":[3]}`, `"removing_replicas":{"0":[1]}`} {
		if !strings.Contains(string(doc), want) {
			t.Fatalf("%s lacks %s", doc, want)
		}
	}
	fast, err := DecodeAssignment(doc)
	if err != nil {
		t.Fatal(err)
	}
	slow, err := decodeAssignmentJSON(doc)
	if err != nil || !reflect.DeepEqual(fast, slow) {
		t.Fatalf("fast %+v\njson %+v (%v)", fast, slow, err)
	}
	if got := fast.Partition(0); !got.Reassigning() || !slices.Equal(got.Target(), []int32{2, 3}) || fast.Partition(1).Reassigning() {
		t.Fatalf("decoded %+v", fast)
	}
	fast.SetPartition(0, PartitionAssignment{Replicas: fast.Partition(0).Target()})
	doc = EncodeAssignment(fast)
	if !strings.Contains(string(doc), `"adding_replicas":{},"removing_replicas":{}`) || len(fast.AddingReplicas) != 0 {
		t.Fatalf("completed: %s", doc)
	}
	// Kafka's version 2 document (no topic id) still decodes.
	v2, err := DecodeAssignment([]byte(`{"version":2,"partitions":{"0":[3,1]},"adding_replicas":{"0":[3]},"removing_replicas":{}}`))
	if err != nil || !slices.Equal(v2.Partition(0).Origin(), []int32{1}) {
		t.Fatalf("v2: %+v %v", v2, err)
	}
}

// UpdateAssignment re-reads and retries when someone else rewrote the
// document, keeps their change, and refuses without the fence.
func TestUpdateAssignment(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New()
	c, f := fencedClient(t, mem, mem)
	if err := c.CreateTopic(ctx, "t", Assignment{Partitions: map[int32][]int32{0: {1, 2}}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpdateAssignment(ctx, f, "missing", func(*Assignment) {}); !errors.Is(err, ErrNoAssignment) {
		t.Fatalf("missing topic: %v", err)
	}
	calls := 0
	_, err := c.UpdateAssignment(ctx, f, "t", func(a *Assignment) {
		calls++
		if calls == 1 { // another writer adds a partition meanwhile
			b := Assignment{Partitions: map[int32][]int32{0: {1, 2}, 1: {2, 1}}}
			if _, err := mem.Txn(ctx, nil, []metastore.Op{metastore.Put(TopicKey("t"), EncodeAssignment(b))}); err != nil {
				t.Fatal(err)
			}
		}
		a.SetPartition(0, a.Partition(0).ReassignTo([]int32{3}))
	})
	if err != nil || calls != 2 {
		t.Fatalf("err %v after %d edits", err, calls)
	}
	kv, _, err := mem.Get(ctx, TopicKey("t"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := DecodeAssignment(kv.Value)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Partitions) != 2 || !slices.Equal(a.Partition(0).Removing, []int32{1, 2}) {
		t.Fatalf("stored %+v", a)
	}
	if _, err := mem.Txn(ctx, nil, []metastore.Op{metastore.Put(ControllerEpochKey, []byte("2"))}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpdateAssignment(ctx, f, "t", func(*Assignment) {}); !errors.Is(err, ErrControllerMoved) {
		t.Fatalf("lost fence: %v", err)
	}
}
