package main

// Where a paced record's latency goes (-replication): a record's latency
// (Produce call to acknowledgement) is its wait in the client, for the
// Produce request before its own to be answered (kgo keeps one in flight
// per broker), plus its own request's round trip (written, answered,
// read: kgo's BrokerE2E less its write wait), of which the broker's part
// is its samsa_request_duration_seconds (brokermetrics.go). reqTimer
// collects the round trips of the paced run's Produce requests.

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

type reqTimer struct {
	on  atomic.Bool
	mu  sync.Mutex
	rtt []time.Duration
}

var _ kgo.HookBrokerE2E = (*reqTimer)(nil)

// OnBrokerE2E notes a Produce request's round trip while the timer is on.
func (t *reqTimer) OnBrokerE2E(_ kgo.BrokerMetadata, key int16, e kgo.BrokerE2E) {
	if key != 0 || !t.on.Load() || e.Err() != nil {
		return
	}
	t.mu.Lock()
	t.rtt = append(t.rtt, e.DurationE2E())
	t.mu.Unlock()
}

// start clears what was noted and notes from now on.
func (t *reqTimer) start() {
	t.mu.Lock()
	t.rtt = t.rtt[:0]
	t.mu.Unlock()
	t.on.Store(true)
}

// stop ends noting and returns the p99 of the round trips noted (0 if none).
func (t *reqTimer) stop() (p99 time.Duration, n int) {
	t.on.Store(false)
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.rtt) == 0 {
		return 0, 0
	}
	slices.Sort(t.rtt)
	return t.rtt[len(t.rtt)*99/100], len(t.rtt)
}
