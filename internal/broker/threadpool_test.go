package broker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Kafka's DynamicThreadPool rule: an unchanged count passes; a new one is
// at least half and at most double the current one.
func TestValidateThreadCount(t *testing.T) {
	for _, tc := range []struct {
		cur, next int
		want      string
	}{
		{1, 1, ""},
		{1, 2, ""},
		{1, 3, "Dynamic thread count update validation failed for num.replica.fetchers=3, value should not be greater than double the current value 1"},
		{2, 5, "Dynamic thread count update validation failed for num.replica.fetchers=5, value should not be greater than double the current value 2"},
		{2, 4, ""},
		{2, 1, ""},
		{5, 2, ""}, // 5/2 == 2 in Kafka's integer division
		{6, 2, "Dynamic thread count update validation failed for num.replica.fetchers=2, value should be at least half the current value 6"},
		{6, 3, ""},
	} {
		err := validateThreadCount("num.replica.fetchers", tc.cur, tc.next)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%d -> %d: %v", tc.cur, tc.next, err)
		case tc.want != "" && (!errors.Is(err, kerr.InvalidConfig) || err.Error() != kerr.InvalidConfig.Error()+": "+tc.want):
			t.Errorf("%d -> %d: %v; want INVALID_CONFIG %q", tc.cur, tc.next, err, tc.want)
		}
	}
}

// A broker config write that changes num.replica.fetchers is checked
// against this broker's current value, its per-broker entry over
// <default>, before it is stored: refused with INVALID_CONFIG and Kafka's
// message, the value stays; validateOnly checks too.
func TestAlterReplicaFetchersThreadPoolRule(t *testing.T) {
	b := startBroker(t, t.TempDir(), map[string]string{"num.replica.fetchers": "2"})
	adm := kadm.NewClient(newClient(t, b))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	set := func(perBroker, validateOnly bool, v string) (int16, string) {
		t.Helper()
		ac := []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "num.replica.fetchers", Value: &v}}
		var brokers []int32
		if perBroker {
			brokers = []int32{0}
		}
		var res kadm.AlterConfigsResponses
		var err error
		if validateOnly {
			res, err = adm.ValidateAlterBrokerConfigs(ctx, ac, brokers...)
		} else {
			res, err = adm.AlterBrokerConfigs(ctx, ac, brokers...)
		}
		if err != nil || len(res) != 1 {
			t.Fatalf("alter num.replica.fetchers=%s: %v %+v", v, err, res)
		}
		var ke *kerr.Error
		if res[0].Err == nil {
			return 0, ""
		} else if !errors.As(res[0].Err, &ke) {
			t.Fatalf("alter num.replica.fetchers=%s: %v", v, res[0].Err)
		}
		return ke.Code, res[0].ErrMessage
	}
	refused := func(perBroker, validateOnly bool, v, msg string) {
		t.Helper()
		if code, got := set(perBroker, validateOnly, v); code != kerr.InvalidConfig.Code || got != msg {
			t.Errorf("num.replica.fetchers=%s (per broker %v, validate only %v): code %d %q; want INVALID_CONFIG %q", v, perBroker, validateOnly, code, got, msg)
		}
	}
	accepted := func(perBroker bool, v string, want int32) {
		t.Helper()
		if code, msg := set(perBroker, false, v); code != 0 {
			t.Fatalf("num.replica.fetchers=%s (per broker %v): code %d %q", v, perBroker, code, msg)
		}
		if got := b.current().NumReplicaFetchers; got != want {
			t.Fatalf("after num.replica.fetchers=%s (per broker %v): %d, want %d", v, perBroker, got, want)
		}
	}
	double := "Dynamic thread count update validation failed for num.replica.fetchers=5, value should not be greater than double the current value 2"
	refused(false, false, "5", double)
	refused(true, true, "5", double)
	if got := b.current().NumReplicaFetchers; got != 2 {
		t.Fatalf("num.replica.fetchers %d after refusals, want 2", got)
	}
	accepted(true, "1", 1)
	// <default> at 5 does not change this broker's value (its own entry
	// wins): nothing to check.
	accepted(false, "5", 1)
	refused(true, false, "3", "Dynamic thread count update validation failed for num.replica.fetchers=3, value should not be greater than double the current value 1")
	accepted(true, "2", 2)
}
