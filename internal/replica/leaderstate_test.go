package replica

// Pure tests of the leader's bookkeeping (leaderstate.go): times are passed
// in, no storage, no goroutines.

import (
	"slices"
	"testing"
	"time"
)

var t0 = time.Unix(1000, 0)

func at(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

// leading returns the state of leader 1 of replicas 1,2,3 with the given
// ISR, at epoch 5 / partition epoch 7, the epoch starting at epochStart.
func leading(isr []int32, epochStart int64) *leaderState {
	st := State{Role: Leader, Leader: 1, LeaderEpoch: 5, PartitionEpoch: 7, Replicas: []int32{1, 2, 3}, ISR: isr}
	return newLeaderState(st, epochStart, nil, t0)
}

// withLEOs sets follower LEOs (-1 stays unknown).
func withLEOs(ls *leaderState, leos map[int32]int64) *leaderState {
	for id, leo := range leos {
		ls.follower(id).leo = leo
	}
	return ls
}

func TestFollowerFetchState(t *testing.T) {
	f := new(follower)
	*f = newFollower(2)
	steps := []struct {
		name        string
		fetchOffset int64
		leaderLEO   int64
		now         time.Time
		wantCaught  time.Time
	}{
		{"first fetch behind: never caught up", 5, 10, at(1), time.Time{}},
		{"reached the leader's LEO of the previous fetch: caught up as of then", 10, 15, at(2), at(1)},
		{"behind both: unchanged", 12, 20, at(3), at(1)},
		{"at the leader's LEO: caught up now", 20, 20, at(4), at(4)},
		{"behind again, previous LEO reached: keeps the later time", 20, 30, at(5), at(4)},
		{"past the previous LEO (30 > 20 seen at 5s): caught up as of 5s", 30, 40, at(6), at(5)},
	}
	for _, s := range steps {
		f.fetched(s.fetchOffset, s.leaderLEO, s.now)
		if !f.lastCaughtUpTime.Equal(s.wantCaught) || f.leo != s.fetchOffset || !f.lastFetchTime.Equal(s.now) {
			t.Fatalf("%s: caught up %v leo %d last fetch %v; want %v %d %v", s.name,
				f.lastCaughtUpTime, f.leo, f.lastFetchTime, s.wantCaught, s.fetchOffset, s.now)
		}
	}
}

func TestHighWatermarkRule(t *testing.T) {
	cases := []struct {
		name      string
		ls        *leaderState
		leaderLEO int64
		cur       int64
		want      int64
		advanced  bool
	}{
		{"sole leader (Ensure): its LEO", newLeaderState(State{}, 0, nil, t0), 10, 3, 10, true},
		{"min over the ISR", withLEOs(leading([]int32{1, 2, 3}, 0), map[int32]int64{2: 5, 3: 7}), 10, 0, 5, true},
		{"leader behind followers never happens, still min", withLEOs(leading([]int32{1, 2}, 0), map[int32]int64{2: 9}), 8, 0, 8, true},
		{"unknown LEO of an ISR follower holds it", withLEOs(leading([]int32{1, 2, 3}, 0), map[int32]int64{2: 9}), 10, 4, -1, false},
		{"follower outside the ISR does not hold it", withLEOs(leading([]int32{1, 2}, 0), map[int32]int64{2: 9, 3: 1}), 10, 0, 9, true},
		{"never decreases", withLEOs(leading([]int32{1, 2}, 0), map[int32]int64{2: 5}), 10, 8, 5, false},
		{"ISR without the leader listed: leader still counts", withLEOs(leading([]int32{2}, 0), map[int32]int64{2: 9}), 6, 0, 6, true},
	}
	for _, c := range cases {
		hw, ok := c.ls.advance(c.cur, c.leaderLEO)
		if ok != c.advanced || (ok && hw != c.want) {
			t.Errorf("%s: advance(%d, %d) = %d, %v; want %d, %v", c.name, c.cur, c.leaderLEO, hw, ok, c.want, c.advanced)
		}
		if got := c.ls.highWatermark(c.leaderLEO); got != c.want {
			t.Errorf("%s: rule gives %d, want %d", c.name, got, c.want)
		}
	}
}

func TestMaximalISRWhileInFlight(t *testing.T) {
	// Expansion in flight: the joining follower counts at once (it holds
	// the HW and counts for acks=all) though the committed ISR is smaller.
	ls := withLEOs(leading([]int32{1, 2}, 0), map[int32]int64{2: 10, 3: 4})
	if got := ls.highWatermark(10); got != 10 {
		t.Fatalf("before: HW %d, want 10", got)
	}
	if _, ok := ls.proposeExpand(3); !ok {
		t.Fatal("no proposal")
	}
	if got, want := ls.maximalISR(), []int32{1, 2, 3}; !slices.Equal(got, want) {
		t.Fatalf("maximal ISR %v, want %v", got, want)
	}
	if got := len(ls.committedISR()); got != 2 {
		t.Fatalf("committed ISR size %d, want 2", got)
	}
	if ls.maximalISRSize() != 3 || ls.committedISRSize() != 2 {
		t.Fatalf("sizes counted in place: maximal %d, committed %d; want 3, 2", ls.maximalISRSize(), ls.committedISRSize())
	}
	if got := ls.highWatermark(10); got != 4 {
		t.Fatalf("expanding: HW %d, want 4", got)
	}

	// Shrink in flight: the leaving follower still counts until committed.
	ls = withLEOs(leading([]int32{1, 2, 3}, 0), map[int32]int64{2: 10, 3: 4})
	prop, ok := ls.proposeShrink([]int32{3})
	if !ok || !slices.Equal(prop.NewISR, []int32{1, 2}) {
		t.Fatalf("shrink proposal %v %v", prop, ok)
	}
	if got := ls.highWatermark(10); got != 4 {
		t.Fatalf("shrinking: HW %d, want 4", got)
	}
	if matched, adopted := ls.applyResult(prop, ISRResult{LeaderEpoch: 5, PartitionEpoch: 8, ISR: []int32{1, 2}}); !matched || !adopted {
		t.Fatalf("result: matched %v adopted %v", matched, adopted)
	}
	if got := ls.highWatermark(10); got != 10 {
		t.Fatalf("shrunk: HW %d, want 10", got)
	}
}

func TestShrinkCandidates(t *testing.T) {
	const lag = 10 * time.Second
	ls := leading([]int32{1, 2, 3}, 0) // ISR followers caught up as of t0
	if got := ls.shrinkCandidates(50, at(10), lag); len(got) != 0 {
		t.Fatalf("within the lag time: %v", got)
	}
	if got := ls.shrinkCandidates(50, at(11), lag); !slices.Equal(got, []int32{2, 3}) {
		t.Fatalf("never fetched past the lag time: %v, want [2 3]", got)
	}
	ls.follower(2).fetched(50, 50, at(5)) // caught up at 5s
	ls.follower(3).fetched(40, 50, at(5)) // behind
	if got := ls.shrinkCandidates(60, at(14), lag); !slices.Equal(got, []int32{3}) {
		t.Fatalf("at 14s: %v, want [3]", got)
	}
	if got := ls.shrinkCandidates(60, at(16), lag); !slices.Equal(got, []int32{2, 3}) {
		t.Fatalf("at 16s: %v, want [2 3]", got)
	}
	// At the leader's LEO a follower is in sync however long ago it caught up.
	if got := ls.shrinkCandidates(50, at(100), lag); !slices.Equal(got, []int32{3}) {
		t.Fatalf("idle partition: %v, want [3]", got)
	}
	// Only ISR members are candidates.
	ls = leading([]int32{1, 2}, 0)
	if got := ls.shrinkCandidates(50, at(100), lag); !slices.Equal(got, []int32{2}) {
		t.Fatalf("outside the ISR: %v, want [2]", got)
	}
}

func TestCanExpand(t *testing.T) {
	ls := withLEOs(leading([]int32{1, 2}, 20), map[int32]int64{2: 30, 3: 25})
	cases := []struct {
		name string
		id   int32
		hw   int64
		want bool
	}{
		{"in sync and past the epoch start", 3, 25, true},
		{"below the HW", 3, 26, false},
		{"already in the ISR", 2, 0, false},
		{"not a replica", 4, 0, false},
		{"the leader itself", 1, 0, false},
	}
	for _, c := range cases {
		if got := ls.canExpand(c.id, c.hw); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// Reached the HW but not the start of the leader's epoch.
	ls = withLEOs(leading([]int32{1, 2}, 20), map[int32]int64{3: 15})
	if ls.canExpand(3, 10) {
		t.Error("below the epoch start: eligible")
	}
	// Unknown LEO.
	if leading([]int32{1}, 0).canExpand(2, 0) {
		t.Error("unknown LEO: eligible")
	}
}

func TestISRProposalResults(t *testing.T) {
	ls := leading([]int32{1, 2}, 0)
	prop, ok := ls.proposeExpand(3)
	if !ok || prop.LeaderEpoch != 5 || prop.PartitionEpoch != 7 || !slices.Equal(prop.NewISR, []int32{1, 2, 3}) {
		t.Fatalf("proposal %+v %v", prop, ok)
	}
	if _, ok := ls.proposeShrink([]int32{2}); ok {
		t.Fatal("second proposal while one is in flight")
	}
	other := prop
	other.PartitionEpoch = 6
	ok3 := ISRResult{LeaderEpoch: 5, PartitionEpoch: 8, ISR: []int32{1, 2, 3}}
	if matched, _ := ls.applyResult(other, ok3); matched {
		t.Fatal("result of another proposal ended the one in flight")
	}
	if ls.pending == nil {
		t.Fatal("in flight cleared by another proposal's result")
	}

	steps := []struct {
		name         string
		res          ISRResult
		adopted      bool
		wantISR      []int32
		wantPartEpch int32
	}{
		{"error: dropped", ISRResult{ErrorCode: 75, LeaderEpoch: 5, PartitionEpoch: 8, ISR: []int32{1, 2, 3}}, false, []int32{1, 2}, 7},
		{"other leader epoch: dropped", ISRResult{LeaderEpoch: 6, PartitionEpoch: 8, ISR: []int32{1, 2, 3}}, false, []int32{1, 2}, 7},
		{"partition epoch not newer: dropped", ISRResult{LeaderEpoch: 5, PartitionEpoch: 7, ISR: []int32{1, 2, 3}}, false, []int32{1, 2}, 7},
		{"success: adopted", ok3, true, []int32{1, 2, 3}, 8},
	}
	for i, s := range steps {
		p := prop
		if i > 0 { // the first step ends the proposal made above
			var ok bool
			if p, ok = ls.propose([]int32{1, 2, 3}); !ok {
				t.Fatalf("%s: cannot propose", s.name)
			}
		}
		matched, adopted := ls.applyResult(p, s.res)
		if !matched || adopted != s.adopted || ls.pending != nil {
			t.Fatalf("%s: matched %v adopted %v pending %v", s.name, matched, adopted, ls.pending)
		}
		if !slices.Equal(ls.isr, s.wantISR) || ls.partitionEpoch != s.wantPartEpch {
			t.Fatalf("%s: ISR %v epoch %d, want %v %d", s.name, ls.isr, ls.partitionEpoch, s.wantISR, s.wantPartEpch)
		}
	}
	// A repeated result for the same proposal is ignored.
	if matched, _ := ls.applyResult(prop, ok3); matched {
		t.Fatal("result applied twice")
	}
}

func TestAcked(t *testing.T) {
	cases := []struct {
		name     string
		ls       *leaderState
		hw, req  int64
		minISR   int
		done, ok bool
	}{
		{"HW below: waits", leading([]int32{1, 2, 3}, 0), 9, 10, 2, false, false},
		{"HW reached, ISR big enough", leading([]int32{1, 2, 3}, 0), 10, 10, 3, true, true},
		{"HW reached, ISR shrank below min", leading([]int32{1}, 0), 12, 10, 2, true, false},
		{"sole leader, min 1", newLeaderState(State{}, 0, nil, t0), 10, 10, 1, true, true},
	}
	for _, c := range cases {
		done, ok := c.ls.acked(c.hw, c.req, c.minISR)
		if done != c.done || (done && ok != c.ok) {
			t.Errorf("%s: done %v enough %v, want %v %v", c.name, done, ok, c.done, c.ok)
		}
	}
	// The maximal ISR counts: a shrink in flight does not fail acks yet.
	ls := leading([]int32{1, 2}, 0)
	if _, ok := ls.proposeShrink([]int32{2}); !ok {
		t.Fatal("no proposal")
	}
	if done, ok := ls.acked(10, 10, 2); !done || !ok {
		t.Fatalf("shrink in flight: done %v enough %v", done, ok)
	}
}

func TestNewLeaderStateReset(t *testing.T) {
	st := State{Role: Leader, Leader: 1, LeaderEpoch: 5, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2}}
	prev := withLEOs(newLeaderState(st, 0, nil, t0), map[int32]int64{2: 8, 3: 6})
	st.LeaderEpoch = 6

	fresh := newLeaderState(st, 10, nil, at(5)) // was follower: everything unknown
	reelected := newLeaderState(st, 10, prev, at(5))
	for _, c := range []struct {
		name      string
		ls        *leaderState
		leo2      int64
		leo3      int64
		caught2   time.Time
		caught3   time.Time
		fetchLEO2 int64
	}{
		{"new leader", fresh, -1, -1, at(5), time.Time{}, -1},
		{"re-elected leader", reelected, 8, 6, at(5), time.Time{}, 10},
	} {
		f2, f3 := c.ls.follower(2), c.ls.follower(3)
		if f2.leo != c.leo2 || f3.leo != c.leo3 || !f2.lastCaughtUpTime.Equal(c.caught2) ||
			!f3.lastCaughtUpTime.Equal(c.caught3) || f2.lastFetchLEO != c.fetchLEO2 {
			t.Errorf("%s: f2 %+v f3 %+v", c.name, *f2, *f3)
		}
		if c.ls.epochStart != 10 || c.ls.leaderEpoch != 6 || c.ls.pending != nil {
			t.Errorf("%s: epoch start %d epoch %d pending %v", c.name, c.ls.epochStart, c.ls.leaderEpoch, c.ls.pending)
		}
	}
}

// A follower whose session left a caught-up partition out of its fetches
// (KIP-227) is recorded, when the leader's LEO moves, as having fetched at
// the session's latest fetch: as Kafka records every fetch, the partition
// included. A follower behind, or not fetching in a session, is untouched.
func TestImplicitSessionFetches(t *testing.T) {
	ls := withLEOs(leading([]int32{1, 2, 3}, 0), map[int32]int64{2: 10, 3: 10})
	c := &FetchClock{}
	ls.follower(2).fetched(10, 10, at(1))
	ls.follower(2).clock = c
	ls.follower(3).fetched(10, 10, at(1)) // sessionless
	c.Fetched(at(20))
	ls.leoAdvanced(10)
	f2, f3 := ls.follower(2), ls.follower(3)
	if !f2.lastCaughtUpTime.Equal(at(20)) || !f2.lastFetchTime.Equal(at(20)) || f2.lastFetchLEO != 10 {
		t.Fatalf("session follower: caught up %v last fetch %v at LEO %d; want 20s, 20s, 10", f2.lastCaughtUpTime, f2.lastFetchTime, f2.lastFetchLEO)
	}
	if !f3.lastCaughtUpTime.Equal(at(1)) {
		t.Fatalf("sessionless follower caught up %v, want 1s", f3.lastCaughtUpTime)
	}
	if out := ls.shrinkCandidates(12, at(45), 30*time.Second); !slices.Equal(out, []int32{3}) {
		t.Fatalf("shrink candidates at 45s: %v, want [3]", out)
	}
	// Behind the old LEO: its session fetches read it, nothing implicit.
	c.Fetched(at(30))
	f2.leo = 11
	ls.leoAdvanced(12)
	if !f2.lastCaughtUpTime.Equal(at(20)) {
		t.Fatalf("follower behind: caught up %v, want still 20s", f2.lastCaughtUpTime)
	}
}

// committedISR is the committed ISR, the leader included (the reference
// committedISRSize counts).
func (ls *leaderState) committedISR() []int32 {
	return union(ls.isr, []int32{ls.self})
}

// maximalISR is the committed ISR united with the one in flight, the
// leader included (the reference maximalISRSize and highWatermark walk).
func (ls *leaderState) maximalISR() []int32 {
	isr := ls.committedISR()
	if ls.pending != nil {
		isr = union(isr, ls.pending.NewISR)
	}
	return isr
}

// union is a ∪ b in order of first appearance.
func union(a, b []int32) []int32 {
	out := slices.Clone(a)
	for _, id := range b {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// The leader keeps one follower state per assigned replica but itself, even
// when the assignment names one twice, and finds none for other ids.
func TestLeaderStateFollowers(t *testing.T) {
	ls := newLeaderState(State{Leader: 1, Replicas: []int32{2, 1, 3, 2}, ISR: []int32{1, 2}}, 0, nil, t0)
	if len(ls.followers) != 2 || ls.follower(2) == nil || ls.follower(3) == nil || ls.follower(1) != nil || ls.follower(4) != nil {
		t.Fatalf("followers %+v", ls.followers)
	}
	if ls.follower(2).lastCaughtUpTime != t0 || !ls.follower(3).lastCaughtUpTime.IsZero() {
		t.Fatalf("caught up: ISR follower %v, other %v", ls.follower(2).lastCaughtUpTime, ls.follower(3).lastCaughtUpTime)
	}
}
