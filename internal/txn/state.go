package txn

// The states of a transactional id (Kafka's TransactionState) and the
// transitions between them, as Kafka's validPreviousStates:
//
//	to                  from
//	Empty               Empty, CompleteCommit, CompleteAbort
//	Ongoing             Ongoing, Empty, CompleteCommit, CompleteAbort
//	PrepareCommit       Ongoing
//	PrepareAbort        Ongoing, PrepareEpochFence
//	CompleteCommit      PrepareCommit
//	CompleteAbort       PrepareAbort
//	Dead                Empty, CompleteCommit, CompleteAbort
//	PrepareEpochFence   Ongoing
//
// Empty: an id with a producer id and epoch and no transaction.
// Ongoing: partitions (or a group's offsets) were added; the transaction
// is open. PrepareCommit/PrepareAbort: EndTxn (or the coordinator, on a
// timeout or a fence) decided; the markers are being written. Complete*:
// every marker is written. Dead: the id expired (its tombstone is
// written). PrepareEpochFence is never written: it is the pending state of
// an Ongoing transaction that InitProducerId or the timeout is aborting
// with a bumped epoch.

import "fmt"

// State is a transactional id's state; the values are those Kafka writes
// in __transaction_state (TransactionState.id).
type State int8

const (
	Empty             State = 0
	Ongoing           State = 1
	PrepareCommit     State = 2
	PrepareAbort      State = 3
	CompleteCommit    State = 4
	CompleteAbort     State = 5
	Dead              State = 6
	PrepareEpochFence State = 7

	// none is the pending state of an id with no transition under way.
	none State = -1
)

var stateNames = [...]string{"Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit",
	"CompleteAbort", "Dead", "PrepareEpochFence"}

// String is Kafka's name of the state (DescribeTransactions and
// ListTransactions answer it).
func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", int8(s))
}

// ParseState reads a state's name (ListTransactions' state filters).
func ParseState(name string) (State, bool) {
	for i, n := range stateNames {
		if n == name {
			return State(i), true
		}
	}
	return none, false
}

// validPrevious is the table above.
var validPrevious = map[State][]State{
	Empty:             {Empty, CompleteCommit, CompleteAbort},
	Ongoing:           {Ongoing, Empty, CompleteCommit, CompleteAbort},
	PrepareCommit:     {Ongoing},
	PrepareAbort:      {Ongoing, PrepareEpochFence},
	CompleteCommit:    {PrepareCommit},
	CompleteAbort:     {PrepareAbort},
	Dead:              {Empty, CompleteCommit, CompleteAbort},
	PrepareEpochFence: {Ongoing},
}

// CanTransition reports whether from → to is allowed.
func CanTransition(from, to State) bool {
	for _, s := range validPrevious[to] {
		if s == from {
			return true
		}
	}
	return false
}

// completed reports a state with no open transaction (Kafka's Empty,
// CompleteCommit and CompleteAbort: an id that may expire, may start a
// transaction, may take a new epoch).
func (s State) completed() bool {
	return s == Empty || s == CompleteCommit || s == CompleteAbort
}
