package e2e

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestDynamicReplicaFetchers sets num.replica.fetchers=2 at <default>
// (IncrementalAlterConfigs) on a running 3-broker cluster while a producer
// writes acks=all to an RF=3 topic: every follower opens one more fetch
// connection to each leader (each leader leads two partitions, one per
// fetcher id), DescribeConfigs shows the value as
// DYNAMIC_DEFAULT_BROKER_CONFIG. 5 is then refused with INVALID_CONFIG and
// Kafka's message (more than double the current 2: DynamicThreadPool's
// rule) and changes nothing: no broker logs a resize for it; set back to 1, the extra connections close.
// Every acknowledged record is consumed at its offset.
func TestDynamicReplicaFetchers(t *testing.T) {
	c, all := startReadyCluster(t)
	// "foo" hashes to 101574 and 31*101574 % 2 == 0: partition p has
	// fetcher id p%2, so broker L, leading 2L and 2L+1, is fetched from by
	// two fetchers of each follower.
	const topic = "foo"
	var assignment [][]int32
	for p := range int32(6) {
		l := p / 2
		assignment = append(assignment, []int32{l, (l + 1) % 3, (l + 2) % 3})
	}
	createAssigned(t, all, topic, assignment)
	c.waitPartitions(all, topic, "full ISR, preferred leaders", func(v map[int32]partitionView) bool {
		for p, pv := range v {
			if pv.leader != p/2 {
				return false
			}
		}
		return len(v) == 6 && fullISR(3)(v)
	})

	cl, err := kgo.NewClient(kgo.SeedBrokers(all...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	log := &ackLog{}
	stop := make(chan struct{})
	finish := produceUntil(t, all, topic, stop, log)
	acked := func(n int) {
		t.Helper()
		for target, deadline := log.count()+n, time.Now().Add(60*time.Second); log.count() < target; {
			if time.Now().After(deadline) {
				log.mu.Lock()
				defer log.mu.Unlock()
				t.Fatalf("only %d records acknowledged (errors %v)", len(log.acks), log.errs)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	acked(200)

	before := c.fetchConns(t)
	setFetchers(ctx, t, adm, "2")
	grown := c.waitFetchConns(t, "one more connection from every follower to every leader", func(pair [2]int32, n int) bool {
		return n >= before[pair]+1
	})
	described := func() {
		t.Helper()
		rcs, err := adm.DescribeBrokerConfigs(ctx, 0)
		if err != nil || len(rcs) != 1 || rcs[0].Err != nil {
			t.Fatalf("describe broker 0: %v %+v", err, rcs)
		}
		if i := slices.IndexFunc(rcs[0].Configs, func(c kadm.Config) bool { return c.Key == "num.replica.fetchers" }); i < 0 ||
			rcs[0].Configs[i].Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig || rcs[0].Configs[i].MaybeValue() != "2" {
			t.Fatalf("num.replica.fetchers described as %+v, want 2 from DYNAMIC_DEFAULT_BROKER_CONFIG", rcs[0].Configs[max(i, 0)])
		}
	}
	described()
	acked(500) // replicated by two fetchers per leader

	five := "5"
	res, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "num.replica.fetchers", Value: &five}})
	if want := "Dynamic thread count update validation failed for num.replica.fetchers=5, value should not be greater than double the current value 2"; err != nil ||
		len(res) != 1 || !errors.Is(res[0].Err, kerr.InvalidConfig) || res[0].ErrMessage != want {
		t.Fatalf("num.replica.fetchers=5 at <default>: %v %+v; want INVALID_CONFIG %q", err, res, want)
	}
	described() // unchanged; no broker resized (the resize count below)

	setFetchers(ctx, t, adm, "1")
	c.waitFetchConns(t, "one connection fewer from every follower to every leader", func(pair [2]int32, n int) bool {
		return n <= grown[pair]-1
	})
	acked(500)
	close(stop)
	finish()
	log.mu.Lock()
	acks, errs := slices.Clone(log.acks), log.errs
	log.mu.Unlock()
	checkAcked(t, acks, consumeAll(t, all, topic))
	for id, p := range c.procs {
		if out := p.stderr.String(); strings.Count(out, "replica fetcher: resizing") != 2 {
			t.Errorf("broker %d did not log two resizes", id)
		}
	}
	t.Logf("%d acknowledged records, none lost; fetch connections %v -> %v; producer errors (retried): %v", len(acks), before, grown, errs)
}

// setFetchers sets num.replica.fetchers at <default>.
func setFetchers(ctx context.Context, t *testing.T, adm *kadm.Client, v string) {
	t.Helper()
	res, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "num.replica.fetchers", Value: &v}})
	if err != nil || len(res) != 1 || res[0].Err != nil {
		t.Fatalf("set num.replica.fetchers=%s at <default>: %v %+v", v, err, res)
	}
}

// fetchConns counts, for every (follower, leader) pair of brokers, the
// established connections of the follower's process to the leader's port.
func (c *cluster) fetchConns(t *testing.T) map[[2]int32]int {
	t.Helper()
	out := map[[2]int32]int{}
	for f, p := range c.procs {
		ports := outgoing(t, p.cmd.Process.Pid)
		for l, port := range c.ports {
			if l != f {
				out[[2]int32{f, l}] = len(slices.DeleteFunc(slices.Clone(ports), func(p int) bool { return p != port }))
			}
		}
	}
	return out
}

// waitFetchConns polls fetchConns until cond holds for every pair.
func (c *cluster) waitFetchConns(t *testing.T, what string, cond func(pair [2]int32, n int) bool) map[[2]int32]int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		conns := c.fetchConns(t)
		ok := true
		for pair, n := range conns {
			ok = ok && cond(pair, n)
		}
		if ok {
			return conns
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: never happened (connections by [follower leader]: %v)%s", what, conns, c.logTails())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
