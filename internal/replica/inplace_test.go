package replica

// A new decision for a partition whose replicas stay the same (a new
// leader epoch, an ISR change) is applied in place: the leader keeps its
// bookkeeping's memory (leaderState.next), the state its slices' arrays
// (decision.assign), and the result is what rebuilding them would give.

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/storage"
)

// next gives what newLeaderState gives with the previous state, in place
// when the followers are the same, rebuilt when they changed.
func TestLeaderStateNextMatchesRebuild(t *testing.T) {
	base := State{Role: Leader, Leader: 1, LeaderEpoch: 5, PartitionEpoch: 7, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}}
	cases := []struct {
		name    string
		st      State
		inPlace bool
	}{
		{"ISR shrink", State{Role: Leader, Leader: 1, LeaderEpoch: 6, PartitionEpoch: 8, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 3}}, true},
		{"ISR longer than the old array", State{Role: Leader, Leader: 1, LeaderEpoch: 6, PartitionEpoch: 8, Replicas: []int32{1, 2, 3, 2}, ISR: []int32{1, 3, 2, 2}}, true},
		{"replica moved", State{Role: Leader, Leader: 1, LeaderEpoch: 6, PartitionEpoch: 8, Replicas: []int32{1, 2, 4}, ISR: []int32{1, 2}}, false},
		{"followers reordered", State{Role: Leader, Leader: 1, LeaderEpoch: 6, PartitionEpoch: 8, Replicas: []int32{1, 3, 2}, ISR: []int32{1}}, false},
		{"replica added", State{Role: Leader, Leader: 1, LeaderEpoch: 6, PartitionEpoch: 8, Replicas: []int32{1, 2, 3, 4}, ISR: []int32{1}}, false},
	}
	for _, c := range cases {
		prev := func() *leaderState {
			ls := withLEOs(newLeaderState(base, 0, nil, t0), map[int32]int64{2: 8, 3: 6})
			ls.follower(2).clock = &FetchClock{}
			if _, ok := ls.proposeShrink([]int32{3}); !ok {
				t.Fatal("no proposal")
			}
			return ls
		}
		want := newLeaderState(c.st, 10, prev(), at(5))
		old := prev()
		got := old.next(c.st, 10, at(5), nil)
		if (got == old) != c.inPlace {
			t.Errorf("%s: in place %v, want %v", c.name, got == old, c.inPlace)
		}
		if !reflect.DeepEqual(visible(got), visible(want)) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, *got, *want)
		}
		c.st.ISR[0], c.st.Replicas[0] = 99, 99 // the request's slices are not kept
		if slices.Contains(got.isr, 99) {
			t.Errorf("%s: shares the decision's slices", c.name)
		}
	}
	if ls := (*leaderState)(nil).next(base, 3, t0, nil); ls == nil || ls.epochStart != 3 || len(ls.followers) != 2 {
		t.Fatalf("from nil: %+v", ls)
	}
}

// visible is ls without its inline room (what its slices show of it is
// compared through them).
func visible(ls *leaderState) leaderState {
	c := *ls
	c.isrBuf, c.followerBuf = [len(c.isrBuf)]int32{}, [len(c.followerBuf)]follower{}
	return c
}

// A follower or leader that only gets a new leader epoch and ISR allocates
// nothing of its own (a leader's log records the new epoch: the storage's
// epoch cache allocates one snapshot), and keeps no slice of the decision.
func TestApplyInPlaceAllocatesNothing(t *testing.T) {
	m := newManager(t, t.TempDir())
	cfg := Config{Log: storage.DefaultLogConfig(), MaxMessageBytes: 1 << 20}
	for _, role := range []Role{Follower, Leader} {
		tp := kafka.TopicPartition{Topic: "t", Partition: int32(role)}
		leader := int32(2)
		if role == Leader {
			leader = 1
		}
		st := State{Role: role, Leader: leader, LeaderEpoch: 1, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}}
		p, err := m.Become(tp, [16]byte{1}, cfg, st)
		if err != nil {
			t.Fatal(err)
		}
		isrs := [][]int32{{1, 2}, {1, 3}, {1, 2, 3}}
		now := time.Unix(100, 0)
		i := 0
		allocs := testing.AllocsPerRun(20, func() {
			st.LeaderEpoch++
			st.ISR = isrs[i%len(isrs)]
			i++
			if err := p.apply(st, now, nil); err != nil {
				t.Fatal(err)
			}
		})
		if limit := map[Role]float64{Follower: 0, Leader: 1}[role]; allocs > limit {
			t.Errorf("%s: %v allocations per decision, want at most %v", role, allocs, limit)
		}
		want := State{Role: role, Leader: leader, LeaderEpoch: st.LeaderEpoch, Replicas: []int32{1, 2, 3}, ISR: slices.Clone(st.ISR)}
		st.ISR[0], st.Replicas[0] = 99, 99
		if got := p.State(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: state %+v, want %+v", role, got, want)
		}
		st.ISR[0], st.Replicas[0] = 1, 1
	}
}

// An owned decision puts replicas and ISR in one array, the ISR with room
// to grow to all replicas in place; growing it never writes over the
// replicas.
func TestDecisionAssignOwned(t *testing.T) {
	var d decision
	first := State{Leader: 2, LeaderEpoch: 1, Replicas: []int32{1, 2, 3}, ISR: []int32{2}}
	if allocs := testing.AllocsPerRun(1, func() {
		d = decision{}
		d.assign(first, nil)
	}); allocs != 1 {
		t.Fatalf("first decision: %v allocations, want 1", allocs)
	}
	grown := State{Leader: 2, LeaderEpoch: 2, Replicas: []int32{1, 2, 3}, ISR: []int32{2, 3, 1}}
	if allocs := testing.AllocsPerRun(1, func() { d.assign(grown, nil) }); allocs != 0 {
		t.Fatalf("ISR grown to the replicas: %v allocations", allocs)
	}
	if got := d.toState(); !reflect.DeepEqual(got, grown) {
		t.Fatalf("state %+v", got)
	}
	if allocs := testing.AllocsPerRun(1, func() { d.setISR([]int32{3}) }); allocs != 0 {
		t.Fatalf("ISR change: %v allocations", allocs)
	}
	larger := State{Leader: 2, LeaderEpoch: 3, Replicas: []int32{1, 2, 3}, ISR: []int32{2, 3, 1, 4}} // a new array
	d.assign(larger, nil)
	if got := d.toState(); !reflect.DeepEqual(got, larger) {
		t.Fatalf("state %+v", got)
	}
	var empty decision
	empty.assign(State{Leader: -1}, nil)
	if st := empty.toState(); st.Replicas != nil || st.ISR != nil || st.Leader != -1 {
		t.Fatalf("empty decision: %+v", st)
	}
}

// Decisions of a batch with the same lists share one array; a later
// decision or ISR change of one of them, in the batch or alone, leaves the
// others' lists alone.
func TestDecisionSharedCopyOnWrite(t *testing.T) {
	b := &Batch{}
	b.StartTopic(3, 0)
	st := State{Leader: 1, LeaderEpoch: 1, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}}
	var ds [4]decision
	for i := range ds {
		if i == 3 {
			st.Replicas, st.ISR = []int32{1, 2, 3, 1}, []int32{2, 3}
		}
		ds[i].assign(st, b)
	}
	if &ds[0].ids[0] != &ds[1].ids[0] || &ds[0].ids[0] != &ds[3].ids[0] || !ds[0].shared {
		t.Fatal("equal lists not shared (the same six ids, split elsewhere, included)")
	}
	ds[0].setISR([]int32{1})
	ds[1].assign(State{Leader: 1, LeaderEpoch: 2, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 3}}, nil)
	ds[2].assign(State{Leader: 1, LeaderEpoch: 2, Replicas: []int32{1, 2, 3}, ISR: []int32{2}}, b)
	want := [][2][]int32{{{1, 2, 3}, {1}}, {{1, 2, 3}, {1, 3}}, {{1, 2, 3}, {2}}, {{1, 2, 3, 1}, {2, 3}}}
	for i := range ds {
		if got := ds[i].toState(); !slices.Equal(got.Replicas, want[i][0]) || !slices.Equal(got.ISR, want[i][1]) {
			t.Errorf("decision %d: replicas %v ISR %v, want %v", i, got.Replicas, got.ISR, want[i])
		}
	}
	if ds[0].shared || ds[1].shared || !ds[2].shared {
		t.Fatal("a decision alone does not own its lists, or one from the batch does")
	}
}
