package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestLargeProduceRequestsExactlyOnce: franz-go's default producer
// (idempotent, acks=all, up to 5 requests in flight) floods 6 partitions of
// an RF 3 topic on 3 brokers with 16 KiB records, uncompressed, lingering
// 100 ms so that batches fill (franz-go's 1 MB): a leader's Produce
// requests then carry its two partitions' batches, over 1 MiB together,
// which the broker appends on several goroutines (api.appendAll). Every
// record is acknowledged, and the log holds each once, in production order
// per partition, byte for byte.
func TestLargeProduceRequestsExactlyOnce(t *testing.T) {
	c, all := startReadyCluster(t)
	const topic = "large"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var largest atomic.Int64 // the largest Produce request written, bytes
	cl, err := kgo.NewClient(kgo.SeedBrokers(all...), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.ProducerLinger(100*time.Millisecond),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.WithHooks(produceSizes{&largest}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	c.createTopicOf(all, topic, 6, 3)
	c.waitPartitions(all, topic, "full ISR", fullISR(3))

	pad := strings.Repeat("x", 16<<10)
	log := &ackLog{}
	const records = 2000 // 32 MiB
	for i := range records {
		cl.Produce(ctx, &kgo.Record{Value: []byte(fmt.Sprintf("%s-%09d%s", topic, i, pad))}, log.add)
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	log.mu.Lock()
	acks, errs := slices.Clone(log.acks), log.errs
	log.mu.Unlock()
	if len(acks) != records || len(errs) > 0 {
		t.Fatalf("%d of %d records acknowledged, errors %v", len(acks), records, errs)
	}
	if n := largest.Load(); n < 1<<20+4<<10 {
		t.Fatalf("the largest Produce request was %d bytes: none took the parallel append", n)
	}
	checkExactlyOnce(t, acks, consumeAll(t, all, topic))
	t.Logf("%d records of 16 KiB, each once; the largest Produce request %d bytes", records, largest.Load())
}

// produceSizes keeps the size of the largest Produce request written.
type produceSizes struct{ largest *atomic.Int64 }

func (h produceSizes) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, written int, _, _ time.Duration, err error) {
	if key != 0 || err != nil {
		return
	}
	for n := h.largest.Load(); int64(written) > n && !h.largest.CompareAndSwap(n, int64(written)); n = h.largest.Load() {
	}
}

var _ kgo.HookBrokerWrite = produceSizes{}
