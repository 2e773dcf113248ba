package broker

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// BenchmarkControlledShutdown: 3 brokers in this process (real logs, one
// embedded etcd), SAMSA_CS_PARTITIONS partitions (default 30000) of RF 3 in
// topics of 1000, so each broker leads a third of them and follows the
// rest. After csSettle and a collection, timed: one ControlledShutdown
// request for a broker other than the controller, from sending it to the
// answer with no partition remaining
// (every partition changes: a third elect a new leader, the others drop
// the broker from their ISR). Also reported: when the other brokers'
// metadata caches no longer show it leading anything.
//
//	go test ./internal/broker -run '^$' -bench ControlledShutdown -benchtime 1x
//
// csSettle is how long the cluster runs after creating its partitions
// before the timed shutdown.
const csSettle = 3 * time.Second

func BenchmarkControlledShutdown(b *testing.B) {
	total, topics := benchPartitions(b, "SAMSA_CS_PARTITIONS")
	for range b.N {
		b.StopTimer()
		brokers := startCluster(b, 3, nil)
		ctrl := controllerOf(b, brokers)
		start := time.Now()
		createTopicsConcurrently(b, adminClients(b, ctrl, 4), "cs", topics, benchPerTopic, 5)
		created := time.Since(start)
		var victim *Broker
		for _, br := range brokers {
			if br != ctrl {
				victim = br
				break
			}
		}
		led := leadersOn(ctrl, victim.NodeID())
		req := kmsg.NewPtrControlledShutdownRequest()
		req.BrokerID, req.BrokerEpoch = victim.NodeID(), victim.cache.BrokerEpoch()
		raw := newClient(b, ctrl, kgo.RequestTimeoutOverhead(5*time.Minute))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		// A broker is shut down in a settled cluster, not while 100k new
		// partitions are still starting their fetch sessions; and the
		// three brokers share one heap here, so the collection their
		// creation left owing is paid before the clock starts (as testing
		// does before every benchmark run).
		time.Sleep(csSettle)
		runtime.GC()
		stopProfile := windowProfile(b)
		b.StartTimer()
		start = time.Now()
		// The caches are watched from the request on, not from its answer:
		// the new leaders may be everywhere before the answer. Woken by each
		// cache change rather than polling, so that the measuring does not
		// take the cores the brokers need.
		type seenAt struct {
			took time.Duration
			err  error
		}
		seenc := make(chan seenAt, 1)
		go func() {
			took, err := waitAllBrokersSee(brokers, start, "no partition led by the stopping broker",
				func(l int32, _, _ []int32) bool { return l != victim.NodeID() })
			seenc <- seenAt{took, err}
		}()
		resp, err := req.RequestWith(ctx, raw)
		took := time.Since(start)
		b.StopTimer()
		if err != nil || resp.ErrorCode != 0 || len(resp.PartitionsRemaining) != 0 {
			b.Fatalf("ControlledShutdown: %v %+v", err, resp)
		}
		s := <-seenc
		if s.err != nil {
			b.Fatal(s.err)
		}
		seen := s.took
		stopProfile()
		cancel()
		// On the benchmark line itself (the log below may be cut off by the
		// brokers' warnings).
		b.ReportMetric(float64(total), "partitions")
		b.ReportMetric(float64(led), "leaders-moved")
		b.ReportMetric(took.Seconds(), "s/controlled-shutdown")
		b.ReportMetric(seen.Seconds(), "s/caches-updated")
		var load1 float64
		fmt.Sscan(loadAvg(), &load1)
		b.ReportMetric(load1, "loadavg-1m")
		b.Logf("%d partitions (RF 3, %d topics) created in %v; controlled shutdown of broker %d leading %d of them: answered (nothing remaining) after %v, every cache updated after %v; load average %s",
			total, topics, created.Round(time.Millisecond), victim.NodeID(), led, took.Round(time.Millisecond), seen.Round(time.Millisecond), loadAvg())
	}
}

// leadersOn counts the partitions br's metadata cache shows led by id.
func leadersOn(br *Broker, id int32) int {
	n := 0
	for _, t := range br.cache.Topics() {
		for _, p := range t.Partitions {
			if p.Leader == id {
				n++
			}
		}
	}
	return n
}

// benchPerTopic is the topic size of the benchmarks sized by benchPartitions.
const benchPerTopic = 1000

// benchPartitions is a benchmark's partition count: environment variable
// name's (at least 1000), else 30000, rounded down to whole topics of
// benchPerTopic; and those topics.
func benchPartitions(b *testing.B, name string) (total, topics int) {
	total = 30_000
	if s := os.Getenv(name); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < benchPerTopic {
			b.Fatalf("%s=%q: a number of at least %d", name, s, benchPerTopic)
		}
		total = n
	}
	topics = total / benchPerTopic
	return topics * benchPerTopic, topics
}
