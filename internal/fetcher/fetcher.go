// fetcher: Kafka's ReplicaFetcherThread for one source broker. Its goroutine
// loops: truncate the partitions that are Truncating (one OffsetForLeaderEpoch
// request), else fetch (one Fetch in the fetch session, see session.go),
// else sleep until a partition's backoff ends or a partition is added. A
// failed request drops the connection, backs the whole fetcher off, and
// reconnects to the address BrokerAddr gives then.
//
// The work of a round is proportional to what changed, not to the number
// of partitions: partitions that may have changed (added, removed, phase
// changed, backed off or back, answered by the leader) are queued as
// pending, and an incremental fetch is built from them alone; only a full
// fetch (opening a session) lists every partition.
package fetcher

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/storage"
)

// Request versions: Fetch v12 names topics (v13+ uses ids) and carries
// DivergingEpoch; OffsetForLeaderEpoch v3+ carries ReplicaID.
const (
	fetchVersion        = 12
	leaderEpochsVersion = 4
)

// firstRetry is the first backoff of a partition the leader refused.
const firstRetry = 20 * time.Millisecond

type fetcher struct {
	cfg    Config
	log    *slog.Logger
	leader int32
	ctx    context.Context
	cancel context.CancelFunc
	wake   chan struct{} // a partition was added
	done   chan struct{} // closed when run returns

	mu    sync.Mutex // guards the fields below; held while a response is applied
	parts map[storage.TopicPartition]*partState
	// pending: partitions whose fetch state may have changed since the last
	// request; delayed: partitions backing off; truncs: Truncating and ready.
	pending map[storage.TopicPartition]struct{}
	delayed map[storage.TopicPartition]*partState
	truncs  map[storage.TopicPartition]*partState

	// owned by the goroutine
	conn    *conn
	addr    string
	failing bool
	sess    session
}

func newFetcher(cfg Config, leader int32) *fetcher {
	ctx, cancel := context.WithCancel(context.Background())
	return &fetcher{
		cfg: cfg, log: cfg.Logger.With("leader", leader), leader: leader,
		ctx: ctx, cancel: cancel, wake: make(chan struct{}, 1), done: make(chan struct{}),
		parts:   map[storage.TopicPartition]*partState{},
		pending: map[storage.TopicPartition]struct{}{},
		delayed: map[storage.TopicPartition]*partState{},
		truncs:  map[storage.TopicPartition]*partState{},
	}
}

// add (re)targets t here; a target that changes nothing keeps its state.
func (f *fetcher) add(t Target) {
	f.mu.Lock()
	if cur := f.parts[t.TP]; cur == nil || !sameTarget(cur.target, t) {
		ps := newPartState(t)
		f.parts[t.TP] = ps
		delete(f.delayed, t.TP)
		f.truncs[t.TP] = ps
		f.pending[t.TP] = struct{}{}
		f.log.Debug("replica fetcher: partition added", "partition", t.TP, "leaderEpoch", t.LeaderEpoch)
	}
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// remove drops tp; once it returns no response is applied to it.
func (f *fetcher) remove(tp storage.TopicPartition) {
	f.mu.Lock()
	if _, ok := f.parts[tp]; ok {
		delete(f.parts, tp)
		delete(f.delayed, tp)
		delete(f.truncs, tp)
		f.pending[tp] = struct{}{} // the session forgets it
	}
	f.mu.Unlock()
}

func (f *fetcher) empty() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.parts) == 0
}

func (f *fetcher) stop() { f.cancel() }

func (f *fetcher) run() {
	defer close(f.done)
	defer f.dropConn()
	for f.ctx.Err() == nil {
		trunc, fr, wait := f.plan(time.Now())
		switch {
		case len(trunc) > 0:
			f.truncate(trunc)
		case fr != nil:
			f.fetch(fr)
		default:
			f.sleep(wait, true)
		}
	}
}

// plan picks the partitions ready for truncation, else builds the next
// Fetch (nil when there is nothing to fetch), else says how long to sleep
// (0: until woken). A Truncating partition without any epoch is truncated
// here, locally.
func (f *fetcher) plan(now time.Time) (trunc []askEntry, fr *fetchRound, wait time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for tp, ps := range f.delayed {
		if !ps.ready(now) {
			if d := ps.delayUntil.Sub(now); wait == 0 || d < wait {
				wait = d
			}
			continue
		}
		delete(f.delayed, tp)
		if ps.phase == truncating {
			f.truncs[tp] = ps
		}
		f.pending[tp] = struct{}{}
	}
	for tp, ps := range f.truncs {
		p := ps.target.Partition
		latest, ok := p.LatestEpoch()
		if epoch, ok := askEpoch(latest, ok, ps.askEpoch); ok {
			trunc = append(trunc, askEntry{tp, ps, epoch})
			continue
		}
		delete(f.truncs, tp)
		if off, needed := noEpochTruncation(p.LogEndOffset(), p.LogStartOffset()); needed {
			f.log.Info("replica fetcher: no leader epoch, refetching the whole log", "partition", tp, "offset", off)
			if err := truncateLog(p, off); err != nil {
				f.partitionFailed(tp, ps, now, "truncation failed", err)
				continue
			}
		}
		f.setFetching(tp, ps)
	}
	if len(trunc) > 0 {
		return trunc, nil, 0
	}
	return nil, f.buildFetchLocked(wait), wait
}

// fetchable reports whether ps is fetched now. Caller holds f.mu.
func (f *fetcher) fetchable(tp storage.TopicPartition, ps *partState) bool {
	return ps != nil && ps.phase == fetching && f.delayed[tp] == nil
}

// setFetching moves ps to Fetching. Caller holds f.mu.
func (f *fetcher) setFetching(tp storage.TopicPartition, ps *partState) {
	ps.phase, ps.askEpoch = fetching, -1
	delete(f.truncs, tp)
	f.pending[tp] = struct{}{}
}

// setTruncating moves ps back to Truncating. Caller holds f.mu.
func (f *fetcher) setTruncating(tp storage.TopicPartition, ps *partState) {
	ps.phase = truncating
	if f.delayed[tp] == nil {
		f.truncs[tp] = ps
	}
	f.pending[tp] = struct{}{}
}

// delay backs ps off for d. Caller holds f.mu.
func (f *fetcher) delay(tp storage.TopicPartition, ps *partState, now time.Time, d time.Duration) {
	ps.delayUntil = now.Add(d)
	f.delayed[tp] = ps
	delete(f.truncs, tp)
	f.pending[tp] = struct{}{}
}

// retryLater backs ps off after the leader refused it: briefly at first
// (firstRetry; the leader is often about to apply the LeaderAndIsr that
// makes it leader), doubling up to Config.Backoff. Caller holds f.mu.
func (f *fetcher) retryLater(tp storage.TopicPartition, ps *partState, now time.Time) {
	d := min(f.cfg.Backoff, firstRetry<<min(ps.refusals, 20))
	ps.refusals++
	f.delay(tp, ps, now, d)
}

// truncateLog truncates p to offset; below its log start the log restarts
// there instead (as Kafka's UnifiedLog.truncateTo).
func truncateLog(p Partition, offset int64) error {
	if offset < p.LogStartOffset() {
		return p.TruncateFullyAndStartAt(offset)
	}
	return p.TruncateTo(offset)
}

// partitionFailed logs err and backs ps off. Caller holds f.mu.
func (f *fetcher) partitionFailed(tp storage.TopicPartition, ps *partState, now time.Time, msg string, err error) {
	f.log.Warn("replica fetcher: "+msg, "partition", ps.target.TP, "phase", ps.phase, "err", err)
	f.delay(tp, ps, now, f.cfg.Backoff)
}

// sleep waits d (0: forever) or until stopped or, if wakeable, woken.
func (f *fetcher) sleep(d time.Duration, wakeable bool) {
	var timer <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timer = t.C
	}
	wake := f.wake
	if !wakeable {
		wake = nil
	}
	select {
	case <-f.ctx.Done():
	case <-timer:
	case <-wake:
	}
}

var errUnknownBroker = errors.New("leader address unknown")

// send issues req to the leader at its current address, (re)connecting as
// needed, and decodes the answer into resp. On failure the connection is
// dropped, the fetch session restarts and the fetcher backs off.
func (f *fetcher) send(req kmsg.Request, resp kmsg.Response) error {
	err := f.sendOnce(req, resp)
	if err == nil {
		if f.failing {
			f.log.Info("replica fetcher: leader reachable again", "addr", f.addr)
			f.failing = false
		}
		return nil
	}
	f.dropConn()
	if f.ctx.Err() != nil {
		return err
	}
	if !f.failing {
		f.log.Warn("replica fetcher: request failed; backing off", "api", kmsg.NameForKey(req.Key()), "err", err)
	} else {
		f.log.Debug("replica fetcher: request failed again", "api", kmsg.NameForKey(req.Key()), "err", err)
	}
	f.failing = true
	f.sleep(f.cfg.Backoff, false)
	return err
}

func (f *fetcher) sendOnce(req kmsg.Request, resp kmsg.Response) error {
	addr, ok := f.cfg.BrokerAddr(f.leader)
	if !ok {
		return errUnknownBroker
	}
	if f.conn != nil && addr != f.addr {
		f.dropConn()
	}
	if f.conn == nil {
		c, err := dialConn(f.ctx, addr, fmt.Sprintf("broker-%d-fetcher-0", f.cfg.NodeID))
		if err != nil {
			return err
		}
		f.conn, f.addr = c, addr
	}
	return f.conn.roundTrip(req, resp, f.cfg.MaxWait+socketTimeout)
}

// dropConn closes the connection; the leader may have advanced the fetch
// session's epoch, so the next fetch is full.
func (f *fetcher) dropConn() {
	if f.conn != nil {
		f.conn.close()
		f.conn = nil
	}
	f.sess.failed(0)
}
