package metacache

import (
	"math"
	"time"
)

// The Cache's fields for readiness (cache.go): rd (guarded by mu) and its
// lock-free mirrors readyCh, st and lastBeat.

// Readiness: a broker serves clients only once it is registered and has
// applied an UpdateMetadata that its controller sent after learning of that
// registration (one carrying the registration's broker epoch or a newer
// one). Before that the cache may be empty (a broker just started) or stale
// (a broker whose store session expired), and a client answered from it
// would see a cluster without brokers, controller or topics.
//
// The broker calls Unready when its registration is gone (start, session
// expiry) and SetBrokerEpoch when it has registered again; the cache becomes
// ready when both the registration and a matching UpdateMetadata are there,
// in either order (the controller may learn of the registration and send
// its UpdateMetadata before the broker's register call returns).

// readiness is the Cache's part for it, guarded by Cache.mu.
type readiness struct {
	ready bool
	// need is the broker epoch an UpdateMetadata must carry (at least) to
	// make the cache ready: the current registration's, or MaxInt64 while
	// the broker is not registered.
	need int64
	// applied is the highest broker epoch of an applied UpdateMetadata.
	applied int64
	ch      chan struct{} // closed when ready
}

// newReadyChLocked gives readiness a new, open channel and publishes it.
func (c *Cache) newReadyChLocked() {
	ch := make(chan struct{})
	c.rd.ch = ch
	c.readyCh.Store(&ch)
}

// Ready returns a channel that is closed once the broker may serve clients
// (see readiness above). After Unready, call Ready again for the new
// channel. Every client request asks it, so it takes no lock: the channel
// is published in readyCh, and the stall check reads atomics.
func (c *Cache) Ready() <-chan struct{} {
	if c.stalled() {
		c.Beat() // the first request after a stall: unready before it is answered
	}
	return *c.readyCh.Load()
}

// IsReady reports whether the broker may serve clients now.
func (c *Cache) IsReady() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.rd.ready
}

// Unready marks the broker's registration gone: clients wait until it has
// registered again (SetBrokerEpoch) and applied an UpdateMetadata for that
// registration.
func (c *Cache) Unready() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.unreadyLocked()
}

func (c *Cache) unreadyLocked() {
	c.rd.need = math.MaxInt64
	if c.rd.ready {
		c.rd.ready = false
		c.newReadyChLocked()
	}
}

// registeredLocked records a new registration's epoch.
func (c *Cache) registeredLocked(epoch int64) {
	if c.rd.ready {
		return
	}
	c.rd.need = epoch
	c.checkReadyLocked()
}

// appliedLocked records an applied UpdateMetadata's broker epoch.
func (c *Cache) appliedLocked(brokerEpoch int64) {
	c.rd.applied = max(c.rd.applied, brokerEpoch)
	c.checkReadyLocked()
}

func (c *Cache) checkReadyLocked() {
	if !c.rd.ready && c.rd.applied >= c.rd.need {
		c.rd.ready = true
		close(c.rd.ch)
	}
}

// Stalls: a process that did not run for at least its store session's
// timeout (SIGSTOP, a VM or GC stall) has lost its session in the store
// even if it has not heard yet, so its cache may be stale. The broker
// beats (Beat) every few hundred milliseconds; a beat, or a Ready call,
// that finds the last beat a session timeout ago marks the cache unready
// at once, before any request of the resumed process is answered from it,
// and tells the broker (onStall) to end its session and register again.

// stall is the Cache's part for it, set once by WatchStalls (nil before:
// no stall detection); the last beat is Cache.lastBeat.
type stall struct {
	limit   time.Duration
	now     func() time.Duration
	onStall func(gap time.Duration)
}

// WatchStalls turns stall detection on: a gap of at least limit between
// beats is a stall, reported to onStall (called without the cache's lock;
// it must not block). now is a monotonic clock.
func (c *Cache) WatchStalls(limit time.Duration, now func() time.Duration, onStall func(gap time.Duration)) {
	c.lastBeat.Store(int64(now()))
	c.st.Store(&stall{limit: limit, now: now, onStall: onStall})
}

// Beat records that the process is running. Of concurrent beats after a
// stall, the first to swap the last beat's time reports it.
func (c *Cache) Beat() {
	st := c.st.Load()
	if st == nil {
		return
	}
	now := st.now()
	gap := now - time.Duration(c.lastBeat.Swap(int64(now)))
	if gap < st.limit {
		return
	}
	c.mu.Lock()
	c.unreadyLocked()
	c.mu.Unlock()
	st.onStall(gap)
}

// stalled reports whether the last beat is a stall's length ago.
func (c *Cache) stalled() bool {
	st := c.st.Load()
	return st != nil && st.now()-time.Duration(c.lastBeat.Load()) >= st.limit
}
