// The fetcher's work lists and the phase changes that feed them (Caller
// holds f.mu throughout). A round looks only at these lists, never at every
// partition: a state is queued as pending when its fetch state may have
// changed, listed as delayed while it backs off and as truncating while it
// needs an OffsetForLeaderEpoch. Each list is a slice of states with a flag
// on the state saying it is listed, so that queueing costs no map
// operation; a state that left a list (a delay ended, a phase changed, a
// re-target replaced it: gone) is dropped from it lazily, when the list is
// next walked. Removed partitions are listed by name in forgot, for the
// session to forget.
package fetcher

import (
	"log/slog"
	"time"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// plan picks the partitions ready for truncation, else builds the next
// Fetch (nil when there is nothing to fetch), else says how long to sleep
// (0: until woken). A Truncating partition without any epoch is truncated
// here, locally.
func (f *fetcher) plan(now time.Time) (trunc []askEntry, fr *fetchRound, wait time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	wait = f.endDelays(now)
	kept := f.truncs[:0]
	for _, ps := range f.truncs {
		if ps.gone || ps.phase != truncating || ps.delayed {
			ps.inTruncs = false
			continue
		}
		p := ps.target.Partition
		latest, ok := p.LatestEpoch()
		if epoch, ok := askEpoch(latest, ok, ps.askEpoch); ok {
			trunc = append(trunc, askEntry{ps.target.TP, ps, epoch})
			kept = append(kept, ps)
			continue
		}
		ps.inTruncs = false
		tp := ps.target.TP
		if off, needed := noEpochTruncation(p.LogEndOffset(), p.LogStartOffset()); needed {
			f.log.Info("replica fetcher: no leader epoch, refetching the whole log", "partition", tp, "offset", off)
			if err := truncateLog(p, off); err != nil {
				f.partitionFailed(tp, ps, now, "truncation failed", err)
				continue
			}
		}
		f.setFetching(tp, ps)
	}
	clear(f.truncs[len(kept):])
	f.truncs = kept
	if len(trunc) > 0 {
		return trunc, nil, 0
	}
	return nil, f.buildFetchLocked(wait), wait
}

// endDelays ends the delays that are over at now (their partitions go back
// to their phase's list) and returns the time to the next end (0: none).
func (f *fetcher) endDelays(now time.Time) (wait time.Duration) {
	kept := f.delayed[:0]
	for _, ps := range f.delayed {
		if ps.gone || !ps.delayed {
			continue
		}
		if !ps.ready(now) {
			if d := ps.delayUntil.Sub(now); wait == 0 || d < wait {
				wait = d
			}
			kept = append(kept, ps)
			continue
		}
		ps.delayed = false
		if ps.phase == truncating {
			f.listTruncating(ps)
		}
		f.queue(ps)
	}
	clear(f.delayed[len(kept):])
	f.delayed = kept
	return wait
}

// queue marks ps pending: the next request reconsiders it.
func (f *fetcher) queue(ps *partState) {
	if !ps.queued {
		ps.queued = true
		f.pending = append(f.pending, ps)
	}
}

// listTruncating lists ps among the Truncating states.
func (f *fetcher) listTruncating(ps *partState) {
	if !ps.inTruncs {
		ps.inTruncs = true
		f.truncs = append(f.truncs, ps)
	}
}

// current reports whether ps is still its partition's state, in phase ph.
func (f *fetcher) current(ps *partState, ph phase) bool {
	return ps != nil && !ps.gone && ps.phase == ph
}

// fetchable reports whether ps is fetched now.
func (f *fetcher) fetchable(ps *partState) bool {
	return ps != nil && !ps.gone && ps.phase == fetching && !ps.delayed
}

// setFetching moves ps to Fetching.
func (f *fetcher) setFetching(_ kafka.TopicPartition, ps *partState) {
	ps.phase, ps.askEpoch = fetching, -1
	f.queue(ps)
}

// setTruncating moves ps (back) to Truncating.
func (f *fetcher) setTruncating(_ kafka.TopicPartition, ps *partState) {
	ps.phase = truncating
	if !ps.delayed {
		f.listTruncating(ps)
	}
	f.queue(ps)
}

// fence stops fetching ps until a re-target (AddPartitions) replaces it: the
// leader fenced its leader epoch.
func (f *fetcher) fence(tp kafka.TopicPartition, ps *partState) {
	if f.debug() {
		f.log.Debug("replica fetcher: leader epoch fenced; awaiting a LeaderAndIsr", "partition", tp, "leaderEpoch", ps.target.LeaderEpoch)
	}
	ps.phase, ps.delayed = fenced, false
	f.queue(ps) // the session forgets it
}

// delay backs ps off for d.
func (f *fetcher) delay(_ kafka.TopicPartition, ps *partState, now time.Time, d time.Duration) {
	ps.delayUntil = now.Add(d)
	if !ps.delayed {
		ps.delayed = true
		f.delayed = append(f.delayed, ps)
	}
	f.queue(ps)
}

// retryLater backs ps off after the leader refused it: briefly at first
// (firstRetry; the leader is often about to apply the LeaderAndIsr that
// makes it leader), doubling up to Config.Backoff.
func (f *fetcher) retryLater(tp kafka.TopicPartition, ps *partState, now time.Time) {
	d := min(f.cfg.Backoff, firstRetry<<min(ps.refusals, 20))
	ps.refusals++
	f.delay(tp, ps, now, d)
}

// partitionFailed logs err and backs ps off.
func (f *fetcher) partitionFailed(tp kafka.TopicPartition, ps *partState, now time.Time, msg string, err error) {
	f.log.Warn("replica fetcher: "+msg, "partition", ps.target.TP, "phase", ps.phase, "err", err)
	f.delay(tp, ps, now, f.cfg.Backoff)
}

// changedWants is what the next incremental request must reconsider: the
// current states queued (fetchable or not) and the removed partitions not
// hosted again, each once; the lists are emptied.
func (f *fetcher) changedWants() []want {
	wants := make([]want, 0, len(f.pending)+len(f.forgot))
	for _, ps := range f.pending {
		switch {
		case ps.gone: // its partition is queued anew or in forgot
		case f.fetchable(ps):
			wants = append(wants, f.wantLocked(ps.target.TP, ps))
		default:
			wants = append(wants, want{tp: ps.target.TP})
		}
	}
	if len(f.forgot) > 0 {
		seen := make(map[kafka.TopicPartition]bool, len(f.forgot))
		for _, tp := range f.forgot {
			if f.parts.get(tp) == nil && !seen[tp] {
				seen[tp] = true
				wants = append(wants, want{tp: tp})
			}
		}
	}
	f.clearChanges()
	return wants
}

// clearChanges empties pending and forgot.
func (f *fetcher) clearChanges() {
	for _, ps := range f.pending {
		ps.queued = false
	}
	clear(f.pending)
	f.pending = f.pending[:0]
	f.forgot = f.forgot[:0]
}

// debug reports whether debug logs are on (their arguments allocate).
func (f *fetcher) debug() bool { return f.log.Enabled(f.ctx, slog.LevelDebug) }
