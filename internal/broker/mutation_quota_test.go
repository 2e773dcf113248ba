package broker

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/samsa-kafka/samsa/internal/quota"
)

// controller_mutation_rate (KIP-599), set with AlterClientQuotas for one
// client id at 1 partition/s (a bucket of 11): a CreateTopics of 20
// partitions passes and leaves the bucket 9 below zero; until it refills,
// the strict versions refuse that client's CreateTopics (v7),
// CreatePartitions (v3) and DeleteTopics (v6) with
// THROTTLING_QUOTA_EXCEEDED and throttle_time_ms, an older CreateTopics is
// accepted and throttled, a validate-only one is neither charged nor
// refused, and another client id is not limited.
func TestControllerMutationQuota(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tenant := func() *kgo.Client { return newClient(t, b, kgo.ClientID("tenant")) }
	cl := tenant()
	rate := 1.0
	res, err := kadm.NewClient(cl).AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{
		Entity: kadm.ClientQuotaEntity{{Type: "client-id", Name: strp("tenant")}},
		Ops:    []kadm.AlterClientQuotaOp{{Key: "controller_mutation_rate", Value: rate}},
	}})
	if err != nil || res[0].Err != nil {
		t.Fatalf("setting the quota: %v %v", err, res)
	}
	waitQuota(t, func() bool { return b.quotas.Enabled(quota.ControllerMutation) })

	// create sends a CreateTopics at the highest version cl knows.
	create := func(cl *kgo.Client, topic string, partitions int32, validateOnly bool) *kmsg.CreateTopicsResponse {
		t.Helper()
		req := kmsg.NewPtrCreateTopicsRequest()
		req.TimeoutMillis, req.ValidateOnly = 10000, validateOnly
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, partitions, 1
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	throttled := func(what string, ms int32) {
		t.Helper()
		if ms < 7000 || ms > 10000 { // 9 s less the time the test took
			t.Errorf("%s: throttle_time_ms %d, want the time to refill about 9 partitions at 1/s", what, ms)
		}
	}

	if r := create(cl, "big", 20, false); r.Topics[0].ErrorCode != 0 || r.ThrottleMillis != 0 {
		t.Fatalf("within the burst: %+v", r)
	}
	r := create(tenant(), "more", 1, false)
	if r.Version != 7 || r.Topics[0].ErrorCode != kerr.ThrottlingQuotaExceeded.Code || r.Topics[0].ErrorMessage == nil {
		t.Fatalf("CreateTopics v7 over the quota: %+v", r.Topics[0])
	}
	throttled("CreateTopics v7", r.ThrottleMillis)
	if r := create(tenant(), "dry", 5, true); r.Topics[0].ErrorCode != 0 {
		t.Fatalf("validate only: %+v", r.Topics[0])
	}

	cp := kmsg.NewPtrCreatePartitionsRequest()
	cp.TimeoutMillis = 10000
	cpt := kmsg.NewCreatePartitionsRequestTopic()
	cpt.Topic, cpt.Count = "big", 21
	cp.Topics = append(cp.Topics, cpt)
	cpr, err := cp.RequestWith(ctx, tenant())
	if err != nil || cpr.Topics[0].ErrorCode != kerr.ThrottlingQuotaExceeded.Code {
		t.Fatalf("CreatePartitions v3 over the quota: %v %+v", err, cpr)
	}
	throttled("CreatePartitions v3", cpr.ThrottleMillis)

	dt := kmsg.NewPtrDeleteTopicsRequest() // v6 (franz-go sends the highest version both sides know)
	dt.TimeoutMillis = 10000
	dtt := kmsg.NewDeleteTopicsRequestTopic()
	dtt.Topic = strp("big")
	dt.Topics = append(dt.Topics, dtt)
	dtr, err := dt.RequestWith(ctx, tenant())
	if err != nil || len(dtr.Topics) != 1 || dtr.Topics[0].ErrorCode != kerr.ThrottlingQuotaExceeded.Code {
		t.Fatalf("DeleteTopics v6 over the quota: %v %+v", err, dtr)
	}
	throttled("DeleteTopics v6", dtr.ThrottleMillis)

	// CreateTopics v5 predates the strict quota: created, and throttled
	// (a client that knows no later version).
	v5 := kversion.Stable()
	v5.SetMaxKeyVersion(int16(kmsg.CreateTopics), 5)
	r = create(newClient(t, b, kgo.ClientID("tenant"), kgo.MaxVersions(v5)), "old", 1, false)
	if r.Version != 5 {
		t.Fatalf("CreateTopics sent as v%d", r.Version)
	}
	if r.Topics[0].ErrorCode != 0 {
		t.Fatalf("CreateTopics v5 over the quota: %+v", r.Topics[0])
	}
	throttled("CreateTopics v5", r.ThrottleMillis)

	other := newClient(t, b, kgo.ClientID("other"))
	if r := create(other, "free", 3, false); r.Topics[0].ErrorCode != 0 || r.ThrottleMillis != 0 {
		t.Fatalf("a client id without a quota: %+v", r)
	}
	md, err := kadm.NewClient(other).ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for topic, want := range map[string]bool{"big": true, "more": false, "dry": false, "old": true, "free": true} {
		if md.Has(topic) != want {
			t.Errorf("topic %s exists: %v, want %v", topic, md.Has(topic), want)
		}
	}
	if n := len(md["big"].Partitions); n != 20 {
		t.Errorf("big has %d partitions, want 20", n)
	}
}
