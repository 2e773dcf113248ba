package main

// reqTimer collects the round trips (kgo's BrokerE2E less its write wait:
// written, answered, read) of one kind of request while it is on. It tells
// where a paced record's latency goes in -replication: a record's latency
// (Produce call to acknowledgement) is its wait in the client for the
// Produce request before its own to be answered (kgo keeps one in flight
// per broker) plus its own request's round trip, of which the broker's
// part is its samsa_request_duration_seconds (brokermetrics.go). The
// -transactions benchmark times EndTxn with it.

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type reqTimer struct {
	key kmsg.Key
	on  atomic.Bool
	mu  sync.Mutex
	rtt []time.Duration
}

var _ kgo.HookBrokerE2E = (*reqTimer)(nil)

// OnBrokerE2E notes a request's round trip while the timer is on.
func (t *reqTimer) OnBrokerE2E(_ kgo.BrokerMetadata, key int16, e kgo.BrokerE2E) {
	if key != int16(t.key) || !t.on.Load() || e.Err() != nil {
		return
	}
	t.mu.Lock()
	t.rtt = append(t.rtt, e.DurationE2E())
	t.mu.Unlock()
}

// start clears what was noted and notes from now on.
func (t *reqTimer) start() {
	t.mu.Lock()
	t.rtt = nil
	t.mu.Unlock()
	t.on.Store(true)
}

// stop ends noting and returns the round trips noted, sorted.
func (t *reqTimer) stop() []time.Duration {
	t.on.Store(false)
	t.mu.Lock()
	defer t.mu.Unlock()
	slices.Sort(t.rtt)
	return t.rtt
}

// p99 of sorted durations; 0 for none.
func p99(sorted []time.Duration) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[len(sorted)*99/100]
}
