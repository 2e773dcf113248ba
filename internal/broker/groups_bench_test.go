package broker

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// BenchmarkOffsetCommitRF3: OffsetCommits of 100 partitions each, from 4
// committers (4 groups on the same coordinator partition's broker) to a
// 3-broker cluster with __consumer_offsets at RF 3: partitions committed
// per second and the p99 latency of one commit (answered once replicated).
func BenchmarkOffsetCommitRF3(b *testing.B) {
	brokers := startCluster(b, 3, nil)
	cl := newClient(b, controllerOf(b, brokers))
	ctx := context.Background()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 100, 3, nil, "ct"); err != nil {
		b.Fatal(err)
	}
	const committers, parts = 4, 100
	groups := make([]string, committers)
	for i := range groups {
		groups[i] = fmt.Sprintf("bench-%d", i)
	}
	coordinatorReady(b, cl, groups...)
	var mu sync.Mutex
	var lat []time.Duration
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for w := range committers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < b.N; i += committers {
				req := kmsg.NewPtrOffsetCommitRequest()
				req.Group, req.Generation = groups[w], -1
				rt := kmsg.NewOffsetCommitRequestTopic()
				rt.Topic = "ct"
				for p := range int32(parts) {
					rp := kmsg.NewOffsetCommitRequestTopicPartition()
					rp.Partition, rp.Offset = p, int64(i)
					rt.Partitions = append(rt.Partitions, rp)
				}
				req.Topics = append(req.Topics, rt)
				t0 := time.Now()
				resp, err := req.RequestWith(ctx, cl)
				if err != nil || resp.Topics[0].Partitions[0].ErrorCode != 0 {
					b.Errorf("commit: %v %+v", err, resp)
					return
				}
				mu.Lock()
				lat = append(lat, time.Since(t0))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(len(lat)*parts)/el.Seconds(), "partitions/s")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	}
}
