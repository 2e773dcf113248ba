package broker

import (
	"context"
	"time"
)

// stallBeat is how often the broker tells its metadata cache it is running.
const stallBeat = 100 * time.Millisecond

// watchStalls beats the metadata cache's stall detection (metacache's
// ready.go): a process that did not run for long enough (SIGSTOP, a VM or
// GC stall) may have lost its session even if the store has not told it
// yet. The cache stops serving clients at once; this goroutine then ends
// the session itself, so that keepSession registers the broker again and
// the controller sends it fresh metadata.
//
// Long enough is half the session timeout (stallLimit), not all of it: the
// session's clock runs from its last renewal, not from the stall's start.
// etcd's client renews a lease every third of its TTL, checking every
// 500 ms, ZooKeeper's pings every third of the session timeout, so a stall
// that begins just before a renewal is due can lose the session after half
// the timeout (3 s: a renewal at most 1.5 s before it); an e2e run saw a
// broker continued 2–3 s after a stop answer from its stale metadata.
func (b *Broker) watchStalls(ctx context.Context) {
	stalled := make(chan time.Duration, 1)
	start := time.Now()
	b.cache.WatchStalls(stallLimit(b.cfg.MetadataStoreSessionTimeout), func() time.Duration { return time.Since(start) },
		func(gap time.Duration) {
			select {
			case stalled <- gap:
			default:
			}
		})
	t := time.NewTicker(stallBeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			b.cache.Beat()
		case gap := <-stalled:
			b.log.Warn("process stalled for half the store session timeout or more (its session may have expired); not serving clients until registered again",
				"stalled", gap.Round(time.Millisecond), "session_timeout", b.cfg.MetadataStoreSessionTimeout)
			b.sessMu.Lock()
			sess := b.sess
			b.sessMu.Unlock()
			if sess != nil {
				sess.Close() // its lease has expired: keepSession registers again
			}
		}
	}
}

// stallLimit is the stall after which a session of timeout may be gone.
func stallLimit(timeout time.Duration) time.Duration { return timeout / 2 }
