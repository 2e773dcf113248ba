package replica

import (
	"errors"
	"slices"
)

// Errors of controller decisions a partition refuses.
var (
	// ErrStaleLeaderEpoch: the decision's leader epoch is not newer than the
	// one the partition holds (Kafka answers STALE_CONTROLLER_EPOCH).
	ErrStaleLeaderEpoch = errors.New("replica: leader epoch is not newer than the current one")
	// ErrInconsistentTopicID: the partition or its log on disk belongs to
	// another topic with the same name (Kafka: INCONSISTENT_TOPIC_ID).
	ErrInconsistentTopicID = errors.New("replica: topic id differs from the partition's")
)

// Role is what this broker does for a partition.
type Role int8

const (
	// Leader accepts produce and serves consumers.
	Leader Role = iota
	// Follower refuses both (NOT_LEADER_OR_FOLLOWER); it will replicate from
	// the leader once follower fetching exists.
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

// State returns a copy of the partition's leadership state.
func (p *Partition) State() State {
	p.roleMu.RLock()
	defer p.roleMu.RUnlock()
	return p.state.clone()
}

// IsLeader reports whether this broker leads the partition.
func (p *Partition) IsLeader() bool {
	p.roleMu.RLock()
	defer p.roleMu.RUnlock()
	return p.state.Role == Leader
}

// LeaderEpoch returns the leader epoch this broker knows (0 until a
// controller decides).
func (p *Partition) LeaderEpoch() int32 {
	p.roleMu.RLock()
	defer p.roleMu.RUnlock()
	return p.state.LeaderEpoch
}

// apply installs st if it is newer than what the partition holds. It waits
// for appends in flight, so none completes under the old role afterwards.
func (p *Partition) apply(st State) error {
	p.roleMu.Lock()
	if p.decided && st.LeaderEpoch <= p.state.LeaderEpoch {
		p.roleMu.Unlock()
		return ErrStaleLeaderEpoch
	}
	p.state, p.decided = st.clone(), true
	p.roleMu.Unlock()
	p.wakeAll() // waiting fetches re-check the role
	return nil
}
