package broker

import (
	"context"
	"time"
)

// stallBeat is how often the broker tells its metadata cache it is running.
const stallBeat = 100 * time.Millisecond

// watchStalls beats the metadata cache's stall detection (metacache's
// ready.go): a process that did not run for the store session's timeout
// (SIGSTOP, a VM or GC stall) has lost its session even if the store has
// not told it yet. The cache stops serving clients at once; this goroutine
// then ends the session itself, so that keepSession registers the broker
// again and the controller sends it fresh metadata.
func (b *Broker) watchStalls(ctx context.Context) {
	stalled := make(chan time.Duration, 1)
	start := time.Now()
	b.cache.WatchStalls(b.cfg.MetadataStoreSessionTimeout, func() time.Duration { return time.Since(start) },
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
			b.log.Warn("process stalled past the store session timeout; not serving clients until registered again",
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
