// fetcher: Kafka's ReplicaFetcherThread, one of the num.replica.fetchers of a
// source broker, with a connection and a fetch session of its own. Its goroutine
// loops: truncate the partitions that are Truncating (one OffsetForLeaderEpoch
// request), else fetch (one Fetch in the fetch session, see session.go),
// else sleep until a partition's backoff ends or a partition is added. A
// failed request drops the connection, backs the whole fetcher off, and
// reconnects to the address BrokerAddr gives then.
//
// The work of a round is proportional to what changed, not to the number
// of partitions: partitions that may have changed (added, removed, phase
// changed, backed off or back, moved by an answer of the leader) are queued
// as pending (track.go), and an incremental fetch is built from them alone;
// only a full fetch (opening a session) lists every partition.
package fetcher

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/wire"
)

// Request versions: Fetch v12 names topics (v13+ uses ids) and carries
// DivergingEpoch; OffsetForLeaderEpoch v3+ carries ReplicaID.
const (
	fetchVersion        = 12
	leaderEpochsVersion = 4
)

// dialTimeout bounds connecting to the leader (Kafka's
// socket.connection.setup.timeout.ms), or SocketTimeout when shorter.
const dialTimeout = 10 * time.Second

// firstRetry is the first backoff of a partition the leader refused.
const firstRetry = 20 * time.Millisecond

type fetcher struct {
	cfg    Config
	log    *slog.Logger
	leader int32
	id     int32 // among the leader's fetchers (Kafka's fetcherId)
	ctx    context.Context
	cancel context.CancelFunc
	wake   chan struct{} // a partition was added
	done   chan struct{} // closed when run returns

	mu    sync.Mutex // guards the fields below; held while a response is applied
	parts table[*partState]
	// The work lists (track.go), kept as lists of states with a flag on each
	// state rather than as maps: pending, states whose fetch state may have
	// changed since the last request; forgot, partitions removed since;
	// delayed, states backing off; truncs, Truncating states.
	pending []*partState
	forgot  []kafka.TopicPartition
	delayed []*partState
	truncs  []*partState

	// owned by the goroutine
	conn    *wire.Conn
	addr    string
	failing bool
	sess    session
}

func newFetcher(cfg Config, key fetcherKey) *fetcher {
	ctx, cancel := context.WithCancel(context.Background())
	return &fetcher{
		cfg: cfg, log: cfg.Logger.With("leader", key.leader, "fetcherId", key.id), leader: key.leader, id: key.id,
		ctx: ctx, cancel: cancel, wake: make(chan struct{}, 1), done: make(chan struct{}),
	}
}

// add (re)targets t here; a target that changes nothing keeps its state.
func (f *fetcher) add(t Target) { f.addAll([]Target{t}) }

// addAll is add for many targets.
func (f *fetcher) addAll(ts []Target) { f.addEach(len(ts), func(i int) *Target { return &ts[i] }) }

// addEach is add for the n targets at(0) ... at(n-1), under one lock and
// with one wake-up: a LeaderAndIsr hands over thousands of partitions,
// which must not each wait for the goroutine's round in between.
func (f *fetcher) addEach(n int, at func(i int) *Target) {
	debug := f.debug()
	var slab stateSlab
	f.mu.Lock()
	f.pending = slices.Grow(f.pending, n)
	f.truncs = slices.Grow(f.truncs, n)
	f.parts.reserveRuns(n, func(i int) kafka.TopicPartition { return at(i).TP })
	for i := range n {
		t := at(i)
		if cur := f.parts.get(t.TP); cur == nil || cur.phase == fenced || !sameTarget(cur.target, *t) {
			if cur != nil {
				cur.gone = true
			}
			ps := slab.newState(*t, n-i)
			f.parts.set(t.TP, ps)
			f.setTruncating(t.TP, ps)
			if debug {
				f.log.Debug("replica fetcher: partition added", "partition", t.TP, "leaderEpoch", t.LeaderEpoch)
			}
		}
	}
	f.mu.Unlock()
	f.wakeUp()
}

// requeue queues the states of tps (those it holds) as pending: the next
// request reconsiders them.
func (f *fetcher) requeue(tps []kafka.TopicPartition) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, tp := range tps {
		if ps := f.parts.get(tp); ps != nil {
			f.queue(ps)
		}
	}
}

// removeAll drops tps, under one lock; once it returns no response is
// applied to them.
func (f *fetcher) removeAll(tps []kafka.TopicPartition) { f.takeAll(tps, nil) }

// takeAll is removeAll, appending to *states (unless nil) a copy of the
// fetch state of each partition it held, for adoptAll in another fetcher.
func (f *fetcher) takeAll(tps []kafka.TopicPartition, states *[]partState) {
	f.mu.Lock()
	for _, tp := range tps {
		if cur := f.parts.del(tp); cur != nil {
			if states != nil {
				*states = append(*states, *cur)
			}
			cur.gone = true
			f.forgot = append(f.forgot, tp) // the session forgets it
		}
	}
	f.mu.Unlock()
}

// adoptAll takes over partitions another fetcher of the same leader gave
// up (takeAll) when num.replica.fetchers changed, each in the fetch state
// it had there: a Fetching partition goes on fetching from its log end
// offset without truncating again, a Truncating one asks the same epoch, a
// backed-off one waits out its backoff, a Fenced one awaits its re-target.
func (f *fetcher) adoptAll(states []partState) {
	now := time.Now()
	var slab stateSlab
	f.mu.Lock()
	for i := range states {
		tp := states[i].target.TP
		if cur := f.parts.get(tp); cur != nil { // not expected: the Manager moved it here
			cur.gone = true
		}
		ps := slab.newState(states[i].target, len(states)-i)
		*ps = states[i]
		ps.queued, ps.delayed, ps.inTruncs, ps.gone = false, false, false, false
		f.parts.set(tp, ps)
		if ps.phase != fenced && !ps.ready(now) {
			f.delay(tp, ps, now, ps.delayUntil.Sub(now))
		}
		if ps.phase == truncating {
			f.setTruncating(tp, ps)
		}
		f.queue(ps)
	}
	f.mu.Unlock()
	f.wakeUp()
}

// wakeUp ends the goroutine's sleep: partitions were added.
func (f *fetcher) wakeUp() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

func (f *fetcher) empty() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.parts.len() == 0
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

// truncateLog truncates p to offset; below its log start the log restarts
// there instead (as Kafka's UnifiedLog.truncateTo).
func truncateLog(p Partition, offset int64) error {
	if offset < p.LogStartOffset() {
		return p.TruncateFullyAndStartAt(offset)
	}
	return p.TruncateTo(offset)
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
		c, err := wire.Dial(f.ctx, addr, fmt.Sprintf("broker-%d-fetcher-%d", f.cfg.NodeID, f.id), min(dialTimeout, f.cfg.SocketTimeout))
		if err != nil {
			return err
		}
		f.conn, f.addr = c, addr
	}
	return f.conn.RoundTrip(req, resp, f.cfg.MaxWait+f.cfg.SocketTimeout)
}

// dropConn closes the connection; the leader may have advanced the fetch
// session's epoch, so the next fetch is full.
func (f *fetcher) dropConn() {
	if f.conn != nil {
		f.conn.Close()
		f.conn = nil
	}
	f.sess.failed(0)
}
