package replica

import (
	"fmt"
	"slices"
	"time"
)

// Role is what this broker does for a partition.
type Role int8

const (
	// Leader accepts produce and serves consumers.
	Leader Role = iota
	// Follower refuses both (NOT_LEADER_OR_FOLLOWER) and replicates from
	// the leader (the fetcher calls AppendAsFollower and the truncations).
	Follower
)

func (r Role) String() string {
	if r == Leader {
		return "leader"
	}
	return "follower"
}

// State is a partition's leadership as the controller last decided it: the
// partition state of a LeaderAndIsr request.
type State struct {
	Role           Role
	Leader         int32
	LeaderEpoch    int32
	PartitionEpoch int32 // version of the partition state in the store (Kafka's zkVersion)
	Replicas       []int32
	ISR            []int32
}

func (s State) clone() State {
	s.Replicas, s.ISR = slices.Clone(s.Replicas), slices.Clone(s.ISR)
	return s
}

// copyInto returns a copy of src, in dst's array when it fits.
func copyInto(dst, src []int32) []int32 {
	if dst == nil || cap(dst) < len(src) {
		return slices.Clone(src)
	}
	return append(dst[:0], src...)
}

// State returns a copy of the partition's leadership state.
func (p *Partition) State() State {
	p.roleMu.RLock()
	defer p.roleMu.RUnlock()
	return p.state.toState()
}

// IsLeader reports whether this broker leads the partition.
func (p *Partition) IsLeader() bool {
	p.roleMu.RLock()
	defer p.roleMu.RUnlock()
	return p.leadingLocked()
}

// leadingLocked reports (roleMu held) whether this broker leads the
// partition and still hosts it.
func (p *Partition) leadingLocked() bool { return p.state.role == Leader && !p.removed }

// detach marks the partition as no longer hosted (Manager.Remove): it leads
// nothing any more, so produce waiting for acks=all ends with ErrNotLeader.
func (p *Partition) detach() {
	p.roleMu.Lock()
	p.removed = true
	p.detached.Store(true)
	p.roleMu.Unlock()
	p.wakeAll()
}

// Detached reports whether the partition stopped being hosted
// (Manager.Remove): a holder of the partition must look it up again, a new
// partition may host it now.
func (p *Partition) Detached() bool { return p.detached.Load() }

// LeaderEpoch returns the leader epoch this broker knows (0 until a
// controller decides).
func (p *Partition) LeaderEpoch() int32 {
	p.roleMu.RLock()
	defer p.roleMu.RUnlock()
	return p.state.leaderEpoch
}

// CheckLeaderEpoch validates the current leader epoch a client or follower
// sent (KIP-320): -1 skips the check, an older one is ErrFencedLeaderEpoch,
// a newer one ErrUnknownLeaderEpoch.
func (p *Partition) CheckLeaderEpoch(current int32) error {
	if current == -1 {
		return nil
	}
	ours := p.LeaderEpoch()
	switch {
	case current < ours:
		return ErrFencedLeaderEpoch
	case current > ours:
		return ErrUnknownLeaderEpoch
	}
	return nil
}

// apply installs st if it is newer than what the partition holds. It waits
// for appends in flight, so none completes under the old role afterwards.
// Becoming leader assigns the new epoch's start offset in the log and resets
// the followers' state; becoming follower drops the leader's bookkeeping and
// leaves the log alone (the fetcher truncates it).
//
// What a first decision allocates comes from b (nil: on its own).
func (p *Partition) apply(st State, now time.Time, b *Batch) error {
	p.roleMu.Lock()
	if p.decided && st.LeaderEpoch <= p.state.leaderEpoch {
		p.roleMu.Unlock()
		return ErrStaleLeaderEpoch
	}
	if st.Role == Leader {
		if err := p.becomeLeaderLocked(st, now, b); err != nil {
			p.roleMu.Unlock()
			return err
		}
	} else {
		p.lmu.Lock()
		p.lead = nil
		p.lmu.Unlock()
	}
	p.state.assign(st, b)
	p.decided = true
	p.roleMu.Unlock()
	p.wakeAll() // waiting fetches re-check the role and the HW
	return nil
}

// becomeLeaderLocked is Kafka's makeLeader for the log and the bookkeeping
// (roleMu held for writing): the epoch starts at the log end offset unless
// the log knows it already, the HW is kept and advances at once if the ISR
// holds no follower.
func (p *Partition) becomeLeaderLocked(st State, now time.Time, b *Batch) error {
	leo, hw, err := p.log.StartLeaderEpoch(st.LeaderEpoch)
	if err != nil {
		return fmt.Errorf("replica: %s: start leader epoch %d: %w", p.TP, st.LeaderEpoch, err)
	}
	p.lmu.Lock()
	p.lead = p.lead.next(st, leo, now, b)
	// What advanceHWLocked does, from the offsets just read: no append
	// runs while roleMu is held for writing.
	if hw, ok := p.lead.advance(hw, leo); ok {
		p.log.SetHighWatermark(hw)
	}
	p.lmu.Unlock()
	return nil
}
