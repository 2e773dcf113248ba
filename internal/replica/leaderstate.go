package replica

import (
	"slices"
	"time"
)

// The leader's bookkeeping, pure: no goroutines, no I/O, no locks, times
// passed in. Partition holds one leaderState while it leads and guards it
// with its lmu.
//
//   - follower fetch state is Kafka's Replica.updateFetchState: a fetch at or
//     past the leader's log end offset (LEO) makes the follower caught up now;
//     one at or past the leader's LEO of its previous fetch makes it caught
//     up as of that previous fetch.
//   - high watermark (HW) = min LEO over the maximal ISR, the leader's own LEO
//     included; an ISR follower whose LEO is unknown holds it; it never moves
//     backwards.
//   - ISR changes (KIP-497): one proposal in flight at a time; while it is,
//     the maximal ISR (committed ∪ proposed) counts for the HW and acks=all.

// unknownOffset is the LEO of a follower that has not fetched from this
// leader yet.
const unknownOffset = -1

// follower is what the leader knows of one follower replica.
type follower struct {
	id               int32
	leo              int64     // fetch offset of its last fetch; unknownOffset before
	lastFetchLEO     int64     // the leader's LEO at its previous fetch
	lastFetchTime    time.Time // zero before the first fetch
	logStart         int64     // as its fetches report it (deleterecords.go); -1 unknown
	lastCaughtUpTime time.Time // zero: never caught up under this leader
	// clock, when set, is the fetch session the follower fetches this
	// partition in: a session fetch that leaves the partition out fetched
	// it at leo, at the clock's time (KIP-227; see listen.go).
	clock *FetchClock
}

func newFollower(id int32) follower {
	return follower{id: id, leo: unknownOffset, lastFetchLEO: unknownOffset, logStart: -1}
}

// fetched records a fetch at fetchOffset (the follower's LEO) made at now
// while the leader's LEO was leaderLEO.
func (f *follower) fetched(fetchOffset, leaderLEO int64, now time.Time) {
	switch {
	case fetchOffset >= leaderLEO:
		f.lastCaughtUpTime = later(f.lastCaughtUpTime, now)
	case fetchOffset >= f.lastFetchLEO:
		f.lastCaughtUpTime = later(f.lastCaughtUpTime, f.lastFetchTime)
	}
	f.leo = fetchOffset
	f.lastFetchLEO = max(leaderLEO, f.lastFetchLEO)
	f.lastFetchTime = now
}

// leoAdvanced is called when the leader's LEO moves past oldLEO. A follower
// fetching in a session at oldLEO was caught up at each of the session's
// fetches that left the partition out; the latest of them becomes its last
// fetch (at oldLEO) and its last caught-up time, as if each had been
// recorded with fetched.
func (ls *leaderState) leoAdvanced(oldLEO int64) {
	for i := range ls.followers {
		f := &ls.followers[i]
		if f.clock == nil || f.leo != oldLEO {
			continue
		}
		if t := f.clock.Last(); t.After(f.lastFetchTime) {
			f.lastFetchTime, f.lastFetchLEO = t, oldLEO
			f.lastCaughtUpTime = later(f.lastCaughtUpTime, t)
		}
	}
}

// caughtUp is Kafka's ReplicaState.isCaughtUp: at the leader's LEO, or
// caught up within maxLag.
func (f *follower) caughtUp(leaderLEO int64, now time.Time, maxLag time.Duration) bool {
	return f.leo == leaderLEO || now.Sub(f.lastCaughtUpTime) <= maxLag
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// leaderState is the leader's view of the partition's replication.
type leaderState struct {
	self           int32
	leaderEpoch    int32
	partitionEpoch int32
	isr            []int32 // committed ISR; the assignment is the partition's
	pending        *ISRProposal
	followers      []follower // one per assigned replica but the leader, fixed while leading
	epochStart     int64      // first offset of the current leader epoch

	// Room for the slices above at a small replication factor, so that
	// starting to lead is one allocation.
	isrBuf      [inlineReplicas]int32
	followerBuf [inlineReplicas - 1]follower
}

// inlineReplicas is the largest replication factor whose leader state
// holds its slices inline.
const inlineReplicas = 3

// newLeaderState starts leading st at now, the log end offset being
// leaderLEO (also the start offset of the new epoch). prev is the state of
// the previous epoch when this broker led already (Kafka's makeLeader with
// isNewLeader false): follower LEOs are kept then. Either way an ISR
// follower counts as caught up now, any other as never.
func newLeaderState(st State, leaderLEO int64, prev *leaderState, now time.Time) *leaderState {
	return newLeaderStateIn(nil, st, leaderLEO, prev, now)
}

// newLeaderStateIn is newLeaderState allocated from b.
func newLeaderStateIn(b *Batch, st State, leaderLEO int64, prev *leaderState, now time.Time) *leaderState {
	ls := b.leaderState() // zero: set field by field, not copied whole
	ls.self, ls.leaderEpoch, ls.partitionEpoch, ls.epochStart = st.Leader, st.LeaderEpoch, st.PartitionEpoch, leaderLEO
	if room := max(len(st.Replicas), len(st.ISR)); room <= len(ls.isrBuf) { // the ISR may grow to the replicas in place
		ls.isr = append(ls.isrBuf[:0:room], st.ISR...)
	} else {
		ls.isr = slices.Clone(st.ISR)
	}
	switch n := len(st.Replicas) - 1; {
	case n > len(ls.followerBuf):
		ls.followers = make([]follower, 0, n)
	case n > 0:
		ls.followers = ls.followerBuf[:0:n]
	}
	for _, id := range st.Replicas {
		if id == st.Leader || ls.follower(id) != nil {
			continue
		}
		f := newFollower(id)
		if old := prev.follower(id); old != nil {
			f.leo, f.lastFetchLEO, f.lastFetchTime, f.logStart = old.leo, leaderLEO, now, old.logStart
		}
		if slices.Contains(st.ISR, id) {
			f.lastCaughtUpTime = now
		}
		ls.followers = append(ls.followers, f)
	}
	return ls
}

// next is newLeaderState(st, leaderLEO, ls, now) for a leader that keeps
// its bookkeeping from one epoch to the next: when the followers are the
// same replicas in the same order (an ISR change, a new leader epoch with
// the assignment unchanged) ls is updated in place, allocating nothing;
// otherwise (nil ls included) a new state is built, from b. ls is not used
// after.
func (ls *leaderState) next(st State, leaderLEO int64, now time.Time, b *Batch) *leaderState {
	if ls == nil || ls.self != st.Leader || !ls.sameFollowers(st) {
		return newLeaderStateIn(b, st, leaderLEO, ls, now)
	}
	ls.leaderEpoch, ls.partitionEpoch = st.LeaderEpoch, st.PartitionEpoch
	ls.isr = copyInto(ls.isr, st.ISR)
	ls.pending, ls.epochStart = nil, leaderLEO
	for i := range ls.followers {
		f := &ls.followers[i]
		*f = follower{id: f.id, leo: f.leo, lastFetchLEO: leaderLEO, lastFetchTime: now, logStart: f.logStart}
		if slices.Contains(st.ISR, f.id) {
			f.lastCaughtUpTime = now
		}
	}
	return ls
}

// sameFollowers reports whether st's replicas but the leader, duplicates
// dropped, are ls's followers in order: what newLeaderState would list.
func (ls *leaderState) sameFollowers(st State) bool {
	n := 0
	for i, id := range st.Replicas {
		if id == st.Leader || slices.Contains(st.Replicas[:i], id) {
			continue
		}
		if n >= len(ls.followers) || ls.followers[n].id != id {
			return false
		}
		n++
	}
	return n == len(ls.followers)
}

// follower returns the state of replica id, nil if it is not a follower.
// A replication factor is small: a scan beats a map, and costs no
// allocation per partition led.
func (ls *leaderState) follower(id int32) *follower {
	if ls == nil {
		return nil
	}
	for i := range ls.followers {
		if ls.followers[i].id == id {
			return &ls.followers[i]
		}
	}
	return nil
}

// maximalISRSize is the size of the maximal ISR: the committed ISR united
// with the one in flight, the leader included (counted in place: every
// acks=all produce asks).
func (ls *leaderState) maximalISRSize() int {
	n := len(ls.isr)
	if !slices.Contains(ls.isr, ls.self) {
		n++
	}
	if ls.pending != nil {
		for _, id := range ls.pending.NewISR {
			if id != ls.self && !slices.Contains(ls.isr, id) {
				n++
			}
		}
	}
	return n
}

// committedISRSize is the size of the committed ISR, the leader included.
func (ls *leaderState) committedISRSize() int {
	if slices.Contains(ls.isr, ls.self) {
		return len(ls.isr)
	}
	return len(ls.isr) + 1
}

// highWatermark is min LEO over the maximal ISR, leaderLEO being the
// leader's own; an ISR member that is not a known follower, or has not
// fetched yet, gives unknownOffset. It walks the committed and proposed
// ISRs in place: it runs on every append and follower fetch.
func (ls *leaderState) highWatermark(leaderLEO int64) int64 {
	hw := leaderLEO
	var pending []int32
	if ls.pending != nil {
		pending = ls.pending.NewISR
	}
	for _, ids := range [2][]int32{ls.isr, pending} {
		for _, id := range ids {
			if id == ls.self {
				continue
			}
			f := ls.follower(id)
			if f == nil {
				return unknownOffset
			}
			hw = min(hw, f.leo)
		}
	}
	return hw
}

// advance returns the new HW when the rule moves it past cur.
func (ls *leaderState) advance(cur, leaderLEO int64) (int64, bool) {
	hw := ls.highWatermark(leaderLEO)
	return hw, hw > cur
}

// shrinkCandidates are the committed ISR followers not caught up: at the
// leader's LEO, or caught up within maxLag (Kafka's getOutOfSyncReplicas).
func (ls *leaderState) shrinkCandidates(leaderLEO int64, now time.Time, maxLag time.Duration) []int32 {
	var out []int32
	for _, id := range ls.isr {
		if id == ls.self {
			continue
		}
		if f := ls.follower(id); f == nil || !f.caughtUp(leaderLEO, now, maxLag) {
			out = append(out, id)
		}
	}
	return out
}

// canExpand reports whether follower id may join the ISR: an assigned
// follower outside the committed ISR whose LEO reached both the HW and the
// start of the current leader epoch (Kafka's isFollowerInSync).
func (ls *leaderState) canExpand(id int32, hw int64) bool {
	f := ls.follower(id)
	if f == nil || slices.Contains(ls.isr, id) {
		return false
	}
	return f.leo >= hw && f.leo >= ls.epochStart
}

// expandable reports whether some follower may join the ISR now
// (canExpand).
func (ls *leaderState) expandable(hw int64) bool {
	for i := range ls.followers {
		if ls.canExpand(ls.followers[i].id, hw) {
			return true
		}
	}
	return false
}

// propose records a proposal of newISR as in flight and returns it (TP and
// TopicID left for the caller). ok is false while another is in flight.
func (ls *leaderState) propose(newISR []int32) (ISRProposal, bool) {
	if ls.pending != nil {
		return ISRProposal{}, false
	}
	p := ISRProposal{LeaderEpoch: ls.leaderEpoch, PartitionEpoch: ls.partitionEpoch, NewISR: slices.Clone(newISR)}
	ls.pending = &p
	return p, true
}

// proposeExpand proposes the committed ISR plus id.
func (ls *leaderState) proposeExpand(id int32) (ISRProposal, bool) {
	return ls.propose(append(slices.Clone(ls.isr), id))
}

// proposeShrink proposes the committed ISR without out.
func (ls *leaderState) proposeShrink(out []int32) (ISRProposal, bool) {
	isr := slices.DeleteFunc(slices.Clone(ls.isr), func(id int32) bool { return slices.Contains(out, id) })
	return ls.propose(isr)
}

// applyResult ends the proposal in flight if prop is it (a result for any
// other is ignored: matched false). The controller's answer is adopted when
// it succeeded, is for this leader epoch and is newer than the committed
// partition epoch.
func (ls *leaderState) applyResult(prop ISRProposal, res ISRResult) (matched, adopted bool) {
	if ls.pending == nil || !sameProposal(*ls.pending, prop) {
		return false, false
	}
	ls.pending = nil
	if res.ErrorCode != 0 || res.LeaderEpoch != ls.leaderEpoch || res.PartitionEpoch <= ls.partitionEpoch {
		return true, false
	}
	ls.isr, ls.partitionEpoch = slices.Clone(res.ISR), res.PartitionEpoch
	return true, true
}

func sameProposal(a, b ISRProposal) bool {
	return a.LeaderEpoch == b.LeaderEpoch && a.PartitionEpoch == b.PartitionEpoch && slices.Equal(a.NewISR, b.NewISR)
}

// acked is Kafka's checkEnoughReplicasReachOffset for a leader whose HW is
// hw: done once hw reached requiredOffset, with enough false when the
// maximal ISR is then smaller than minISR.
func (ls *leaderState) acked(hw, requiredOffset int64, minISR int) (done, enough bool) {
	if hw < requiredOffset {
		return false, false
	}
	return true, ls.maximalISRSize() >= minISR
}
