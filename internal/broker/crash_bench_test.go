package broker

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"
)

// crash stops br as SIGKILL would, with no controlled shutdown: it stops
// serving (listener and connections closed), fetching and sending, and its
// background work ends; then its store session ends (the lease revoked, as
// when its TTL runs out). It returns when the session ended. What is left of
// br (its logs, the store client) is closed at cleanup.
func crash(tb testing.TB, br *Broker) time.Time {
	br.mu.Lock()
	br.closed = true // Close now does nothing: no controlled shutdown
	br.mu.Unlock()
	br.cancel()
	br.closeListeners()
	br.fetchers.Close()
	br.alter.Close()
	br.sessMu.Lock()
	defer br.sessMu.Unlock()
	ended := time.Now()
	if err := ignoreExpired(br.sess.Close()); err != nil {
		tb.Fatalf("crash of broker %d: ending its session: %v", br.NodeID(), err)
	}
	tb.Cleanup(func() { br.teardown() })
	return ended
}

// BenchmarkBrokerCrash: 3 brokers in this process (real logs, one embedded
// etcd), SAMSA_CRASH_PARTITIONS partitions (default 30000; 100000 is issue
// 6's figure) of RF 3 in topics of 1000, so each broker leads a third.
// After csSettle and a collection, a broker other than the controller
// crashes (crash: as under SIGKILL, its session ended at once instead of
// after metadata.store.session.timeout.ms). Timed from its session end
// until both other brokers' metadata caches show a new leader for every
// partition it led; also reported, until no ISR in them holds it.
// It runs once per store SAMSA_BENCH_STORE lists (benchStores: etcd when
// unset); on zookeeper the brokers share a standalone ZooKeeper server
// process instead of the embedded etcd (the crash then closes the broker's
// ZooKeeper session).
//
//	SAMSA_CRASH_PARTITIONS=100000 go test ./internal/broker -run '^$' -bench BrokerCrash -benchtime 1x
//	SAMSA_BENCH_STORE=etcd,zookeeper SAMSA_CRASH_PARTITIONS=100000 go test ./internal/broker -run '^$' -bench BrokerCrash -benchtime 1x
func BenchmarkBrokerCrash(b *testing.B) { benchStores(b, benchBrokerCrash) }

func benchBrokerCrash(b *testing.B) {
	total, topics := benchPartitions(b, "SAMSA_CRASH_PARTITIONS")
	for range b.N {
		b.StopTimer()
		brokers := startCluster(b, 3, nil)
		ctrl := controllerOf(b, brokers)
		createTopicsConcurrently(b, adminClients(b, ctrl, 4), "crash", topics, benchPerTopic, 25)
		allBrokersSee(b, brokers, time.Now(), "every partition with its whole ISR", func(l int32, _, isr []int32) bool { return l >= 0 && len(isr) == 3 })
		var victim *Broker
		var others []*Broker
		for _, br := range brokers {
			if br != ctrl && victim == nil {
				victim = br
			} else {
				others = append(others, br)
			}
		}
		id := victim.NodeID()
		led := leadersOn(ctrl, id)
		// As BenchmarkControlledShutdown: a settled cluster, and the
		// collection the creation left owing paid before the clock starts
		// (the brokers share one heap here).
		time.Sleep(csSettle)
		runtime.GC()
		stopProfile := windowProfile(b)
		b.StartTimer()
		ended := crash(b, victim)
		moved := allBrokersSee(b, others, ended, "a new leader for every partition the crashed broker led",
			func(l int32, _, _ []int32) bool { return l >= 0 && l != id })
		b.StopTimer()
		stopProfile()
		shrunk := allBrokersSee(b, others, ended, "no ISR holding the crashed broker",
			func(_ int32, _, isr []int32) bool { return !slices.Contains(isr, id) })
		perPartition := float64(moved.Microseconds()) / float64(led)
		b.ReportMetric(float64(total), "partitions")
		b.ReportMetric(float64(led), "leaders-moved")
		b.ReportMetric(moved.Seconds(), "s/new-leaders")
		b.ReportMetric(perPartition, "µs/led-partition")
		b.ReportMetric(shrunk.Seconds(), "s/isrs-shrunk")
		var load1 float64
		fmt.Sscan(loadAvg(), &load1)
		b.ReportMetric(load1, "loadavg-1m")
		b.Logf("%d partitions (RF 3, %d topics) on %s; broker %d, leading %d, crashed: new leaders in both other brokers' metadata %v after its session end (%.1f µs per partition it led), ISRs without it after %v; load average %s",
			total, topics, storeKind(b), id, led, moved.Round(time.Millisecond), perPartition, shrunk.Round(time.Millisecond), loadAvg())
	}
}
