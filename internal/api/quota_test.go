package api

import (
	"context"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/quota"
	"github.com/samsa-kafka/samsa/internal/wire"
)

// handleAs serves req for the client id.
func (x *harness) handleAs(clientID string, req kmsg.Request) kmsg.Response {
	x.t.Helper()
	resp, err := x.h.Handle(context.Background(), nil, wire.RequestHeader{Key: req.Key(), Version: req.GetVersion(), ClientID: &clientID}, req)
	if err != nil {
		x.t.Fatal(err)
	}
	return resp
}

// A client over its request_percentage gets throttle_time_ms in any
// response that has one, capped at one quota window; another client id
// is not throttled, nor is a follower's fetch.
func TestRequestQuotaThrottle(t *testing.T) {
	x := newHarness(t)
	x.h.Quotas = quota.New(quota.DefaultConfig)
	x.h.Quotas.Set(quota.Entity{ClientID: quota.Default}, map[string]float64{quota.RequestPercentage: 1e-12})
	x.h.Quotas.Set(quota.Entity{ClientID: "free"}, map[string]float64{quota.RequestPercentage: 1e9})
	meta := kmsg.NewPtrMetadataRequest()
	meta.Version = 9
	if got := x.handleAs("c", meta).(*kmsg.MetadataResponse).ThrottleMillis; got != 1000 {
		t.Fatalf("throttle %d ms, want one window (1000)", got)
	}
	if got := x.handleAs("free", meta).(*kmsg.MetadataResponse).ThrottleMillis; got != 0 {
		t.Fatalf("client within its quota throttled %d ms", got)
	}
	// Unauthenticated clients are user ANONYMOUS: <default> user quotas
	// apply to them, over client-id ones.
	x.h.Quotas.Set(quota.Entity{User: quota.Default}, map[string]float64{quota.RequestPercentage: 1e-12})
	if got := x.handleAs("free", meta).(*kmsg.MetadataResponse).ThrottleMillis; got != 1000 {
		t.Fatalf("<default> user quota: throttle %d ms, want 1000", got)
	}
	follower := kmsg.NewPtrFetchRequest()
	follower.Version, follower.ReplicaID = 12, 2
	if !quotaExempt(follower) || quotaExempt(meta) {
		t.Fatal("a follower fetch is exempt, a client request is not")
	}
}

// A consumer over its consumer_byte_rate gets an empty, throttled answer
// and the bytes it was not sent do not count; a fetch within the quota
// gets the records.
func TestFetchQuotaThrottle(t *testing.T) {
	x := newHarness(t)
	x.lead("t", 1, []int32{self}, []int32{self}, 1)
	x.produce(context.Background(), "t", 1, 1000, strings.Repeat("v", 1500))
	x.h.Quotas = quota.New(quota.DefaultConfig)
	x.h.Quotas.Set(quota.Entity{ClientID: "c"}, map[string]float64{quota.ConsumerByteRate: 100})
	fetch := func(clientID string) *kmsg.FetchResponse {
		req := kmsg.NewPtrFetchRequest()
		req.Version, req.ReplicaID, req.MinBytes, req.MaxBytes = 12, -1, 1, 1<<20
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = "t"
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = 1<<20, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return x.handleAs(clientID, req).(*kmsg.FetchResponse)
	}
	var throttles []int32
	for range 2 {
		resp := fetch("c")
		if len(resp.Topics) != 0 || resp.ThrottleMillis <= 0 {
			t.Fatalf("over the quota: %d topics, throttle %d ms", len(resp.Topics), resp.ThrottleMillis)
		}
		throttles = append(throttles, resp.ThrottleMillis)
	}
	// The first throttled fetch's bytes were taken back: the same throttle
	// (give or take the window's growth between the two).
	if d := throttles[1] - throttles[0]; d > 50 || d < -50 {
		t.Fatalf("throttles %v: the unsent bytes counted", throttles)
	}
	if resp := fetch("other"); len(resp.Topics) != 1 || len(resp.Topics[0].Partitions[0].RecordBatches) == 0 || resp.ThrottleMillis != 0 {
		t.Fatalf("client without a quota: %+v", resp)
	}
}
