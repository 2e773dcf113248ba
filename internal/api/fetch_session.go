package api

// Incremental fetch sessions (KIP-227).
//
// A request with epoch -1 is a full, sessionless fetch (and closes the
// session it names). Epoch 0 is a full fetch that opens a new session (and
// closes the one it names). Epoch > 0 continues session SessionID: the
// request lists only added or changed partitions plus forgotten ones, and the
// response lists only partitions with records, an error, or a changed high
// watermark or log start offset. The session's epoch advances by one per
// fetch; a mismatch is INVALID_FETCH_SESSION_EPOCH, an unknown id
// FETCH_SESSION_ID_NOT_FOUND. The cache holds at most `slots` sessions
// (Kafka's max.incremental.fetch.session.cache.slots) and evicts the least
// recently used.

import (
	"container/list"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

type sessKey struct {
	topic     string
	partition int32
}

// sessPart is one partition of a fetch: what the client asked for and what
// the session last told it.
type sessPart struct {
	key         sessKey
	topicID     [16]byte
	fetchOffset int64
	maxBytes    int32
	leaderEpoch int32
	// last values sent in a response; -1 before the first.
	sentHW, sentLogStart int64
}

type fetchSession struct {
	id    int32
	epoch int32 // the epoch the next request must carry
	parts map[sessKey]*sessPart
	order []sessKey
	elem  *list.Element
}

func (s *fetchSession) upsert(p sessPart) {
	if cur, ok := s.parts[p.key]; ok {
		cur.topicID, cur.fetchOffset, cur.maxBytes, cur.leaderEpoch = p.topicID, p.fetchOffset, p.maxBytes, p.leaderEpoch
		return
	}
	p.sentHW, p.sentLogStart = -1, -1
	s.parts[p.key] = &p
	s.order = append(s.order, p.key)
}

func (s *fetchSession) forget(k sessKey) {
	if _, ok := s.parts[k]; !ok {
		return
	}
	delete(s.parts, k)
	for i, o := range s.order {
		if o == k {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
}

func (s *fetchSession) list() []*sessPart {
	out := make([]*sessPart, 0, len(s.order))
	for _, k := range s.order {
		out = append(out, s.parts[k])
	}
	return out
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

func (c *fetchSessions) remove(id int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.byID[id]; ok {
		c.lru.Remove(s.elem)
		delete(c.byID, id)
	}
}

// create opens a new session, evicting the least recently used one when the
// cache is full. It returns nil when slots is 0.
func (c *fetchSessions) create() *fetchSession {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.slots <= 0 {
		return nil
	}
	for len(c.byID) >= c.slots {
		old := c.lru.Back().Value.(*fetchSession)
		c.lru.Remove(old.elem)
		delete(c.byID, old.id)
	}
	id := rand.Int32N(1<<31-1) + 1
	for c.byID[id] != nil {
		id = rand.Int32N(1<<31-1) + 1
	}
	s := &fetchSession{id: id, epoch: 0, // the opening fetch advances it to 1
		parts: map[sessKey]*sessPart{}}
	s.elem = c.lru.PushFront(s)
	c.byID[id] = s
	return s
}

// lookup finds the session for an incremental fetch and checks its epoch.
func (c *fetchSessions) lookup(id, epoch int32) (*fetchSession, *kerr.Error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.byID[id]
	if !ok {
		return nil, kerr.FetchSessionIDNotFound
	}
	if s.epoch != epoch {
		return nil, kerr.InvalidFetchSessionEpoch
	}
	c.lru.MoveToFront(s.elem)
	return s, nil
}
