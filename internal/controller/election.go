package controller

import "slices"

// The four leader-election strategies of Kafka's
// PartitionLeaderElectionAlgorithms, as pure functions. Each returns the new
// leader or -1 when none qualifies.

// offlineLeader: the first replica in assignment order that is live and in
// the ISR; failing that, with unclean election allowed, the first live
// replica (the caller then shrinks the ISR to it). unclean reports that.
func offlineLeader(assignment, isr []int32, live func(int32) bool, uncleanAllowed bool) (leader int32, unclean bool) {
	for _, r := range assignment {
		if live(r) && slices.Contains(isr, r) {
			return r, false
		}
	}
	if uncleanAllowed {
		for _, r := range assignment {
			if live(r) {
				return r, true
			}
		}
	}
	return -1, false
}

// reassignLeader: the first replica of the target assignment that is live
// and in the ISR.
func reassignLeader(target, isr []int32, live func(int32) bool) int32 {
	for _, r := range target {
		if live(r) && slices.Contains(isr, r) {
			return r
		}
	}
	return -1
}

// preferredLeader: only the first replica of the assignment, if live and in
// the ISR.
func preferredLeader(assignment, isr []int32, live func(int32) bool) int32 {
	if len(assignment) > 0 && live(assignment[0]) && slices.Contains(isr, assignment[0]) {
		return assignment[0]
	}
	return -1
}

// controlledShutdownLeader: the first replica that is live, in the ISR and
// not shutting down.
func controlledShutdownLeader(assignment, isr []int32, live func(int32) bool, shuttingDown func(int32) bool) int32 {
	for _, r := range assignment {
		if live(r) && slices.Contains(isr, r) && !shuttingDown(r) {
			return r
		}
	}
	return -1
}

func sortInt32s(s []int32) { slices.Sort(s) }

func sortStrings(s []string) { slices.Sort(s) }
