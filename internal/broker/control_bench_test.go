package broker

// BenchmarkLeaderAndIsrApply: the broker side of LeaderAndIsr alone, on real
// storage in a temp dir with the follower fetchers (which reach no leader):
// 100 topics × 1000 partitions of RF 3 (this broker and two others, leaders
// spread over the three) are created by one request, then the timed request
// moves every partition led by broker 2 to this broker and drops broker 2
// from every ISR with a new leader epoch (a controlled shutdown of broker 2:
// a third of the partitions change leader, the rest only their ISR).
//
//	go test ./internal/broker -run '^$' -bench LeaderAndIsrApply -benchmem

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/config"
	"github.com/samsa-kafka/samsa/internal/fetcher"
	"github.com/samsa-kafka/samsa/internal/metacache"
	"github.com/samsa-kafka/samsa/internal/replica"
	"github.com/samsa-kafka/samsa/internal/storage"
)

// benchControlPlane returns a control plane on fresh storage and the
// function that stops its fetchers and closes its storage, which each
// iteration calls once done: the fetchers of earlier iterations would
// otherwise keep running, and their heaps stay live, through the timed part
// of later ones.
func benchControlPlane(b *testing.B) (*controlPlane, func()) {
	dir := b.TempDir()
	logs, err := storage.OpenManager(storage.ManagerConfig{Dirs: []string{dir}})
	if err != nil {
		b.Fatal(err)
	}
	cfg, _, err := config.Load(map[string]string{"broker.id": "1", "log.dirs": dir})
	if err != nil {
		b.Fatal(err)
	}
	cache := metacache.New(testNode)
	cache.SetBrokerEpoch(testBrokerEpoch)
	fm := fetcher.NewManager(fetcher.Config{NodeID: testNode, BrokerAddr: func(int32) (string, bool) { return "", false },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	stop := func() {
		fm.Close()
		logs.Close()
	}
	return &controlPlane{
		cache: cache, replicas: replica.NewManager(logs), logs: logs, fetchers: fm, nodeID: testNode,
		topicConfig:     func(context.Context, string) (map[string]string, error) { return nil, nil },
		partitionConfig: (&Broker{cfg: cfg}).partitionConfig,
		log:             slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}, stop
}

// benchLeaderAndIsr is a v6 request for topics × perTopic partitions
// replicated on 1, 2, 3; partition p is led by 1+p%3 unless moved (2 gives
// way to 1, and 2 leaves every ISR).
func benchLeaderAndIsr(topics, perTopic int, epoch int32, moved bool) *kmsg.LeaderAndISRRequest {
	req := kmsg.NewPtrLeaderAndISRRequest()
	req.Version, req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = 6, 0, 1, testBrokerEpoch
	for t := range topics {
		ts := kmsg.NewLeaderAndISRRequestTopicState()
		ts.Topic = fmt.Sprintf("bench-%03d", t)
		ts.TopicID = [16]byte{0xbe, byte(t >> 8), byte(t)}
		ts.PartitionStates = make([]kmsg.LeaderAndISRRequestTopicPartition, perTopic)
		for p := range perTopic {
			ps := &ts.PartitionStates[p]
			*ps = kmsg.NewLeaderAndISRRequestTopicPartition()
			ps.Topic, ps.Partition, ps.ControllerEpoch = ts.Topic, int32(p), 1
			ps.Leader, ps.LeaderEpoch, ps.ZKVersion = int32(1+p%3), epoch, epoch
			ps.Replicas, ps.ISR = []int32{1, 2, 3}, []int32{1, 2, 3}
			if moved {
				if ps.Leader == 2 {
					ps.Leader = 1
				}
				ps.ISR = []int32{1, 3}
			}
		}
		req.TopicStates = append(req.TopicStates, ts)
	}
	return req
}

func BenchmarkLeaderAndIsrApply(b *testing.B) {
	const topics, perTopic = 100, 1000
	var cpu timedCPU
	defer cpu.report(b)
	for range b.N {
		b.StopTimer()
		c, stop := benchControlPlane(b)
		ctx := context.Background()
		if resp := c.LeaderAndIsr(ctx, benchLeaderAndIsr(topics, perTopic, 0, false)); resp.ErrorCode != 0 {
			b.Fatal(resp.ErrorCode)
		}
		req := benchLeaderAndIsr(topics, perTopic, 1, true)
		var resp *kmsg.LeaderAndISRResponse
		cpu.start(b)
		// Labelled for profiles: go tool pprof -tagfocus phase=timed.
		pprof.Do(ctx, pprof.Labels("phase", "timed"), func(ctx context.Context) { resp = c.LeaderAndIsr(ctx, req) })
		cpu.stop(b)
		stop()
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode != 0 {
					b.Fatalf("%s-%d: %d", p.Topic, p.Partition, p.ErrorCode)
				}
			}
		}
	}
}

// BenchmarkLeaderAndIsrCreate: the first request, every partition new.
func BenchmarkLeaderAndIsrCreate(b *testing.B) {
	const topics, perTopic = 100, 1000
	var cpu timedCPU
	defer cpu.report(b)
	for range b.N {
		b.StopTimer()
		c, stop := benchControlPlane(b)
		req := benchLeaderAndIsr(topics, perTopic, 0, false)
		var resp *kmsg.LeaderAndISRResponse
		cpu.start(b)
		pprof.Do(context.Background(), pprof.Labels("phase", "timed"), func(ctx context.Context) { resp = c.LeaderAndIsr(ctx, req) })
		cpu.stop(b)
		stop()
		if resp.ErrorCode != 0 {
			b.Fatal(resp.ErrorCode)
		}
	}
}

// timedCPU adds up the process CPU time (processCPU: the request, the GC,
// the fetchers it starts) of a benchmark's timed windows, a steadier
// measure than ns/op on a shared machine.
type timedCPU struct {
	total, at time.Duration
}

func (c *timedCPU) start(b *testing.B) {
	c.at = processCPU()
	b.StartTimer()
}

func (c *timedCPU) stop(b *testing.B) {
	b.StopTimer()
	c.total += processCPU() - c.at
}

func (c *timedCPU) report(b *testing.B) {
	b.ReportMetric(float64(c.total.Milliseconds())/float64(b.N), "cpu-ms/op")
}
