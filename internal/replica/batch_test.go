package replica

import (
	"slices"
	"testing"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// Partitions hosted through a Batch share slabs but nothing else: each
// holds its own decision, a later decision growing one partition's ISR in
// place leaves its slab neighbours alone, a leader's follower bookkeeping
// is its own, and a topic's config is shared only while equal. More
// partitions than StartTopic announced are hosted too, and a hosted
// partition in the batch takes its decision as BecomeHosted does.
func TestBatchPartitionsIndependent(t *testing.T) {
	c := newCluster(t)
	cfg, other := testConfig(1), testConfig(2)
	b := c.NewBatch()
	b.StartTopic(2, 1) // fewer than hosted below: the rest come from new slabs
	var ps []*Partition
	for i := range int32(6) {
		st := State{Role: Follower, Leader: 2, LeaderEpoch: 1, Replicas: []int32{1, 2, 3}, ISR: []int32{2, 1}}
		if i%2 == 0 {
			st.Role, st.Leader = Leader, 1
		}
		pcfg := cfg
		if i == 5 {
			pcfg = other
		}
		p, err := b.BecomeWithLog(kafka.TopicPartition{Topic: "t", Partition: i}, [16]byte{1}, pcfg, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	if ps[0].cfg != ps[4].cfg || ps[5].cfg == ps[4].cfg || ps[5].Config() != other {
		t.Fatal("a topic's equal configs not shared, or another one shared")
	}
	// A new decision for partition 0 with the ISR grown to the replicas
	// (written in place, into the room its slab left it).
	grown := State{Role: Leader, Leader: 1, LeaderEpoch: 2, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}}
	if _, err := b.BecomeHosted(ps[0], [16]byte{1}, grown); err != nil {
		t.Fatal(err)
	}
	for i, p := range ps {
		want := []int32{2, 1}
		if i == 0 {
			want = []int32{1, 2, 3}
		}
		if st := p.State(); !slices.Equal(st.ISR, want) || !slices.Equal(st.Replicas, []int32{1, 2, 3}) {
			t.Errorf("partition %d: replicas %v ISR %v, want ISR %v", i, st.Replicas, st.ISR, want)
		}
	}
	// Leaders 2 and 4: a fetch by follower 3 on one is not the other's.
	mustProduce(t, ps[2], 2, 1)
	mustProduce(t, ps[4], 2, 1)
	if fetch(t, ps[2], 3, 2, t0) != 0 || fetch(t, ps[2], 2, 2, t0) != 2 {
		t.Fatal("leader 2: HW not held by its ISR follower 2, then not at 2 once it fetched")
	}
	if hw := ps[4].HighWatermark(); hw != 0 {
		t.Fatalf("leader 4: HW %d moved by leader 2's followers", hw)
	}
	if got := c.Get(kafka.TopicPartition{Topic: "t", Partition: 3}); got != ps[3] || got.IsLeader() {
		t.Fatal("follower 3 not hosted as follower")
	}
}

// Decisions in a batch are those of the Manager's own: a partition hosted
// either way ends in the same state, leader epoch and HW.
func TestBatchMatchesManager(t *testing.T) {
	c := newCluster(t)
	st := State{Role: Leader, Leader: 1, LeaderEpoch: 4, PartitionEpoch: 2, Replicas: []int32{1}, ISR: []int32{1}}
	b := c.NewBatch()
	b.StartTopic(1, 1)
	viaBatch, err := b.BecomeWithLog(kafka.TopicPartition{Topic: "b", Partition: 0}, [16]byte{1}, testConfig(1), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	alone, err := c.BecomeWithLog(kafka.TopicPartition{Topic: "m", Partition: 0}, [16]byte{1}, testConfig(1), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*Partition{viaBatch, alone} {
		mustProduce(t, p, 3, -1)
		e, ok := p.LatestEpoch()
		if got := p.State(); !ok || e != 4 || p.HighWatermark() != 3 || !p.IsLeader() || got.PartitionEpoch != 2 ||
			!slices.Equal(got.ISR, []int32{1}) {
			t.Fatalf("%s: epoch %d %v, HW %d, state %+v", p.TP, e, ok, p.HighWatermark(), got)
		}
	}
	if _, err := b.BecomeWithLog(viaBatch.TP, [16]byte{1}, testConfig(1), st, nil); err != ErrStaleLeaderEpoch {
		t.Fatalf("the same decision again: %v, want stale", err)
	}
}
