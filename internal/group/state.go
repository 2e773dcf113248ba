package group

// The states of a classic group and the transitions between them, as
// Kafka's GroupMetadata.validPreviousStates:
//
//	Empty               <- PreparingRebalance
//	PreparingRebalance  <- Stable, CompletingRebalance, Empty
//	CompletingRebalance <- PreparingRebalance
//	Stable              <- CompletingRebalance
//	Dead                <- Stable, PreparingRebalance, CompletingRebalance, Empty, Dead
//
// Empty: no members, offsets may remain (expired after
// offsets.retention.minutes). PreparingRebalance: members are (re)joining;
// JoinGroup answers wait. CompletingRebalance: the join answers are out,
// the leader's SyncGroup is awaited. Stable: assignments handed out.
// Dead: the group is gone (deleted, unloaded, expired).

import "fmt"

// State is a group's state.
type State int8

// The states.
const (
	Empty State = iota
	PreparingRebalance
	CompletingRebalance
	Stable
	Dead
)

var stateNames = [...]string{"Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"}

// String is Kafka's name of the state (DescribeGroups, ListGroups).
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", s)
}

// ParseState returns the state Kafka names s (case-insensitive, as
// ListGroups' states filter).
func ParseState(s string) (State, bool) {
	for i, n := range stateNames {
		if equalFold(n, s) {
			return State(i), true
		}
	}
	return 0, false
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

var validPrevious = map[State][]State{
	Empty:               {PreparingRebalance},
	PreparingRebalance:  {Stable, CompletingRebalance, Empty},
	CompletingRebalance: {PreparingRebalance},
	Stable:              {CompletingRebalance},
	Dead:                {Stable, PreparingRebalance, CompletingRebalance, Empty, Dead},
}

func canTransition(from, to State) bool {
	for _, s := range validPrevious[to] {
		if s == from {
			return true
		}
	}
	return false
}
