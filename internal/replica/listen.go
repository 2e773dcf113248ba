package replica

// What fetch sessions (KIP-227, internal/api) keep on a partition across
// fetches, so that a session fetch costs nothing for the partitions it
// leaves out:
//
//   - a Listener, registered once per session and partition, is told of
//     every change that may change a fetch answer (new data, high watermark,
//     role, leader epoch, truncation, end of an ISR proposal): the session
//     reads only the partitions it was told about, instead of registering a
//     waiter on every partition and reading all of them at every fetch;
//   - a FetchClock, one per follower session, holds the time of its latest
//     fetch. A partition the session left out of a fetch was fetched at the
//     follower's last recorded offset, which was then the leader's log end
//     offset (else the session would have read it). The leader records those
//     implicit fetches only when its log end offset moves past that offset
//     (leaderState.leoAdvanced), which is when Kafka's bookkeeping of them
//     starts to matter: a follower at the log end offset is caught up
//     whatever its fetch times.

import (
	"sync/atomic"
	"time"

	"github.com/samsa-kafka/samsa/internal/storage"
)

// Listener is told (without blocking, with the partition's lock held: it
// must not call back into the partition) that the partition changed;
// onlyHW when the high watermark moved and nothing else (a follower's fetch
// need not be answered for that alone).
type Listener interface{ PartitionChanged(onlyHW bool) }

// AddListener registers l for every later change.
func (p *Partition) AddListener(l Listener) {
	p.mu.Lock()
	ws := p.watchersLocked()
	if ws.listeners == nil {
		ws.listeners = map[Listener]struct{}{}
	}
	ws.listeners[l] = struct{}{}
	p.mu.Unlock()
}

// RemoveListener unregisters l.
func (p *Partition) RemoveListener(l Listener) {
	p.mu.Lock()
	if p.watch != nil {
		delete(p.watch.listeners, l)
	}
	p.mu.Unlock()
}

// FetchClock is the time of the latest fetch of one follower's fetch
// session. Safe for concurrent use.
type FetchClock struct{ ns atomic.Int64 }

// Fetched records a fetch of the session at now.
func (c *FetchClock) Fetched(now time.Time) { c.ns.Store(now.UnixNano()) }

// Last is the time of the latest fetch, zero before the first.
func (c *FetchClock) Last() time.Time {
	ns := c.ns.Load()
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// FollowerReadInSession is FollowerRead for a fetch session of the follower
// whose clock is c: the partitions the session leaves out of later fetches
// count as fetched at the clock's times (see the file comment) until
// ReleaseFetchClock or a sessionless fetch.
func (p *Partition) FollowerReadInSession(c *FetchClock, replicaID int32, fetchOffset int64, maxBytes int32, how storage.ReadHow, now time.Time) (storage.ReadResult, int64, error) {
	return p.followerRead(c, replicaID, fetchOffset, maxBytes, how, now)
}

// ReleaseFetchClock ends the implicit fetches of replicaID's session c (the
// session forgot the partition or closed).
func (p *Partition) ReleaseFetchClock(replicaID int32, c *FetchClock) {
	p.lmu.Lock()
	if f := p.lead.follower(replicaID); f != nil && f.clock == c {
		f.clock = nil
	}
	p.lmu.Unlock()
}
