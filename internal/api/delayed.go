package api

// The wait of Kafka's delayed operations on partitions (the purgatory's
// DelayedProduce and DelayedDeleteRecords): a request whose partitions are
// done when something about them changes (the high watermark, the low
// watermark, the leadership) waits on all of them with one waiter, woken by
// every change, and checks again the partitions still pending; those still
// pending when the request's timeout passes are answered REQUEST_TIMED_OUT.

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/samsa-kafka/samsa/internal/quota"
	"github.com/samsa-kafka/samsa/internal/replica"
)

// awaitPartitions waits until check leaves none of pending or timeout
// passes, then expire answers each entry still pending. check answers the
// entries that are done and returns the others (it may reuse pending's
// array); it runs once a waiter is registered on the partition of every
// entry (partition), so a change between the caller's own first check and
// the registration is not missed, and again at every wake-up. It returns
// false when ctx ends first (the connection is closing). waiting counts
// the request while it waits (Purgatory).
func awaitPartitions[T any](ctx context.Context, waiting *atomic.Int64, pending []T, timeout time.Duration,
	partition func(T) *replica.Partition, check func([]T) []T, expire func(T)) bool {
	defer quota.Parked(ctx)() // not request time (quota.go)
	w := replica.NewWaiter()
	on := make([]*replica.Partition, len(pending)) // check reuses pending's array
	for i, e := range pending {
		on[i] = partition(e)
		on[i].AddWaiter(w)
	}
	defer func() {
		for _, p := range on {
			p.RemoveWaiter(w)
		}
	}()
	timer := time.NewTimer(max(timeout, 0))
	defer timer.Stop()
	left := pending
	counted := false
	for expired := false; ; {
		if left = check(left); len(left) == 0 {
			return true
		}
		if expired {
			for _, e := range left {
				expire(e)
			}
			return true
		}
		if !counted {
			counted = true
			waiting.Add(1)
			defer waiting.Add(-1)
		}
		select {
		case <-w.C:
		case <-timer.C:
			expired = true
		case <-ctx.Done():
			return false
		}
	}
}

// Purgatory counts the requests waiting, as Kafka's delayed operations, for
// something about their partitions to change (Kafka's
// DelayedOperationPurgatory NumDelayedOperations by delayedOperation): an
// acks=all Produce for its replicas, a Fetch for min.bytes (a long poll),
// a DeleteRecords for its replicas' low watermarks.
type Purgatory struct {
	Produce, Fetch, DeleteRecords atomic.Int64
}
