package broker

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// benchElectPartitions is the partition count of BenchmarkPreferredElection
// (SAMSA_BENCH_ELECT_PARTITIONS overrides it).
func benchElectPartitions() int {
	if n, err := strconv.Atoi(os.Getenv("SAMSA_BENCH_ELECT_PARTITIONS")); err == nil && n > 0 {
		return n
	}
	return 30_000
}

// allBrokersSee waits until every broker's metadata cache satisfies ok for
// every partition of the topics, and returns how long that took from start.
func allBrokersSee(b testing.TB, brokers []*Broker, start time.Time, what string, ok func(leader int32, replicas, isr []int32) bool) time.Duration {
	took, err := waitAllBrokersSee(brokers, start, what, ok)
	if err != nil {
		b.Fatal(err)
	}
	return took
}

// waitAllBrokersSee is allBrokersSee for any goroutine: an error when ok
// does not hold after 10 minutes.
func waitAllBrokersSee(brokers []*Broker, start time.Time, what string, ok func(leader int32, replicas, isr []int32) bool) (time.Duration, error) {
	deadline := time.Now().Add(10 * time.Minute)
	for _, br := range brokers {
		for {
			changed := br.cache.Changed()
			done := true
			for _, t := range br.cache.Topics() {
				for _, p := range t.Partitions {
					if !ok(p.Leader, p.Replicas, p.ISR) {
						done = false
						break
					}
				}
				if !done {
					break
				}
			}
			if done {
				break
			}
			if time.Now().After(deadline) {
				return 0, fmt.Errorf("broker %d: %s never happened", br.NodeID(), what)
			}
			select {
			case <-changed:
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return time.Since(start), nil
}

// BenchmarkPreferredElection: 3 brokers in this process, 30 topics × 1000
// partitions (RF 3, preferred leaders spread over the brokers). Broker 2
// (not the controller) stops — its partitions move to the others — and
// starts again on the same log dirs; once it is back in every ISR, one
// ElectLeaders(PREFERRED, all partitions) is timed from the request to
// every broker's metadata showing every partition led by its first replica.
//
//	go test ./internal/broker -run '^$' -bench PreferredElection -benchtime 1x
func BenchmarkPreferredElection(b *testing.B) {
	total := benchElectPartitions()
	perTopic := min(total, 1000)
	topics := total / perTopic
	total = topics * perTopic
	for range b.N {
		brokers := startCluster(b, 3, map[string]string{"auto.leader.rebalance.enable": "false"})
		ctl := controllerOf(b, brokers)
		createTopicsConcurrently(b, adminClients(b, ctl, 4), "elect", topics, perTopic, 5)
		allBrokersSee(b, brokers, time.Now(), "leaders of every partition", func(l int32, _, _ []int32) bool { return l >= 0 })

		var victim *Broker
		for _, br := range brokers {
			if br != ctl {
				victim = br
			}
		}
		id, cfg, store := victim.NodeID(), victim.cfg, victim.store
		stopped := time.Now()
		if err := victim.Close(); err != nil {
			b.Fatal(err)
		}
		var others []*Broker
		for _, br := range brokers {
			if br != victim {
				others = append(others, br)
			}
		}
		moved := allBrokersSee(b, others, stopped, "leadership off the stopped broker", func(l int32, _, _ []int32) bool { return l >= 0 && l != id })
		restarted, err := Start(cfg, Options{Store: store})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { restarted.Close() })
		back := time.Now()
		all := append(others, restarted)
		rejoined := allBrokersSee(b, all, back, "the restarted broker in every ISR", func(_ int32, _, isr []int32) bool { return len(isr) == 3 })

		adm := kadm.NewClient(newClient(b, ctl))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		runtime.GC() // the brokers share one heap here: collect before the clock starts
		start := time.Now()
		res, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, nil)
		answered := time.Since(start)
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		elected := 0
		for _, ps := range res {
			for _, r := range ps {
				if r.Err != nil {
					b.Fatalf("%s-%d: %v %s", r.Topic, r.Partition, r.Err, r.ErrMessage)
				}
				elected++
			}
		}
		took := allBrokersSee(b, all, start, "every partition led by its preferred replica", func(l int32, rs, _ []int32) bool { return len(rs) > 0 && l == rs[0] })
		b.ReportMetric(float64(took.Milliseconds()), "ms/election")
		b.ReportMetric(float64(took.Microseconds())/float64(elected), "µs/elected-partition")
		b.Logf("%d partitions (RF 3); broker %d stopped: leadership moved in %v; restarted: back in every ISR after %v; "+
			"ElectLeaders(PREFERRED, all) elected %d partitions: answered after %v, every broker's metadata preferred after %v (%.1f µs/elected partition); load average %s",
			total, id, moved.Round(time.Millisecond), rejoined.Round(time.Millisecond), elected,
			answered.Round(time.Millisecond), took.Round(time.Millisecond), float64(took.Microseconds())/float64(elected), loadAvg())
	}
}
