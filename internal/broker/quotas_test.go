package broker

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-kafka/samsa/internal/quota"
)

func strp(s string) *string { return &s }

// kadm's AlterClientQuotas writes user, client-id, user+client-id and
// default entities; DescribeClientQuotas reads them back with Kafka's
// filters; the broker's watch applies them to its quota manager.
func TestClientQuotasRoundTrip(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	adm := kadm.NewClient(newClient(t, b))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	user := kadm.ClientQuotaEntityComponent{Type: "user", Name: strp("alice")}
	client := kadm.ClientQuotaEntityComponent{Type: "client-id", Name: strp("app 1")}
	defClient := kadm.ClientQuotaEntityComponent{Type: "client-id"}
	alter := func(validate bool, entries ...kadm.AlterClientQuotaEntry) kadm.AlteredClientQuotas {
		t.Helper()
		f := adm.AlterClientQuotas
		if validate {
			f = adm.ValidateAlterClientQuotas
		}
		res, err := f(ctx, entries)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	set := func(k string, v float64) kadm.AlterClientQuotaOp { return kadm.AlterClientQuotaOp{Key: k, Value: v} }
	for _, r := range alter(false,
		kadm.AlterClientQuotaEntry{Entity: kadm.ClientQuotaEntity{user}, Ops: []kadm.AlterClientQuotaOp{set("producer_byte_rate", 1024), set("request_percentage", 50.5)}},
		kadm.AlterClientQuotaEntry{Entity: kadm.ClientQuotaEntity{user, client}, Ops: []kadm.AlterClientQuotaOp{set("consumer_byte_rate", 2048)}},
		kadm.AlterClientQuotaEntry{Entity: kadm.ClientQuotaEntity{defClient}, Ops: []kadm.AlterClientQuotaOp{set("producer_byte_rate", 4096)}},
	) {
		if r.Err != nil {
			t.Fatalf("%v: %v %s", r.Entity, r.Err, r.ErrMessage)
		}
	}
	// Kafka's validation, per entry; validate_only writes nothing.
	bad := alter(false,
		kadm.AlterClientQuotaEntry{Entity: kadm.ClientQuotaEntity{user}, Ops: []kadm.AlterClientQuotaOp{set("bogus", 1)}},
		kadm.AlterClientQuotaEntry{Entity: kadm.ClientQuotaEntity{{Type: "group", Name: strp("g")}}, Ops: []kadm.AlterClientQuotaOp{set("producer_byte_rate", 1)}},
		kadm.AlterClientQuotaEntry{Entity: kadm.ClientQuotaEntity{user}, Ops: []kadm.AlterClientQuotaOp{set("producer_byte_rate", 1.5)}},
		kadm.AlterClientQuotaEntry{Entity: kadm.ClientQuotaEntity{{Type: "user", Name: strp("")}}, Ops: []kadm.AlterClientQuotaOp{set("producer_byte_rate", 1)}},
		kadm.AlterClientQuotaEntry{Entity: nil, Ops: []kadm.AlterClientQuotaOp{set("producer_byte_rate", 1)}},
	)
	for _, r := range bad {
		if !errors.Is(r.Err, kerr.InvalidRequest) {
			t.Errorf("%v: %v, want INVALID_REQUEST", r.Entity, r.Err)
		}
	}
	if r := alter(true, kadm.AlterClientQuotaEntry{Entity: kadm.ClientQuotaEntity{client}, Ops: []kadm.AlterClientQuotaOp{set("producer_byte_rate", 1)}}); r[0].Err != nil {
		t.Fatalf("validate only: %v", r[0].Err)
	}

	all, err := adm.DescribeClientQuotas(ctx, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]kadm.ClientQuotaValues{}
	for _, q := range all {
		got[q.Entity.String()] = q.Values
	}
	want := map[string]kadm.ClientQuotaValues{
		"{user=alice}":                  {{Key: "producer_byte_rate", Value: 1024}, {Key: "request_percentage", Value: 50.5}},
		"{user=alice, client-id=app 1}": {{Key: "consumer_byte_rate", Value: 2048}},
		"{client-id=<default>}":         {{Key: "producer_byte_rate", Value: 4096}},
	}
	if len(got) != len(want) {
		t.Fatalf("described %v, want %v", got, want)
	}
	for k, v := range want {
		if len(got[k]) != len(v) || (len(v) > 0 && got[k][0] != v[0]) {
			t.Errorf("%s: %v, want %v", k, got[k], v)
		}
	}
	// Filters: exact user, strict: only the user entity.
	strict, err := adm.DescribeClientQuotas(ctx, true, []kadm.DescribeClientQuotaComponent{{Type: "user", MatchName: strp("alice"), MatchType: 0}})
	if err != nil || len(strict) != 1 || len(strict[0].Entity) != 1 {
		t.Fatalf("strict user filter: %v %v", strict, err)
	}
	// Default client-id.
	defs, err := adm.DescribeClientQuotas(ctx, false, []kadm.DescribeClientQuotaComponent{{Type: "client-id", MatchType: 1}})
	if err != nil || len(defs) != 1 || defs[0].Entity[0].Name != nil {
		t.Fatalf("default client filter: %v %v", defs, err)
	}
	if _, err := adm.DescribeClientQuotas(ctx, false, []kadm.DescribeClientQuotaComponent{{Type: "group", MatchType: 2}}); !errors.Is(err, kerr.UnsupportedVersion) {
		t.Fatalf("custom entity type: %v", err)
	}

	// The broker's watch applied them: the default client-id quota bounds
	// any client id (4096 B/s × 10 windows).
	waitQuota(t, func() bool { return b.quotas.MaxValueInWindow(quota.Produce, "x", "any") == 40960 })

	// Removing the last key deletes the entity.
	remove := kadm.AlterClientQuotaOp{Key: "producer_byte_rate", Remove: true}
	alter(false, kadm.AlterClientQuotaEntry{Entity: kadm.ClientQuotaEntity{defClient}, Ops: []kadm.AlterClientQuotaOp{remove}})
	defs, err = adm.DescribeClientQuotas(ctx, false, []kadm.DescribeClientQuotaComponent{{Type: "client-id", MatchType: 1}})
	if err != nil || len(defs) != 0 {
		t.Fatalf("after removal: %v %v", defs, err)
	}
	waitQuota(t, func() bool { return math.IsInf(b.quotas.MaxValueInWindow(quota.Produce, "x", "any"), 1) })
}

// waitQuota polls until the broker's watch has applied a change.
func waitQuota(t *testing.T, applied func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !applied(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("quota change not applied")
		}
	}
}
