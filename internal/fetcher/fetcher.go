// fetcher: Kafka's ReplicaFetcherThread for one source broker. Its goroutine
// loops: truncate the partitions that are Truncating (one OffsetForLeaderEpoch
// request), else fetch the ones that are Fetching (one Fetch), else sleep
// until a partition's backoff ends or a partition is added. A failed request
// drops the client, backs the whole fetcher off, and reconnects to the
// address BrokerAddr gives then.
package fetcher

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/samsa-kafka/samsa/internal/storage"
)

// Request versions: Fetch v12 names topics (v13+ uses ids) and carries
// DivergingEpoch; OffsetForLeaderEpoch v3+ carries ReplicaID.
const (
	fetchVersion        = 12
	leaderEpochsVersion = 4
)

type fetcher struct {
	cfg    Config
	log    *slog.Logger
	leader int32
	ctx    context.Context
	cancel context.CancelFunc
	wake   chan struct{} // a partition was added
	done   chan struct{} // closed when run returns

	mu    sync.Mutex // guards parts; held while a response is applied
	parts map[storage.TopicPartition]*partState

	// owned by the goroutine
	cl      *kgo.Client
	addr    string
	failing bool
}

func newFetcher(cfg Config, leader int32) *fetcher {
	ctx, cancel := context.WithCancel(context.Background())
	return &fetcher{
		cfg: cfg, log: cfg.Logger.With("leader", leader), leader: leader,
		ctx: ctx, cancel: cancel, wake: make(chan struct{}, 1), done: make(chan struct{}),
		parts: map[storage.TopicPartition]*partState{},
	}
}

// add (re)targets t here; a target that changes nothing keeps its state.
func (f *fetcher) add(t Target) {
	f.mu.Lock()
	if cur := f.parts[t.TP]; cur == nil || !sameTarget(cur.target, t) {
		f.parts[t.TP] = newPartState(t)
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
	delete(f.parts, tp)
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
	defer f.dropClient()
	for f.ctx.Err() == nil {
		trunc, fetch, wait := f.plan(time.Now())
		switch {
		case len(trunc) > 0:
			f.truncate(trunc)
		case len(fetch) > 0:
			f.fetch(fetch)
		default:
			f.sleep(wait, true)
		}
	}
}

// plan picks the partitions ready for truncation and for fetching, and
// otherwise how long to sleep (0: until woken). A Truncating partition
// without any epoch is truncated here, locally.
func (f *fetcher) plan(now time.Time) (trunc []askEntry, fetch []fetchEntry, wait time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for tp, ps := range f.parts {
		if !ps.ready(now) {
			if d := ps.delayUntil.Sub(now); wait == 0 || d < wait {
				wait = d
			}
			continue
		}
		p := ps.target.Partition
		if ps.phase == truncating {
			latest, ok := p.LatestEpoch()
			if epoch, ok := askEpoch(latest, ok, ps.askEpoch); ok {
				trunc = append(trunc, askEntry{tp, ps, epoch})
				continue
			}
			if off, needed := noEpochTruncation(p.LogEndOffset(), p.LogStartOffset()); needed {
				f.log.Info("replica fetcher: no leader epoch, refetching the whole log", "partition", tp, "offset", off)
				if err := truncateLog(p, off); err != nil {
					f.partitionFailed(ps, now, "truncation failed", err)
					continue
				}
			}
			ps.phase, ps.askEpoch = fetching, -1
		}
		fetch = append(fetch, fetchEntry{tp, ps, p.LogEndOffset()})
	}
	return trunc, fetch, wait
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
func (f *fetcher) partitionFailed(ps *partState, now time.Time, msg string, err error) {
	f.log.Warn("replica fetcher: "+msg, "partition", ps.target.TP, "phase", ps.phase, "err", err)
	ps.delayUntil = now.Add(f.cfg.Backoff)
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
// needed. On failure the client is dropped and the fetcher backs off.
func (f *fetcher) send(req kmsg.Request) (kmsg.Response, error) {
	resp, err := f.sendOnce(req)
	if err == nil {
		if f.failing {
			f.log.Info("replica fetcher: leader reachable again", "addr", f.addr)
			f.failing = false
		}
		return resp, nil
	}
	if f.ctx.Err() != nil {
		return nil, err
	}
	f.dropClient()
	if !f.failing {
		f.log.Warn("replica fetcher: request failed; backing off", "api", kmsg.NameForKey(req.Key()), "err", err)
	} else {
		f.log.Debug("replica fetcher: request failed again", "api", kmsg.NameForKey(req.Key()), "err", err)
	}
	f.failing = true
	f.sleep(f.cfg.Backoff, false)
	return nil, err
}

func (f *fetcher) sendOnce(req kmsg.Request) (kmsg.Response, error) {
	addr, ok := f.cfg.BrokerAddr(f.leader)
	if !ok {
		return nil, errUnknownBroker
	}
	if f.cl != nil && addr != f.addr {
		f.dropClient()
	}
	if f.cl == nil {
		versions := kversion.Stable()
		versions.SetMaxKeyVersion(int16(kmsg.Fetch), fetchVersion)
		versions.SetMaxKeyVersion(int16(kmsg.OffsetForLeaderEpoch), leaderEpochsVersion)
		cl, err := kgo.NewClient(
			kgo.SeedBrokers(addr),
			kgo.ClientID(fmt.Sprintf("broker-%d-fetcher-0", f.cfg.NodeID)),
			kgo.MaxVersions(versions),
			kgo.RequestRetries(0),
			kgo.RequestTimeoutOverhead(socketTimeout),
		)
		if err != nil {
			return nil, err
		}
		f.cl, f.addr = cl, addr
	}
	ctx, cancel := context.WithTimeout(f.ctx, f.cfg.MaxWait+socketTimeout)
	defer cancel()
	resp, err := f.cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		return nil, err
	}
	if resp == nil || resp.Key() != req.Key() {
		return nil, fmt.Errorf("unexpected response to %s", kmsg.NameForKey(req.Key()))
	}
	return resp, nil
}

func (f *fetcher) dropClient() {
	if f.cl != nil {
		f.cl.Close()
		f.cl = nil
	}
}
