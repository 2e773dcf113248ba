package controller

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/metastore"
)

// BenchmarkBrokerFailure: the controller's own work when one of 3 brokers
// dies, with SAMSA_BENCH_FAILURE_PARTITIONS partitions (default 100000,
// RF 3, topics of 1000) on an in-memory store and a sender that records
// without delivering: the state machines, the chunked state writes and the
// request batches, without etcd's commit or the network. It complements
// cmd/samsa-failover-bench -mode crash, which measures the whole path.
//
//	go test ./internal/controller -run '^$' -bench BrokerFailure -benchtime 5x
func BenchmarkBrokerFailure(b *testing.B) {
	total := benchPartitions(b)
	for range b.N {
		b.StopTimer()
		cl := loadedCluster(b, total, perTopic)
		cl.kill(3)
		cl.feed(1) // the deregistration, as node 1's watch brings it
		b.StartTimer()
		start := time.Now()
		cl.drain(1)
		took := time.Since(start)
		b.StopTimer()
		sent := cl.nodes[1].sender.take()
		if len(sent) == 0 {
			b.Fatal("nothing sent")
		}
		b.ReportMetric(float64(took.Microseconds())/float64(total/3), "µs/led-partition")
	}
}

const perTopic = 1000

func benchPartitions(b *testing.B) int {
	total := 100_000
	if s := os.Getenv("SAMSA_BENCH_FAILURE_PARTITIONS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1000 {
			b.Fatalf("SAMSA_BENCH_FAILURE_PARTITIONS=%q: a number of at least 1000", s)
		}
		total = n
	}
	return total / perTopic * perTopic
}

// loadedCluster is brokers 1-3 with node 1 the active controller of total
// online partitions (RF 3, leaders spread evenly) loaded into the store.
func loadedCluster(b *testing.B, total, perTopic int) *cluster {
	last := int32(perTopic - 1)
	cl := newCluster(b, 1, 2, 3)
	md := metadata.New(cl.store)
	for i := range total / perTopic {
		name := fmt.Sprintf("bench-%04d", i)
		a := metadata.Assignment{Partitions: map[int32][]int32{}}
		copy(a.TopicID[:], fmt.Sprintf("%-16s", name))
		var ops []metastore.Op
		var chunk []metadata.StateEntry
		for p := range int32(perTopic) {
			rs := []int32{(int32(i)+p)%3 + 1, (int32(i)+p+1)%3 + 1, (int32(i)+p+2)%3 + 1}
			a.Partitions[p] = rs
			chunk = append(chunk, metadata.StateEntry{Partition: p, State: metadata.LeaderAndIsr{Leader: rs[0], ISR: rs, ControllerEpoch: 1}})
			if p == last || metadata.ChunkOf(p+1) != metadata.ChunkOf(p) {
				ops = append(ops, metastore.Put(metadata.StateChunkKey(name, metadata.ChunkOf(p)), metadata.EncodeStateChunk(chunk)))
				chunk = chunk[:0]
			}
		}
		ops = append(ops, metastore.Put(metadata.TopicKey(name), metadata.EncodeAssignment(a)))
		for len(ops) > 0 {
			n := min(len(ops), 8)
			if _, err := md.Store().Txn(cl.ctx, nil, ops[:n]); err != nil {
				b.Fatal(err)
			}
			ops = ops[n:]
		}
	}
	cl.handle(1, Startup{Session: cl.nodes[1].sess})
	cl.deliver(1) // the store as its watch starts: nothing to do
	if !cl.nodes[1].c.IsActive() {
		b.Fatal("node 1 is not the controller")
	}
	cl.nodes[1].sender.take()
	return cl
}

// BenchmarkControlledShutdownController: the controller's own work for a
// ControlledShutdown of a broker leading a third of the partitions (same
// set-up as BenchmarkBrokerFailure): elections, ISR removals, their chunk
// writes and the request batch, up to the answer.
//
//	go test ./internal/controller -run '^$' -bench ControlledShutdownController -benchtime 5x
func BenchmarkControlledShutdownController(b *testing.B) {
	total := benchPartitions(b)
	for range b.N {
		b.StopTimer()
		cl := loadedCluster(b, total, perTopic)
		req := kmsg.NewPtrControlledShutdownRequest()
		req.BrokerID, req.BrokerEpoch = 3, -1
		var resp *kmsg.ControlledShutdownResponse
		b.StartTimer()
		start := time.Now()
		cl.handle(1, ControlledShutdown{Req: req, Reply: func(r *kmsg.ControlledShutdownResponse) { resp = r }})
		took := time.Since(start)
		b.StopTimer()
		if resp == nil || resp.ErrorCode != 0 || len(resp.PartitionsRemaining) != 0 {
			b.Fatalf("ControlledShutdown: %+v", resp)
		}
		b.ReportMetric(took.Seconds(), "s/controlled-shutdown")
	}
}
