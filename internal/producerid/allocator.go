package producerid

import "github.com/samsa-kafka/samsa/internal/metadata"

// prefetchTenths is the share of a block handed out, in tenths, after which
// the next block is claimed (Kafka's PidPrefetchThreshold, 0.90).
const prefetchTenths = 9

// allocator hands out the ids of the current block in order and says when
// to claim the next one. At most one claim is outstanding; a claimed block
// waits as next until the current one is used up.
type allocator struct {
	cur      metadata.ProducerIDBlock // Size 0 before the first block
	used     int64                    // ids of cur handed out
	next     metadata.ProducerIDBlock
	hasNext  bool
	claiming bool
	highest  int64 // highest block end seen in the store, -1 for none
}

func newAllocator() allocator {
	return allocator{cur: metadata.ProducerIDBlock{First: 0, Last: -1}, highest: -1}
}

// take hands out the next id; ok is false when no block has an id left.
// claim is true when the caller must start claiming the next block.
func (a *allocator) take() (id int64, ok, claim bool) {
	if a.used == a.cur.Size() && a.hasNext {
		a.cur, a.used, a.hasNext = a.next, 0, false
	}
	if a.used < a.cur.Size() {
		id, ok = a.cur.First+a.used, true
		a.used++
	}
	return id, ok, a.startClaim()
}

// startClaim marks a claim outstanding, and says so, if none is, no block
// waits, and at least 90% of the current block is used (an empty current
// block counts as used).
func (a *allocator) startClaim() bool {
	if a.claiming || a.hasNext || a.used*10 < a.cur.Size()*prefetchTenths {
		return false
	}
	a.claiming = true
	return true
}

// claimed ends the outstanding claim with block b.
func (a *allocator) claimed(b metadata.ProducerIDBlock) {
	a.claiming = false
	a.next, a.hasNext = b, true
	a.saw(b.Last)
}

// saw records a block end read from the store.
func (a *allocator) saw(end int64) { a.highest = max(a.highest, end) }

// issued reports whether id lies in a block claimed so far as this
// allocator knows.
func (a *allocator) issued(id int64) bool { return issuedUpTo(a.highest, id) }

// issuedUpTo: id lies in a block claimed so far when blocks up to highest
// (their last id) have been claimed.
func issuedUpTo(highest, id int64) bool { return id >= 0 && id <= highest }
