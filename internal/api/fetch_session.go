package api

// Incremental fetch sessions (KIP-227).
//
// A request with epoch -1 is a full, sessionless fetch (and closes the
// session it names). Epoch 0 is a full fetch that opens a new session (and
// closes the one it names). Epoch > 0 continues session SessionID: the
// request lists only added or changed partitions plus forgotten ones, and the
// response lists only partitions with records, an error, or a changed high
// watermark or log start offset. The session's epoch advances by one per
// fetch, as soon as the fetch is accepted; a mismatch, or a second fetch
// while one still uses the session, is INVALID_FETCH_SESSION_EPOCH, an
// unknown id FETCH_SESSION_ID_NOT_FOUND.
// Partitions that returned records in an incremental response move to the
// end of the session's order, so that a response cut at MaxBytes does not
// starve the partitions behind them.
//
// The cache holds at most `slots` sessions (Kafka's
// max.incremental.fetch.session.cache.slots). A new follower session evicts
// the least recently used consumer session, or else the least recently used
// follower session; a new consumer session evicts only consumer sessions
// (Kafka privileges replica sessions the same way), and when every slot
// holds a follower session the consumer fetches without one.
//
// A session listens to its partitions (replica.Listener) for as long as it
// holds them: each change marks the partition dirty and wakes the fetch
// waiting on the session. A follower's incremental fetch reads only dirty
// partitions (and the ones its request changed); the others are unchanged
// since the session last read them, at the follower's log end offset, so
// their answer would be empty. Their fetch is still recorded, through the
// session's replica.FetchClock. Every sessionSweepInterval a follower's fetch
// reads all of its partitions anyway: what no event announces (a follower
// caught up but left out of the ISR because its expansion was refused, to
// be proposed again; a moved log start offset) is caught up with then.
// Consumer sessions read every partition at every fetch, as Kafka does.

import (
	"container/list"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/replica"
)

// sessionSweepInterval is how often a follower session's fetch reads every
// partition of the session, not only the changed ones.
const sessionSweepInterval = 10 * time.Second

// fetchPart is one partition of a fetch request.
type fetchPart struct {
	key         kafka.TopicPartition
	topicID     [16]byte
	fetchOffset int64
	maxBytes    int32
	leaderEpoch int32
	logStart    int64 // a follower's log start offset (DeleteRecords' low watermark)
}

// sessPart is one partition of a fetch: what the client asked for and what
// the session last told it.
type sessPart struct {
	fetchPart
	// last values sent in a response; -1 before the first.
	sentHW, sentLogStart int64
	sentLSO              int64

	// Session bookkeeping; nil sess for sessionless fetches.
	sess       *fetchSession
	prev, next *sessPart          // session order
	p          *replica.Partition // listened to (guarded by the fetch using the session)
	gone       bool               // forgotten or session closed (guarded by sess.mu)
	dirty      bool               // in sess.dirty (guarded by sess.mu)

	// The result of the fetch numbered accGen is at accAt (fetchAcc).
	accGen uint64
	accAt  int
}

// PartitionChanged implements replica.Listener. A follower's fetch is not
// woken for a move of the high watermark alone (as Kafka's delayed fetch
// completes on bytes only): the partition is read at its next pass, at the
// latest when it times out, and the new HW goes out then.
func (sp *sessPart) PartitionChanged(onlyHW bool) {
	sp.sess.mark(sp, !(onlyHW && sp.sess.follower))
}

type fetchSession struct {
	id        int32
	epoch     int32 // the epoch the next request must carry
	follower  bool
	replicaID int32
	clock     *replica.FetchClock // follower sessions
	lastSweep time.Time           // last fetch that read every partition
	parts     map[kafka.TopicPartition]*sessPart
	head      *sessPart // session order: head ... tail
	tail      *sessPart
	elem      *list.Element
	// busy: a fetch is using the session; closed: it left the cache (both
	// guarded by the cache's mu). The fetch using a closed session
	// releases it when done.
	busy, closed bool

	mu    sync.Mutex
	dirty []*sessPart
	wake  chan struct{} // wakes the fetch using the session
}

func newFetchSession(id int32, replicaID int32) *fetchSession {
	s := &fetchSession{id: id, epoch: 1, // the opening fetch is epoch 0
		follower: replicaID >= 0, replicaID: replicaID, wake: make(chan struct{}, 1)}
	if s.follower {
		s.clock = &replica.FetchClock{}
	}
	return s
}

// upsert adds p or updates the session's copy; a new or changed partition
// is marked dirty (its first read starts listening to it). It returns the
// session's copy and whether it is new.
func (s *fetchSession) upsert(p fetchPart) (*sessPart, bool) {
	var slab sessSlab
	return s.upsertFrom(&slab, &p, 1)
}

// upsertAll is upsert for every partition of ps (a follower's first fetches
// list thousands), the new ones taken from slabs.
func (s *fetchSession) upsertAll(ps []fetchPart) {
	var slab sessSlab
	for i := range ps {
		s.upsertFrom(&slab, &ps[i], len(ps)-i)
	}
}

// upsertFrom is upsert taking a new partition from slab, which may make
// room for up to more of them.
func (s *fetchSession) upsertFrom(slab *sessSlab, p *fetchPart, more int) (*sessPart, bool) {
	if cur, ok := s.parts[p.key]; ok {
		if cur.fetchPart != *p {
			cur.fetchPart = *p
			s.markDirty(cur)
		}
		return cur, false
	}
	if s.parts == nil {
		s.parts = make(map[kafka.TopicPartition]*sessPart, more)
	}
	np := slab.next(more)
	*np = sessPart{fetchPart: *p, sentHW: -1, sentLogStart: -1, sentLSO: -1, sess: s}
	s.parts[p.key] = np
	s.pushBack(np)
	s.markDirty(np)
	return np, true
}

// sessSlab hands out new session partitions from arrays of up to slabParts
// of them: one allocation for many. A partition keeps its array alive
// while the session holds it (or a fetch, a partition's listeners), so an
// array may outlive its forgotten partitions by up to slabParts-1 of them;
// the bound keeps that small.
//
// Evidence: BenchmarkFirstFetch (a follower's first fetch of 16k
// partitions) ~48 -> 29-30 ms, 14.8 -> 9.4 MB, 33600 -> ~1100 allocs/op
// (commit 6f057c7, with the request's partitions in one array).
type sessSlab struct{ free []sessPart }

const slabParts = 128

// next returns a zero partition; more is how many the caller may still
// ask for, this one included.
func (s *sessSlab) next(more int) *sessPart {
	if len(s.free) == 0 {
		s.free = make([]sessPart, max(1, min(more, slabParts)))
	}
	sp := &s.free[0]
	s.free = s.free[1:]
	return sp
}

// forget drops k from the session and returns it (nil if absent) for the
// caller to stop listening.
func (s *fetchSession) forget(k kafka.TopicPartition) *sessPart {
	sp, ok := s.parts[k]
	if !ok {
		return nil
	}
	delete(s.parts, k)
	s.unlink(sp)
	s.mu.Lock()
	sp.gone = true
	s.mu.Unlock()
	return sp
}

func (s *fetchSession) pushBack(sp *sessPart) {
	sp.prev, sp.next = s.tail, nil
	if s.tail != nil {
		s.tail.next = sp
	} else {
		s.head = sp
	}
	s.tail = sp
}

func (s *fetchSession) unlink(sp *sessPart) {
	if sp.prev != nil {
		sp.prev.next = sp.next
	} else {
		s.head = sp.next
	}
	if sp.next != nil {
		sp.next.prev = sp.prev
	} else {
		s.tail = sp.prev
	}
	sp.prev, sp.next = nil, nil
}

// moveToBack puts sp last in the session order (KIP-227 rotation).
func (s *fetchSession) moveToBack(sp *sessPart) {
	if s.tail == sp {
		return
	}
	s.unlink(sp)
	s.pushBack(sp)
}

// list returns the partitions in session order.
func (s *fetchSession) list() []*sessPart {
	out := make([]*sessPart, 0, len(s.parts))
	for sp := s.head; sp != nil; sp = sp.next {
		out = append(out, sp)
	}
	return out
}

// markDirty queues sp for the next read and wakes the waiting fetch.
func (s *fetchSession) markDirty(sp *sessPart) { s.mark(sp, true) }

// mark queues sp for the next read, waking the waiting fetch if wake.
func (s *fetchSession) mark(sp *sessPart, wake bool) {
	s.mu.Lock()
	if !sp.dirty && !sp.gone {
		sp.dirty = true
		s.dirty = append(s.dirty, sp)
	}
	s.mu.Unlock()
	if wake {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// takeDirty returns the dirty partitions still in the session, oldest
// first, and clears them.
func (s *fetchSession) takeDirty() []*sessPart {
	s.mu.Lock()
	d := s.dirty
	s.dirty = nil
	n := 0
	for _, sp := range d {
		sp.dirty = false
		if !sp.gone {
			d[n] = sp
			n++
		}
	}
	s.mu.Unlock()
	return d[:n]
}

// release stops listening to sp's partition and ends the session's
// implicit fetches of it.
func (s *fetchSession) release(sp *sessPart) {
	if sp.p == nil {
		return
	}
	sp.p.RemoveListener(sp)
	if s.follower {
		sp.p.ReleaseFetchClock(s.replicaID, s.clock)
	}
	sp.p = nil
}

// close releases every partition of a session that left the cache, once no
// fetch uses it.
func (s *fetchSession) close() {
	s.mu.Lock()
	for _, sp := range s.parts {
		sp.gone = true
	}
	s.mu.Unlock()
	for _, sp := range s.parts {
		s.release(sp)
	}
}

func nextEpoch(e int32) int32 {
	if e == 1<<31-1 {
		return 1
	}
	return e + 1
}

type fetchSessions struct {
	mu    sync.Mutex
	slots int
	byID  map[int32]*fetchSession
	lru   *list.List // front = most recently used
	now   func() time.Time
}

func newFetchSessions(slots int, now func() time.Time) *fetchSessions {
	return &fetchSessions{slots: slots, byID: map[int32]*fetchSession{}, lru: list.New(), now: now}
}

// remove closes session id, if cached.
func (c *fetchSessions) remove(id int32) {
	c.mu.Lock()
	s, ok := c.byID[id]
	idle := ok && c.dropLocked(s)
	c.mu.Unlock()
	if idle {
		s.close()
	}
}

// dropLocked takes s out of the cache; it reports whether no fetch uses it,
// in which case the caller closes it.
func (c *fetchSessions) dropLocked(s *fetchSession) bool {
	c.lru.Remove(s.elem)
	delete(c.byID, s.id)
	s.closed = true
	return !s.busy
}

// done ends the fetch using s; a session that left the cache meanwhile is
// closed now.
func (c *fetchSessions) done(s *fetchSession) {
	c.mu.Lock()
	s.busy = false
	closed := s.closed
	c.mu.Unlock()
	if closed {
		s.close()
	}
}

// create opens a new session for replicaID (-1: a consumer), evicting as the
// file comment says, in use by the caller (see done). It returns nil when no
// slot can be had.
func (c *fetchSessions) create(replicaID int32) *fetchSession {
	c.mu.Lock()
	if c.slots <= 0 {
		c.mu.Unlock()
		return nil
	}
	var evicted []*fetchSession
	for len(c.byID) >= c.slots {
		old := c.victimLocked(replicaID >= 0)
		if old == nil {
			break
		}
		if c.dropLocked(old) {
			evicted = append(evicted, old)
		}
	}
	var s *fetchSession
	if len(c.byID) < c.slots {
		id := rand.Int32N(1<<31-1) + 1
		for c.byID[id] != nil {
			id = rand.Int32N(1<<31-1) + 1
		}
		s = newFetchSession(id, replicaID)
		s.busy = true
		s.elem = c.lru.PushFront(s)
		c.byID[id] = s
	}
	c.mu.Unlock()
	for _, old := range evicted {
		old.close()
	}
	return s
}

// victimLocked is the session a new one evicts: the least recently used
// consumer session, else, for a follower, the least recently used session.
func (c *fetchSessions) victimLocked(follower bool) *fetchSession {
	for e := c.lru.Back(); e != nil; e = e.Prev() {
		if s := e.Value.(*fetchSession); !s.follower {
			return s
		}
	}
	if follower && c.lru.Len() > 0 {
		return c.lru.Back().Value.(*fetchSession)
	}
	return nil
}

// lookup finds the session for an incremental fetch, checks its epoch and
// advances it, and marks it in use by the caller (see done): a second fetch
// with the same epoch, or while the session is in use, is refused.
func (c *fetchSessions) lookup(id, epoch int32) (*fetchSession, *kerr.Error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.byID[id]
	if !ok {
		return nil, kerr.FetchSessionIDNotFound
	}
	if s.epoch != epoch || s.busy {
		return nil, kerr.InvalidFetchSessionEpoch
	}
	s.busy = true
	s.epoch = nextEpoch(s.epoch)
	c.lru.MoveToFront(s.elem)
	return s, nil
}
