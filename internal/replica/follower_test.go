package replica

// Tests of the follower path and leader epochs with real storage: batches
// copied from a leader partition into a follower one, the follower's HW,
// truncation, and epoch starts on becoming leader.

import (
	"errors"
	"slices"
	"testing"

	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/samsa-kafka/samsa/internal/storage"
)

// follow makes broker 2 follow testTP (leader 1) at leader epoch 3.
func (c *cluster) follow(t *testing.T, epoch int32) *Partition {
	t.Helper()
	p, err := c.Become(testTP, [16]byte{1}, testConfig(1), State{Role: Follower, Leader: 1, LeaderEpoch: epoch, Replicas: []int32{1, 2}, ISR: []int32{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFollowerAppendHWAndTruncate(t *testing.T) {
	lc, fc := newCluster(t), newCluster(t)
	l := lc.lead(t, testConfig(1), []int32{1, 2}, []int32{1, 2})
	f := fc.follow(t, 3)
	mustProduce(t, l, 2, 1) // offsets 0-1
	mustProduce(t, l, 3, 1) // offsets 2-4
	res, _, err := l.FollowerRead(2, 0, 1<<20, storage.MinOneBatch, at(1))
	if err != nil {
		t.Fatal(err)
	}

	// Corrupt copy: refused whole, nothing appended.
	bad := slices.Clone(res.Records)
	bad[len(bad)-1] ^= 0xff
	if _, err := f.AppendAsFollower(bad); !errors.Is(err, record.ErrCorrupt) || f.LogEndOffset() != 0 {
		t.Fatalf("corrupt batch: %v, LEO %d", err, f.LogEndOffset())
	}
	// A cut-off last batch is dropped; the whole first one is appended.
	first, err := record.ReadHeader(res.Records)
	if err != nil {
		t.Fatal(err)
	}
	info, err := f.AppendAsFollower(res.Records[:first.Size()+record.HeaderSize+3])
	if err != nil || info.FirstOffset != 0 || info.LastOffset != 1 || f.LogEndOffset() != 2 {
		t.Fatalf("partial fetch: %+v %v, LEO %d", info, err, f.LogEndOffset())
	}
	info, err = f.AppendAsFollower(res.Records[first.Size():])
	if err != nil || info.LastOffset != 4 || f.LogEndOffset() != 5 {
		t.Fatalf("rest: %+v %v, LEO %d", info, err, f.LogEndOffset())
	}
	if e, ok := f.LatestEpoch(); !ok || e != 3 {
		t.Fatalf("follower's latest epoch %d %v, want 3 from the batches", e, ok)
	}
	if e, end := f.EndOffsetForEpoch(3); e != 3 || end != 5 {
		t.Fatalf("EndOffsetForEpoch(3) = %d, %d; want 3, 5", e, end)
	}

	w := NewWaiter()
	f.AddWaiter(w)
	defer f.RemoveWaiter(w)
	f.SetFollowerHighWatermark(2)
	if hw := f.HighWatermark(); hw != 2 || !woken(w) {
		t.Fatalf("follower HW %d, want 2 with waiters woken", hw)
	}
	f.SetFollowerHighWatermark(100)
	if hw := f.HighWatermark(); hw != 5 {
		t.Fatalf("follower HW %d past its LEO 5", hw)
	}

	if err := f.TruncateTo(3); err != nil { // inside the batch 2-4: it goes whole
		t.Fatal(err)
	}
	if leo, hw := f.LogEndOffset(), f.HighWatermark(); leo != 2 || hw != 2 || !woken(w) {
		t.Fatalf("after TruncateTo(3): LEO %d HW %d (want 2, 2), woken %v", leo, hw, woken(w))
	}
	if err := f.TruncateFullyAndStartAt(100); err != nil {
		t.Fatal(err)
	}
	if start, leo := f.LogStartOffset(), f.LogEndOffset(); start != 100 || leo != 100 || !woken(w) {
		t.Fatalf("after TruncateFullyAndStartAt(100): start %d LEO %d", start, leo)
	}
	if _, ok := f.LatestEpoch(); ok {
		t.Fatal("epoch cache kept after a full truncation")
	}

	// A leader refuses every follower operation and keeps its HW.
	if _, err := l.AppendAsFollower(res.Records); !errors.Is(err, ErrNotFollower) {
		t.Fatalf("leader AppendAsFollower: %v", err)
	}
	if err := l.TruncateTo(0); !errors.Is(err, ErrNotFollower) {
		t.Fatalf("leader TruncateTo: %v", err)
	}
	if err := l.TruncateFullyAndStartAt(0); !errors.Is(err, ErrNotFollower) {
		t.Fatalf("leader TruncateFullyAndStartAt: %v", err)
	}
	hw := l.HighWatermark()
	l.SetFollowerHighWatermark(0)
	if l.HighWatermark() != hw || l.LogEndOffset() != 5 {
		t.Fatalf("leader changed by follower calls: HW %d LEO %d", l.HighWatermark(), l.LogEndOffset())
	}
}

func TestLeaderEpochStart(t *testing.T) {
	c := newCluster(t)
	become := func(st State) *Partition {
		t.Helper()
		p, err := c.Become(testTP, [16]byte{1}, testConfig(1), st)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	sole := []int32{1}
	p := become(State{Role: Leader, Leader: 1, LeaderEpoch: 2, Replicas: sole, ISR: sole})
	if e, ok := p.LatestEpoch(); !ok || e != 2 {
		t.Fatalf("latest epoch %d %v after becoming leader at 2", e, ok)
	}
	mustProduce(t, p, 3, 1) // 0-2 in epoch 2
	become(State{Role: Follower, Leader: 2, LeaderEpoch: 3, Replicas: []int32{1, 2}, ISR: []int32{1, 2}})
	become(State{Role: Leader, Leader: 1, LeaderEpoch: 5, Replicas: sole, ISR: sole})
	mustProduce(t, p, 2, 1) // 3-4 in epoch 5

	cases := []struct {
		req     int32
		epoch   int32
		endOffs int64
	}{
		{2, 2, 3},
		{4, 2, 3}, // epochs 3 and 4 never led here: the floor answers
		{5, 5, 5}, // latest: the LEO
		{1, 1, 0}, // before the first epoch: starts where it starts
		{6, -1, -1},
	}
	for _, c := range cases {
		if e, end := p.EndOffsetForEpoch(c.req); e != c.epoch || end != c.endOffs {
			t.Errorf("EndOffsetForEpoch(%d) = %d, %d; want %d, %d", c.req, e, end, c.epoch, c.endOffs)
		}
	}
	res, _, err := p.Read(3, 1<<20, storage.MinOneBatch)
	if err != nil {
		t.Fatal(err)
	}
	if h, err := record.ReadHeader(res.Records); err != nil || h.PartitionLeaderEpoch != 5 {
		t.Fatalf("batch leader epoch %d (%v), want 5", h.PartitionLeaderEpoch, err)
	}
}

func TestFollowerBecomingLeaderKeepsHW(t *testing.T) {
	lc, fc := newCluster(t), newCluster(t)
	l := lc.lead(t, testConfig(1), []int32{1, 2, 3}, []int32{1, 2, 3})
	mustProduce(t, l, 4, 1)
	res, _, err := l.FollowerRead(2, 0, 1<<20, storage.MinOneBatch, at(1))
	if err != nil {
		t.Fatal(err)
	}
	f := fc.follow(t, 3)
	if _, err := f.AppendAsFollower(res.Records); err != nil {
		t.Fatal(err)
	}
	f.SetFollowerHighWatermark(2)

	// Broker 2 takes over with 3 still in the ISR: the HW waits for 3.
	st := State{Role: Leader, Leader: 2, LeaderEpoch: 4, PartitionEpoch: 2, Replicas: []int32{1, 2, 3}, ISR: []int32{2, 3}}
	if _, err := fc.Become(testTP, [16]byte{1}, testConfig(1), st); err != nil {
		t.Fatal(err)
	}
	if hw := f.HighWatermark(); hw != 2 {
		t.Fatalf("new leader's HW %d, want 2 kept", hw)
	}
	if e, end := f.EndOffsetForEpoch(3); e != 3 || end != 4 {
		t.Fatalf("EndOffsetForEpoch(3) = %d, %d on the new leader; want 3, 4", e, end)
	}
	if e, _ := f.LatestEpoch(); e != 4 {
		t.Fatalf("latest epoch %d, want 4 started at become", e)
	}
	// Follower 3 catches up: the HW moves.
	if hw := fetch(t, f, 3, 4, at(2)); hw != 4 {
		t.Fatalf("HW %d after 3 caught up, want 4", hw)
	}

	// With no other ISR member the HW reaches the LEO at once.
	fc2 := newCluster(t)
	g := fc2.follow(t, 3)
	if _, err := g.AppendAsFollower(res.Records); err != nil {
		t.Fatal(err)
	}
	st.ISR = []int32{2}
	if _, err := fc2.Become(testTP, [16]byte{1}, testConfig(1), st); err != nil {
		t.Fatal(err)
	}
	if hw := g.HighWatermark(); hw != 4 {
		t.Fatalf("sole-ISR new leader's HW %d, want the LEO 4", hw)
	}
}
