package replica

// Partition-level tests of the leader's replication path with real storage
// in t.TempDir(): HW over the ISR, ISR shrink/expand proposals and results,
// acks=all. Times are injected; proposals are collected synchronously.

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/samsa-kafka/samsa/internal/record/recordtest"
	"github.com/samsa-kafka/samsa/internal/storage"
)

var testTP = kafka.TopicPartition{Topic: "t", Partition: 0}

// cluster is a manager whose clock reads t0 and whose proposals are kept.
type cluster struct {
	*Manager
	props []ISRProposal
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	c := &cluster{Manager: newManager(t, t.TempDir())}
	c.now = func() time.Time { return t0 }
	c.SetISRProposer(func(p ISRProposal) { c.props = append(c.props, p) })
	return c
}

// take returns the proposals made since the last call.
func (c *cluster) take() []ISRProposal {
	ps := c.props
	c.props = nil
	return ps
}

func testConfig(minISR int) Config {
	return Config{Log: storage.DefaultLogConfig(), MaxMessageBytes: 1 << 20, MinInsyncReplicas: minISR, ReplicaLagTimeMax: 10 * time.Second}
}

// lead makes broker 1 lead testTP at leader epoch 3, partition epoch 1.
func (c *cluster) lead(t *testing.T, cfg Config, replicas, isr []int32) *Partition {
	t.Helper()
	p, err := c.Become(testTP, [16]byte{1}, cfg, State{Role: Leader, Leader: 1, LeaderEpoch: 3, PartitionEpoch: 1, Replicas: replicas, ISR: isr})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// produceN appends one batch of n records.
func produceN(t *testing.T, p *Partition, n int, acks int16) (storage.AppendInfo, error) {
	t.Helper()
	vals := make([]string, n)
	for i := range vals {
		vals[i] = "v"
	}
	b := recordtest.Values(1000, vals...)
	hdrs, err := record.Validate(b, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	return p.AppendAsLeader(b, hdrs, t0, acks)
}

func mustProduce(t *testing.T, p *Partition, n int, acks int16) storage.AppendInfo {
	t.Helper()
	info, err := produceN(t, p, n, acks)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// fetch is a follower fetch that must succeed; it returns the HW sent back.
func fetch(t *testing.T, p *Partition, id int32, offset int64, now time.Time) int64 {
	t.Helper()
	_, hw, err := p.FollowerRead(id, offset, 1<<20, storage.MinOneBatch, now)
	if err != nil {
		t.Fatalf("fetch of %d at %d: %v", id, offset, err)
	}
	return hw
}

func woken(w *Waiter) bool {
	select {
	case <-w.C:
		return true
	default:
		return false
	}
}

func TestLeaderHWAdvancesWithISR(t *testing.T) {
	c := newCluster(t)
	p := c.lead(t, testConfig(1), []int32{1, 2, 3}, []int32{1, 2, 3})
	mustProduce(t, p, 3, 1)
	if hw := p.HighWatermark(); hw != 0 {
		t.Fatalf("HW %d after append before any follower fetch, want 0", hw)
	}
	if res, _, err := p.Read(0, 1<<20, storage.MinOneBatch); err != nil || len(res.Records) != 0 {
		t.Fatalf("consumer read above the HW: %d bytes, %v", len(res.Records), err)
	}
	w := NewWaiter()
	p.AddWaiter(w)
	defer p.RemoveWaiter(w)

	steps := []struct {
		id     int32
		offset int64
		wantHW int64
	}{
		{2, 0, 0},
		{2, 3, 0}, // 3 has not fetched: its unknown LEO holds the HW
		{3, 0, 0},
		{3, 2, 2}, // both past 2 (a fetch offset inside a batch is still an LEO)
		{3, 3, 3},
	}
	for _, s := range steps {
		hw := fetch(t, p, s.id, s.offset, at(1))
		if hw != s.wantHW || p.HighWatermark() != s.wantHW {
			t.Fatalf("after fetch of %d at %d: HW %d (returned %d), want %d", s.id, s.offset, p.HighWatermark(), hw, s.wantHW)
		}
	}
	if !woken(w) {
		t.Fatal("waiter not woken by the HW advance")
	}
	if res, hw, err := p.Read(0, 1<<20, storage.MinOneBatch); err != nil || len(res.Records) == 0 || hw != 3 {
		t.Fatalf("consumer read below the HW: %d bytes, hw %d, %v", len(res.Records), hw, err)
	}
	if len(c.take()) != 0 {
		t.Fatal("proposal with a full ISR")
	}

	if _, _, err := p.FollowerRead(4, 0, 1<<20, storage.MinOneBatch, at(1)); !errors.Is(err, ErrNotAssigned) {
		t.Fatalf("fetch from a non-replica: %v", err)
	}
	if _, _, err := p.FollowerRead(2, 10, 1<<20, storage.MinOneBatch, at(1)); !errors.Is(err, storage.ErrOffsetOutOfRange) {
		t.Fatalf("fetch beyond the LEO: %v", err)
	}
	if _, err := c.Become(testTP, [16]byte{1}, testConfig(1), State{Role: Follower, Leader: 2, LeaderEpoch: 4, Replicas: []int32{1, 2, 3}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.FollowerRead(2, 0, 1<<20, storage.MinOneBatch, at(1)); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("fetch from a follower partition: %v", err)
	}
}

func TestISRShrinkAndExpand(t *testing.T) {
	c := newCluster(t)
	p := c.lead(t, testConfig(1), []int32{1, 2, 3}, []int32{1, 2, 3})
	leo := mustProduce(t, p, 5, 1).LastOffset + 1
	fetch(t, p, 2, leo, at(1)) // 2 caught up, 3 stays at 0
	fetch(t, p, 3, 0, at(1))

	c.ShrinkISRs(at(10)) // 3 caught up as of becoming leader (t0): 10s is the limit
	if ps := c.take(); len(ps) != 0 {
		t.Fatalf("shrink within the lag time: %+v", ps)
	}
	c.ShrinkISRs(at(11))
	ps := c.take()
	if len(ps) != 1 || !slices.Equal(ps[0].NewISR, []int32{1, 2}) || ps[0].LeaderEpoch != 3 || ps[0].PartitionEpoch != 1 ||
		ps[0].TP != testTP || ps[0].TopicID != [16]byte{1} {
		t.Fatalf("shrink proposals %+v, want one of ISR [1 2] at epochs 3/1", ps)
	}
	shrink := ps[0]
	c.ShrinkISRs(at(12))
	if ps := c.take(); len(ps) != 0 {
		t.Fatalf("second proposal while one is in flight: %+v", ps)
	}
	if hw := p.HighWatermark(); hw != 0 {
		t.Fatalf("HW %d while the shrink is in flight, want 0 (3 still counts)", hw)
	}

	w := NewWaiter()
	p.AddWaiter(w)
	defer p.RemoveWaiter(w)
	p.ApplyISRResult(shrink, ISRResult{LeaderEpoch: 3, PartitionEpoch: 2, ISR: []int32{1, 2}})
	if st := p.State(); !slices.Equal(st.ISR, []int32{1, 2}) || st.PartitionEpoch != 2 {
		t.Fatalf("state after shrink %+v", st)
	}
	if hw := p.HighWatermark(); hw != leo || !woken(w) {
		t.Fatalf("HW %d after shrink, want %d with waiters woken", hw, leo)
	}
	if s, e := c.ISRChanges(); s != 1 || e != 0 {
		t.Fatalf("ISR changes after the shrink: %d shrinks, %d expansions; want 1, 0", s, e)
	}
	if g := c.Gauges(); g != (Gauges{Partitions: 1, Leaders: 1, UnderReplicated: 1}) {
		t.Fatalf("gauges after the shrink: %+v", g)
	}

	// A repeated (stale) result changes nothing.
	p.ApplyISRResult(shrink, ISRResult{LeaderEpoch: 3, PartitionEpoch: 9, ISR: []int32{1}})
	if st := p.State(); !slices.Equal(st.ISR, []int32{1, 2}) || st.PartitionEpoch != 2 {
		t.Fatalf("stale result adopted: %+v", st)
	}

	// 3 fetches but is not caught up yet: below the HW.
	fetch(t, p, 3, 2, at(13))
	if ps := c.take(); len(ps) != 0 {
		t.Fatalf("expansion below the HW: %+v", ps)
	}
	fetch(t, p, 3, leo, at(14))
	ps = c.take()
	if len(ps) != 1 || !slices.Equal(ps[0].NewISR, []int32{1, 2, 3}) || ps[0].PartitionEpoch != 2 {
		t.Fatalf("expansion proposals %+v, want ISR [1 2 3] at partition epoch 2", ps)
	}
	// The controller answers with a partition epoch that is not newer:
	// ignored, and the proposal is no longer in flight.
	p.ApplyISRResult(ps[0], ISRResult{LeaderEpoch: 3, PartitionEpoch: 2, ISR: []int32{1, 2, 3}})
	if st := p.State(); !slices.Equal(st.ISR, []int32{1, 2}) {
		t.Fatalf("not-newer result adopted: %+v", st)
	}
	fetch(t, p, 3, leo, at(15))
	ps = c.take()
	if len(ps) != 1 {
		t.Fatalf("no new expansion after the ignored result: %+v", ps)
	}
	p.ApplyISRResult(ps[0], ISRResult{LeaderEpoch: 3, PartitionEpoch: 3, ISR: []int32{1, 2, 3}})
	if st := p.State(); !slices.Equal(st.ISR, []int32{1, 2, 3}) || st.PartitionEpoch != 3 {
		t.Fatalf("state after expansion %+v", st)
	}
	if s, e := c.ISRChanges(); s != 1 || e != 1 {
		t.Fatalf("ISR changes after the expansion: %d shrinks, %d expansions; want 1, 1 (the ignored results count for nothing)", s, e)
	}
	if g := c.Gauges(); g != (Gauges{Partitions: 1, Leaders: 1}) {
		t.Fatalf("gauges after the expansion: %+v", g)
	}
	fetch(t, p, 3, leo, at(16))
	if ps := c.take(); len(ps) != 0 {
		t.Fatalf("proposal for an ISR member: %+v", ps)
	}
}

// A shrink that commits once the follower it leaves out has caught up (it
// decided during a network cut, the controller reached after the heal)
// wakes the partition's listeners as a change: the follower's fetch
// session reads the partition at the next fetch, which proposes the
// expansion. Its fetch while the shrink was in flight could not.
func TestShrinkCommittedAfterCatchUpWakesListeners(t *testing.T) {
	c := newCluster(t)
	p := c.lead(t, testConfig(1), []int32{1, 2, 3}, []int32{1, 2, 3})
	leo := mustProduce(t, p, 5, 1).LastOffset + 1
	fetch(t, p, 2, leo, at(1))
	c.ShrinkISRs(at(11)) // 3 not caught up for the lag time
	ps := c.take()
	if len(ps) != 1 || !slices.Equal(ps[0].NewISR, []int32{1, 2}) {
		t.Fatalf("shrink proposals %+v, want one of ISR [1 2]", ps)
	}
	fetch(t, p, 3, leo, at(12)) // back, caught up, while the shrink is in flight
	if ps := c.take(); len(ps) != 0 {
		t.Fatalf("expansion proposed while the shrink is in flight: %+v", ps)
	}
	var l changeCounts
	p.AddListener(&l)
	defer p.RemoveListener(&l)
	p.ApplyISRResult(ps[0], ISRResult{LeaderEpoch: 3, PartitionEpoch: 2, ISR: []int32{1, 2}})
	if l.changes != 1 {
		t.Fatalf("listeners told of %d changes (%d HW moves) when the shrink committed, want 1", l.changes, l.hwOnly)
	}
	fetch(t, p, 3, leo, at(13))
	if ps := c.take(); len(ps) != 1 || !slices.Equal(ps[0].NewISR, []int32{1, 2, 3}) {
		t.Fatalf("expansion proposals at 3's next fetch %+v, want ISR [1 2 3]", ps)
	}
	p.ApplyISRResult(ps[0], ISRResult{LeaderEpoch: 3, PartitionEpoch: 3, ISR: []int32{1, 2, 3}})
	if l.changes != 1 {
		t.Fatalf("listeners told of a change when the expansion left no follower out (%d)", l.changes)
	}
}

// changeCounts is a Listener counting what it is told.
type changeCounts struct{ changes, hwOnly int }

func (c *changeCounts) PartitionChanged(onlyHW bool) {
	if onlyHW {
		c.hwOnly++
	} else {
		c.changes++
	}
}

func TestAcksAll(t *testing.T) {
	c := newCluster(t)
	p := c.lead(t, testConfig(2), []int32{1, 2}, []int32{1, 2})
	info := mustProduce(t, p, 2, -1)
	req := info.LastOffset + 1
	if done, err := p.Acked(req); done || err != nil {
		t.Fatalf("before the follower fetched: done %v err %v", done, err)
	}
	fetch(t, p, 2, req, at(1))
	if done, err := p.Acked(req); !done || err != nil {
		t.Fatalf("after the follower fetched: done %v err %v", done, err)
	}

	// The follower stops fetching; acks=all still appends (ISR 2 >= 2).
	info = mustProduce(t, p, 2, -1)
	req = info.LastOffset + 1
	c.ShrinkISRs(at(100))
	ps := c.take()
	if len(ps) != 1 {
		t.Fatalf("shrink proposals %+v", ps)
	}
	if done, err := p.Acked(req); done || err != nil {
		t.Fatalf("shrink in flight: done %v err %v", done, err)
	}
	p.ApplyISRResult(ps[0], ISRResult{LeaderEpoch: 3, PartitionEpoch: 2, ISR: []int32{1}})
	if done, err := p.Acked(req); !done || !errors.Is(err, ErrNotEnoughReplicasAfterAppend) {
		t.Fatalf("ISR shrank below min: done %v err %v, want NOT_ENOUGH_REPLICAS_AFTER_APPEND", done, err)
	}

	leo := p.LogEndOffset()
	if _, err := produceN(t, p, 1, -1); !errors.Is(err, ErrNotEnoughReplicas) {
		t.Fatalf("acks=all with ISR 1 < 2: %v", err)
	}
	if p.LogEndOffset() != leo {
		t.Fatal("refused produce was appended")
	}
	mustProduce(t, p, 1, 1) // acks=1 does not care

	if _, err := c.Become(testTP, [16]byte{1}, testConfig(2), State{Role: Follower, Leader: 2, LeaderEpoch: 4, Replicas: []int32{1, 2}}); err != nil {
		t.Fatal(err)
	}
	if done, err := p.Acked(req); !done || !errors.Is(err, ErrNotLeader) {
		t.Fatalf("after losing leadership: done %v err %v", done, err)
	}
}

func TestEnsureSoleLeader(t *testing.T) {
	m := newManager(t, t.TempDir())
	p, err := m.Ensure(testTP, [16]byte{1}, testConfig(1))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		info := mustProduce(t, p, 3, -1)
		if hw := p.HighWatermark(); hw != info.LastOffset+1 {
			t.Fatalf("HW %d, want the LEO %d", hw, info.LastOffset+1)
		}
		if done, err := p.Acked(info.LastOffset + 1); !done || err != nil {
			t.Fatalf("acks=all on a sole leader: done %v err %v", done, err)
		}
	}
	p.SetConfig(testConfig(2))
	if _, err := produceN(t, p, 1, -1); !errors.Is(err, ErrNotEnoughReplicas) {
		t.Fatalf("min.insync.replicas 2 on a sole leader: %v", err)
	}
	// No longer hosted: a produce waiting for acks ends.
	if err := m.Remove(testTP, false); err != nil {
		t.Fatal(err)
	}
	if done, err := p.Acked(p.LogEndOffset() + 1); !done || !errors.Is(err, ErrNotLeader) {
		t.Fatalf("removed partition: done %v err %v", done, err)
	}
}
