package producerid

import (
	"testing"

	"github.com/samsa-kafka/samsa/internal/metadata"
)

// step is one call on an allocator: take (want id, ok, claim) or claimed
// (block b arrives).
type step struct {
	claimed *metadata.ProducerIDBlock
	id      int64
	ok      bool
	claim   bool
}

func take(id int64, ok, claim bool) step { return step{id: id, ok: ok, claim: claim} }
func arrive(first, last int64) step {
	return step{claimed: &metadata.ProducerIDBlock{First: first, Last: last}}
}

func TestAllocator(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []step
	}{{
		name: "no block: claim once, then wait",
		steps: []step{
			take(0, false, true),
			take(0, false, false), // the claim is under way
			arrive(0, 9),
			take(0, true, false),
		},
	}, {
		name: "prefetch at 90%, switch when used up",
		steps: []step{
			take(0, false, true), arrive(100, 109),
			take(100, true, false), take(101, true, false), take(102, true, false),
			take(103, true, false), take(104, true, false), take(105, true, false),
			take(106, true, false), take(107, true, false),
			take(108, true, true), // the 9th of 10 ids: 90%
			take(109, true, false),
			arrive(200, 209),
			take(200, true, false),
		},
	}, {
		name: "used up before the next block arrives",
		steps: []step{
			take(0, false, true), arrive(0, 1),
			take(0, true, false),
			take(1, true, true),
			take(0, false, false), take(0, false, false),
			arrive(2, 3),
			take(2, true, false),
			take(3, true, true),
		},
	}, {
		// A block of 1000: the claim starts at the 900th id.
		name: "kafka-sized block",
		steps: append(append([]step{take(0, false, true), arrive(0, 999)},
			takes(0, 899)...), take(899, true, true), take(900, true, false)),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAllocator()
			for i, s := range tc.steps {
				if s.claimed != nil {
					a.claimed(*s.claimed)
					continue
				}
				id, ok, claim := a.take()
				if ok != s.ok || claim != s.claim || (ok && id != s.id) {
					t.Fatalf("step %d: take = %d %v %v, want %d %v %v", i, id, ok, claim, s.id, s.ok, s.claim)
				}
			}
		})
	}
}

// takes are the takes of ids from..to-1 with no claim.
func takes(from, to int64) []step {
	var out []step
	for id := from; id < to; id++ {
		out = append(out, take(id, true, false))
	}
	return out
}

func TestAllocatorIssued(t *testing.T) {
	a := newAllocator()
	for _, id := range []int64{-1, 0, 5} {
		if a.issued(id) {
			t.Fatalf("fresh allocator: issued(%d)", id)
		}
	}
	a.claimed(metadata.ProducerIDBlock{First: 1000, Last: 1999})
	a.saw(999) // an older block read later does not lower the mark
	for id, want := range map[int64]bool{-1: false, 0: true, 1999: true, 2000: false} {
		if a.issued(id) != want {
			t.Errorf("issued(%d) = %v, want %v", id, !want, want)
		}
	}
	a.saw(4999)
	if !a.issued(4999) || a.issued(5000) {
		t.Fatal("saw(4999) did not raise the mark to 4999")
	}
}
