package broker

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
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

// BenchmarkCoordinatorReload: 10k groups with 100 committed offsets each
// (1M) in one __consumer_offsets partition of a broker's disk; the broker
// restarts and the benchmark reports the time from its start until an
// OffsetFetch of the last group is answered with its offsets (broker
// startup, controller election, LeaderAndIsr and the partition's load).
// SAMSA_BENCH_GROUPS sizes it (default 10000).
func BenchmarkCoordinatorReload(b *testing.B) {
	groups := 10_000
	if v, err := strconv.Atoi(os.Getenv("SAMSA_BENCH_GROUPS")); err == nil && v > 0 {
		groups = v
	}
	dir := b.TempDir()
	props := map[string]string{"offsets.topic.num.partitions": "1"}
	br := startBroker(b, dir, props)
	cl := newClient(b, br)
	createTopic(b, cl, "rt", 100, nil)
	coordinatorReady(b, cl, "g")
	commitMany(b, cl, groups)
	br.Close()
	last := fmt.Sprintf("group-%05d", groups-1)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		br = startBroker(b, dir, props)
		adm := kadm.NewClient(newClient(b, br))
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			os, err := adm.FetchOffsets(ctx, last)
			cancel()
			if o, ok := os.Lookup("rt", 99); err == nil && ok && o.At == 99 {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		b.ReportMetric(float64(time.Since(start).Milliseconds()), "ms-to-first-fetch")
		b.StopTimer()
		br.Close()
		b.StartTimer()
	}
}

// commitMany commits offsets 0..99 of topic rt for n groups, 4 at a time.
func commitMany(b *testing.B, cl *kgo.Client, n int) {
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for g := w; g < n; g += 4 {
				req := kmsg.NewPtrOffsetCommitRequest()
				req.Group, req.Generation = fmt.Sprintf("group-%05d", g), -1
				rt := kmsg.NewOffsetCommitRequestTopic()
				rt.Topic = "rt"
				for p := range int32(100) {
					rp := kmsg.NewOffsetCommitRequestTopicPartition()
					rp.Partition, rp.Offset = p, int64(p)
					rt.Partitions = append(rt.Partitions, rp)
				}
				req.Topics = append(req.Topics, rt)
				resp, err := req.RequestWith(context.Background(), cl)
				if err != nil || resp.Topics[0].Partitions[0].ErrorCode != 0 {
					b.Errorf("commit: %v %+v", err, resp)
					return
				}
			}
		}()
	}
	wg.Wait()
}
