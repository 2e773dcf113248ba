package replica

// The leader's replication path: follower fetches (which record the
// follower's progress, move the high watermark and may propose an ISR
// expansion), ISR shrinking, and the controller's answers to ISR proposals
// (AlterPartition, KIP-497). Proposals go to the function set with
// Manager.SetISRProposer, called without locks held; at most one per
// partition is in flight.

import (
	"math"
	"slices"
	"time"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/storage"
)

// ISRProposal is an ISR change the leader asks the controller for: NewISR at
// the leader and partition epochs the leader holds.
type ISRProposal struct {
	TP                          kafka.TopicPartition
	TopicID                     [16]byte
	LeaderEpoch, PartitionEpoch int32
	NewISR                      []int32
}

// ISRResult is the controller's answer to a proposal: on success the
// partition's new leader epoch, partition epoch and ISR.
type ISRResult struct {
	ErrorCode                   int16
	LeaderEpoch, PartitionEpoch int32
	ISR                         []int32
}

// FollowerRead serves a fetch of follower replicaID at fetchOffset (its log
// end offset): whole batches up to the log end offset, and the HW after the
// fetch. A broker that does not lead refuses with ErrNotLeader, a fetch from
// a broker outside the replicas with ErrNotAssigned, an offset outside the
// log with storage.ErrOffsetOutOfRange (the follower's state is not updated
// then). Otherwise the fetch is recorded (Kafka's updateFollowerFetchState):
// it may move the HW (waiters are woken) and propose the follower into the
// ISR.
func (p *Partition) FollowerRead(replicaID int32, fetchOffset int64, maxBytes int32, how storage.ReadHow, now time.Time) (storage.ReadResult, int64, error) {
	return p.followerRead(nil, replicaID, fetchOffset, maxBytes, how, now)
}

// followerRead is FollowerRead, for the fetch session whose clock is c (nil:
// sessionless).
func (p *Partition) followerRead(c *FetchClock, replicaID int32, fetchOffset int64, maxBytes int32, how storage.ReadHow, now time.Time) (storage.ReadResult, int64, error) {
	p.roleMu.RLock()
	if !p.leadingLocked() {
		p.roleMu.RUnlock()
		return storage.ReadResult{}, -1, ErrNotLeader
	}
	if replicaID == p.state.leader || !slices.Contains(p.state.replicas(), replicaID) {
		p.roleMu.RUnlock()
		return storage.ReadResult{}, -1, ErrNotAssigned
	}
	res, err := p.log.ReadAs(fetchOffset, math.MaxInt64, maxBytes, how)
	if err != nil {
		hw := p.log.HighWatermark()
		p.roleMu.RUnlock()
		return res, hw, err
	}
	p.lmu.Lock()
	moved, prop, proposed := p.followerFetchedLocked(c, replicaID, fetchOffset, res.LogEndOffset, now)
	p.lmu.Unlock()
	hw := p.log.HighWatermark()
	p.roleMu.RUnlock()
	if moved {
		p.wakeHW()
	}
	if proposed {
		p.mgr.propose(prop)
	}
	return res, hw, nil
}

// followerFetchedLocked records the fetch (lmu held, leading) with the
// leader's LEO at the read.
func (p *Partition) followerFetchedLocked(c *FetchClock, id int32, fetchOffset, leaderLEO int64, now time.Time) (moved bool, prop ISRProposal, proposed bool) {
	f := p.lead.follower(id)
	if f == nil {
		return false, ISRProposal{}, false
	}
	prevLEO := f.leo
	f.fetched(fetchOffset, leaderLEO, now)
	f.clock = c
	if p.mgr.hasProposer() && p.lead.canExpand(id, p.log.HighWatermark()) {
		prop, proposed = p.stampLocked(p.lead.proposeExpand(id))
	}
	if prevLEO != fetchOffset {
		moved = p.advanceHWLocked()
	}
	return moved, prop, proposed
}

// stampLocked completes a proposal the leader state made with the
// partition's identity.
func (p *Partition) stampLocked(prop ISRProposal, ok bool) (ISRProposal, bool) {
	if !ok {
		return ISRProposal{}, false
	}
	p.lead.pending.TP, p.lead.pending.TopicID = p.TP, p.TopicID
	prop.TP, prop.TopicID, prop.NewISR = p.TP, p.TopicID, slices.Clone(prop.NewISR)
	return prop, true
}

// ApplyISRResult ends the proposal prop with the controller's answer (a
// result for a proposal no longer in flight, e.g. from before a leader
// change, is ignored). A success for this leader epoch with a newer
// partition epoch is adopted: ISR and partition epoch. The HW is then
// re-evaluated against the new maximal ISR. A follower whose expansion was
// refused is proposed again at a later fetch of the partition (Kafka: the
// next one; a fetch session reads each of its partitions at least every
// few seconds).
//
// An adopted result that leaves out a follower already caught up (its
// expansion could not be proposed while this proposal was in flight, as
// when a shrink decided during a network cut commits after the heal) wakes
// the partition's listeners as a change, not a move of the HW alone: a
// follower's fetch session then reads the partition at its next fetch,
// which proposes the expansion, as Kafka's leader does at the next fetch.
// Otherwise a partition refusing appends for want of min.insync.replicas
// changes no more, and its followers' sessions would read it only at their
// sweep, 10 s on.
func (p *Partition) ApplyISRResult(prop ISRProposal, res ISRResult) {
	p.roleMu.Lock()
	if !p.leadingLocked() || p.lead == nil {
		p.roleMu.Unlock()
		return
	}
	p.lmu.Lock()
	matched, adopted := p.lead.applyResult(prop, res)
	if adopted {
		p.mgr.countISRChange(len(p.state.isr()), len(res.ISR))
		p.state.setISR(res.ISR)
		p.state.partitionEpoch = res.PartitionEpoch
	}
	moved := matched && p.advanceHWLocked()
	rejoin := adopted && p.lead.expandable(p.log.HighWatermark())
	p.lmu.Unlock()
	p.roleMu.Unlock()
	switch {
	case rejoin:
		p.wakeAll()
	case moved:
		p.wakeHW()
	}
}

// maybeShrinkISR proposes the ISR without its followers that have not
// caught up for longer than replica.lag.time.max.ms (Kafka's maybeShrinkIsr)
// unless a proposal is in flight.
func (p *Partition) maybeShrinkISR(now time.Time) (ISRProposal, bool) {
	p.roleMu.RLock()
	defer p.roleMu.RUnlock()
	if !p.leadingLocked() {
		return ISRProposal{}, false
	}
	lag := p.Config().lagTimeMax()
	p.lmu.Lock()
	defer p.lmu.Unlock()
	if p.lead == nil || p.lead.pending != nil || len(p.lead.followers) == 0 {
		return ISRProposal{}, false
	}
	out := p.lead.shrinkCandidates(p.log.LogEndOffset(), now, lag)
	if len(out) == 0 {
		return ISRProposal{}, false
	}
	return p.stampLocked(p.lead.proposeShrink(out))
}

// SetISRProposer sets the function that sends ISR proposals to the
// controller (AlterPartition); without one, partitions propose nothing.
// It is called without partition locks held and must not block long.
func (m *Manager) SetISRProposer(f func(ISRProposal)) {
	if f == nil {
		m.proposer.Store(nil)
		return
	}
	m.proposer.Store(&f)
}

func (m *Manager) hasProposer() bool { return m != nil && m.proposer.Load() != nil }

func (m *Manager) propose(prop ISRProposal) {
	if f := m.proposer.Load(); f != nil {
		(*f)(prop)
	}
}

// ShrinkISRs proposes, for every partition this broker leads, the ISR
// without the followers not caught up for longer than the partition's
// replica.lag.time.max.ms. The broker calls it every half of that time.
func (m *Manager) ShrinkISRs(now time.Time) {
	if !m.hasProposer() {
		return
	}
	m.mu.RLock()
	parts := m.allLocked()
	m.mu.RUnlock()
	for _, p := range parts {
		if prop, ok := p.maybeShrinkISR(now); ok {
			m.propose(prop)
		}
	}
}
