package api

// Client quota enforcement, as Kafka's KafkaApis drives its
// ClientQuotaManagers (user "ANONYMOUS", quota.Principal, until Samsa
// authenticates; entity precedence in internal/quota):
//
//   - producer_byte_rate: every Produce records its size in bytes (the
//     request frame, Kafka's request.sizeInBytes) once handled; the
//     records are appended whatever the throttle.
//   - consumer_byte_rate: a consumer's Fetch reads at most the quota
//     window's worth (Kafka's getMaxValueInQuotaWindow caps max_bytes)
//     and records the record bytes it would answer; when that or the
//     request quota throttles, the bytes are taken back and the answer is
//     empty (Kafka's getThrottledResponse), to be fetched again.
//   - request_percentage: every request records the time it took to
//     handle, less the time it waited on something else (Kafka counts the
//     request thread's time, not purgatory's): the code that blocks marks
//     the wait with quota.Parked — a Fetch long poll; an acks=-1 Produce,
//     its transaction verification round trip; DeleteRecords waiting for
//     the low watermark; JoinGroup and SyncGroup waiting for the
//     rebalance; the group and transaction coordinators waiting for their
//     writes to be acknowledged (OffsetCommit, TxnOffsetCommit,
//     DeleteGroups, OffsetDelete, InitProducerId, AddPartitionsToTxn,
//     AddOffsetsToTxn, EndTxn, which also waits for its markers);
//     CreateTopics, DeleteTopics, CreatePartitions and ElectLeaders
//     waiting for the controller's outcome; a broker config write waiting
//     for this broker to apply it. Waits that overlap (the topics of a
//     CreateTopics, waited for together) are taken off once.
//   - controller_mutation_rate (KIP-599): CreateTopics, DeleteTopics and
//     CreatePartitions ask, topic by topic in request order, for the
//     partitions each would create or delete (mutationQuota), once the
//     topic passed every other check and unless the request only
//     validates; a strict quota (CreateTopics v6+, DeleteTopics v5+,
//     CreatePartitions v3+) answers a topic THROTTLING_QUOTA_EXCEEDED
//     while its client's bucket is below zero, a permissive one (older
//     versions) accepts it and throttles the response.
//
// Exempt, as Kafka's sendResponseExemptThrottle: follower fetches and the
// inter-broker APIs (LeaderAndIsr, StopReplica, UpdateMetadata,
// ControlledShutdown, AlterPartition, WriteTxnMarkers); a Produce with
// acks=0 is exempt from the request quota only.
//
// The throttle is the longest of the quotas violated: it goes into the
// response's throttle_time_ms (every response having one) and the
// connection is muted that long after the response (server.Conn.Throttle,
// KIP-219). Deviation: answers of versions before KIP-219 (Produce < v6,
// Fetch < v8) are not delayed, the connection is muted after them as well.

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/quota"
	"github.com/samsa-kafka/samsa/internal/server"
	"github.com/samsa-kafka/samsa/internal/wire"
)

type quotaKey struct{}

// quotaReq is the quota accounting of one client request.
type quotaReq struct {
	client      string
	start       time.Time
	throttle    time.Duration // set by a Fetch (the longest of its quotas) and by a controller mutation quota
	requestDone bool          // the Fetch recorded request_percentage

	mu       sync.Mutex // parks come from the request's goroutines
	parked   int        // waits under way (quota.Parked)
	parkedAt time.Time  // since parked went from 0 to 1
	waited   time.Duration
}

// park notes a wait's start (quota.Parked); the time during which one or
// more waits are under way is taken off the request's.
func (q *quotaReq) park(now func() time.Time) func() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.parked++; q.parked == 1 {
		q.parkedAt = now()
	}
	return func() {
		q.mu.Lock()
		defer q.mu.Unlock()
		if q.parked--; q.parked == 0 {
			q.waited += now().Sub(q.parkedAt)
		}
	}
}

// busy is the request's handling time up to now, less its waits.
func (q *quotaReq) busy(now time.Time) time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	waited := q.waited
	if q.parked > 0 {
		waited += now.Sub(q.parkedAt)
	}
	return max(now.Sub(q.start)-waited, 0)
}

// startQuota begins a request's accounting: nil when no quota is set or
// the request is exempt.
func (h *Handler) startQuota(ctx context.Context, hdr wire.RequestHeader, req kmsg.Request) (context.Context, *quotaReq) {
	if h.Quotas == nil || !h.Quotas.Active() || quotaExempt(req) {
		return ctx, nil
	}
	q := &quotaReq{start: h.Now()}
	if hdr.ClientID != nil {
		q.client = *hdr.ClientID
	}
	ctx = quota.WithPark(ctx, func() func() { return q.park(h.Now) })
	return context.WithValue(ctx, quotaKey{}, q), q
}

func quotaExempt(req kmsg.Request) bool {
	switch r := req.(type) {
	case *kmsg.FetchRequest:
		return fetchReplicaID(r) >= 0
	case *kmsg.LeaderAndISRRequest, *kmsg.StopReplicaRequest, *kmsg.UpdateMetadataRequest,
		*kmsg.ControlledShutdownRequest, *kmsg.AlterPartitionRequest, *kmsg.WriteTxnMarkersRequest:
		return true
	}
	return false
}

// endQuota records a handled request and throttles its client.
func (h *Handler) endQuota(q *quotaReq, c *server.Conn, req kmsg.Request, resp kmsg.Response) {
	if q == nil {
		return
	}
	now := h.Now()
	d := q.throttle
	if r, ok := req.(*kmsg.ProduceRequest); ok {
		d = h.Quotas.Record(quota.Produce, quota.Principal, q.client, float64(c.RequestSize()), now)
		q.requestDone = r.Acks == 0
	}
	if !q.requestDone {
		d = max(d, h.recordRequestTime(q, now))
	}
	if d <= 0 {
		return
	}
	if r, ok := resp.(kmsg.SetThrottleResponse); ok {
		r.SetThrottle(int32(min(d.Milliseconds(), 1<<31-1)))
	}
	c.Throttle(d)
}

// recordRequestTime records request_percentage: % of one thread's time.
func (h *Handler) recordRequestTime(q *quotaReq, now time.Time) time.Duration {
	q.requestDone = true
	return h.Quotas.Record(quota.Request, quota.Principal, q.client, float64(q.busy(now))/float64(time.Second)*100, now)
}

// fetchQuotaBytes caps a consumer Fetch's max_bytes at its quota window.
func (h *Handler) fetchQuotaBytes(ctx context.Context, maxBytes int) int {
	q, ok := ctx.Value(quotaKey{}).(*quotaReq)
	if !ok {
		return maxBytes
	}
	if w := h.Quotas.MaxValueInWindow(quota.Fetch, quota.Principal, q.client); w < float64(maxBytes) {
		return max(int(w), 1)
	}
	return maxBytes
}

// fetchThrottled records a consumer Fetch answering n record bytes and
// reports whether it is throttled, its bytes then taken back.
func (h *Handler) fetchThrottled(ctx context.Context, n int) bool {
	q, ok := ctx.Value(quotaKey{}).(*quotaReq)
	if !ok {
		return false
	}
	now := h.Now()
	q.throttle = max(h.recordRequestTime(q, now), h.Quotas.Record(quota.Fetch, quota.Principal, q.client, float64(n), now))
	if q.throttle > 0 {
		h.Quotas.Unrecord(quota.Fetch, quota.Principal, q.client, float64(n), now)
	}
	return q.throttle > 0
}

// mutationQuota is the controller mutation quota of one CreateTopics,
// DeleteTopics or CreatePartitions request (Kafka's
// ControllerMutationQuota): strict from strictSince on. The request asks
// it topic by topic, on one goroutine.
type mutationQuota struct {
	h        *Handler
	q        *quotaReq // nil: no controller_mutation_rate is set
	strict   bool
	throttle time.Duration // Kafka's lastThrottleTimeMs: of the last mutation refused or throttled
	at       time.Time     // when it was set
}

func (h *Handler) mutationQuota(ctx context.Context, version, strictSince int16) *mutationQuota {
	m := &mutationQuota{h: h, strict: version >= strictSince}
	if q, ok := ctx.Value(quotaKey{}).(*quotaReq); ok && h.Quotas.Enabled(quota.ControllerMutation) {
		m.q = q
	}
	return m
}

// applies reports whether a controller mutation quota is set.
func (m *mutationQuota) applies() bool { return m.q != nil }

// allow asks for permits mutations; false when the quota refuses them
// (strict, exhausted): the topic is then answered errThrottlingQuota.
func (m *mutationQuota) allow(permits int) bool {
	if m.q == nil || permits <= 0 {
		return true
	}
	now := m.h.Now()
	ok, d := m.h.Quotas.Mutate(quota.Principal, m.q.client, float64(permits), m.strict, now)
	if d > 0 {
		m.throttle, m.at = d, now
	}
	return ok
}

// done throttles the request for what is left of the last throttle set
// (Kafka deducts the time since it was recorded), with its other quotas.
func (m *mutationQuota) done() {
	if m.q != nil && m.throttle > 0 {
		m.q.throttle = max(m.q.throttle, m.throttle-m.h.Now().Sub(m.at))
	}
}

// errThrottlingQuota answers a topic refused by a strict controller
// mutation quota, with Kafka's message.
var errThrottlingQuota = fmt.Errorf("%w: The throttling quota has been exceeded.", kerr.ThrottlingQuotaExceeded)
