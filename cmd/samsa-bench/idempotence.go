package main

// -idempotence: the broker's cost of the idempotent producer (issue 16).
// Three broker processes (cluster.go), a topic of RF 3, and one raw
// producer that sends the same requests with and without a producer id:
// each request carries one batch of 16 records of -record bytes for each
// partition its leader leads, up to 5 requests in flight per broker, as
// an idempotent client may. Only the producer id, epoch and sequences
// differ between the two, so the difference is the broker's: the sequence
// checks under the append lock and the producer state it keeps. Runs
// alternate (plain then idempotent, then the other way round) and the
// table shows medians and the brokers' CPU-seconds per GB produced.

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/wire"
)

const (
	idemRecordsPerBatch = 16
	idemInFlight        = 5 // Kafka's max.in.flight.requests.per.connection for idempotence
)

// idemConfig is one configuration measured.
type idemConfig struct {
	name       string
	acks       int16
	idempotent bool
}

// idemRun is one measurement: throughput, and the brokers' CPU per GB.
type idemRun struct {
	mbs, cpuPerGB float64
}

func idempotenceBench(partitions, mb, size, rounds int) error {
	c, err := startBenchCluster()
	if err != nil {
		return err
	}
	defer c.stop()
	configs := []idemConfig{{"acks=1 plain", 1, false}, {"acks=1 idempotent", 1, true},
		{"acks=all plain", -1, false}, {"acks=all idempotent", -1, true}}
	runs := map[string][]idemRun{}
	for round := range rounds {
		for i := range configs {
			cfg := configs[i]
			if round%2 == 1 { // the other of each pair first
				cfg = configs[i^1]
			}
			topic := fmt.Sprintf("idem-%d-%d", round, i)
			r, err := idemMeasure(c, topic, cfg, partitions, mb, size)
			if err != nil {
				return fmt.Errorf("%s: %w", cfg.name, err)
			}
			runs[cfg.name] = append(runs[cfg.name], r)
			fmt.Fprintf(os.Stderr, "round %d %-20s %8.1f MB/s %6.2f cpu-s/GB\n", round+1, cfg.name, r.mbs, r.cpuPerGB)
		}
	}
	fmt.Printf("%-20s %6s %14s %14s %10s\n", "config", "runs", "median MB/s", "cpu-s/GB", "vs plain")
	for i, cfg := range configs {
		mbs, cpu := idemMedians(runs[cfg.name])
		ratio := ""
		if cfg.idempotent {
			plain, _ := idemMedians(runs[configs[i-1].name])
			ratio = fmt.Sprintf("%.3fx", mbs/plain)
		}
		fmt.Printf("%-20s %6d %14.1f %14.2f %10s\n", cfg.name, len(runs[cfg.name]), mbs, cpu, ratio)
	}
	fmt.Printf("3 broker processes (RF 3, min.insync.replicas=1), %d partitions, %d-byte records, %d records a batch,\n", partitions, size, idemRecordsPerBatch)
	fmt.Printf("%d MB a run, %d requests in flight per broker; cpu-s/GB: the three brokers' user+system CPU per GB produced.\n", mb, idemInFlight)
	return nil
}

func idemMedians(rs []idemRun) (mbs, cpu float64) {
	a, b := make([]float64, len(rs)), make([]float64, len(rs))
	for i, r := range rs {
		a[i], b[i] = r.mbs, r.cpuPerGB
	}
	slices.Sort(a)
	slices.Sort(b)
	return a[len(a)/2], b[len(b)/2]
}

// idemMeasure creates topic and produces mb megabytes to it.
func idemMeasure(c *benchCluster, topic string, cfg idemConfig, partitions, mb, size int) (idemRun, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	leaders, err := idemTopic(ctx, c.addrs, topic, partitions)
	if err != nil {
		return idemRun{}, err
	}
	pid, epoch := int64(-1), int16(-1)
	if cfg.idempotent {
		if pid, epoch, err = initProducerID(ctx, c.addrs[0]); err != nil {
			return idemRun{}, err
		}
	}
	batch := idemBatch(size)
	perBroker := map[int32][]int32{}
	for p, l := range leaders {
		perBroker[l] = append(perBroker[l], p)
	}
	requests := (mb << 20) / (size * idemRecordsPerBatch * partitions)
	cpu0 := clusterCPU(c)
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, len(perBroker))
	for leader, parts := range perBroker {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := idemProducer{topic: topic, parts: parts, batch: batch, acks: cfg.acks, pid: pid, epoch: epoch}
			if err := p.run(ctx, c.addrs[leader], requests); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return idemRun{}, err
	}
	bytes := float64(requests * partitions * len(batch))
	return idemRun{mbs: bytes / (1 << 20) / elapsed.Seconds(), cpuPerGB: (clusterCPU(c) - cpu0) / (bytes / (1 << 30))}, nil
}

// idemTopic creates topic (RF 3) and returns each partition's leader.
func idemTopic(ctx context.Context, addrs []string, topic string, partitions int) (map[int32]int32, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, int32(partitions), 3, nil, topic); err != nil {
		return nil, err
	}
	for {
		td, err := adm.ListTopics(ctx, topic)
		if err == nil && td[topic].Err == nil && len(td[topic].Partitions) == partitions {
			leaders := map[int32]int32{}
			for p, d := range td[topic].Partitions {
				if d.Leader >= 0 && len(d.ISR) == 3 {
					leaders[p] = d.Leader
				}
			}
			if len(leaders) == partitions {
				return leaders, nil
			}
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("topic %s: no leaders and full ISRs", topic)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func initProducerID(ctx context.Context, addr string) (int64, int16, error) {
	conn, err := wire.Dial(ctx, addr, "samsa-bench", 10*time.Second)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close()
	req := kmsg.NewPtrInitProducerIDRequest()
	req.Version, req.ProducerID, req.ProducerEpoch = 4, -1, -1
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	if err := conn.RoundTrip(req, resp, 10*time.Second); err != nil {
		return 0, 0, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return 0, 0, err
	}
	return resp.ProducerID, resp.ProducerEpoch, nil
}

// idemBatch is one uncompressed v2 batch of idemRecordsPerBatch records of
// size random-ish bytes, without a producer id.
func idemBatch(size int) []byte {
	value := make([]byte, size)
	rand.Read(value) // incompressible, as the other benchmarks' values
	b := kmsg.RecordBatch{PartitionLeaderEpoch: -1, Magic: 2, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		LastOffsetDelta: idemRecordsPerBatch - 1, NumRecords: idemRecordsPerBatch}
	now := time.Now().UnixMilli()
	b.FirstTimestamp, b.MaxTimestamp = now, now
	for i := range idemRecordsPerBatch {
		r := kmsg.Record{OffsetDelta: int32(i), Key: []byte(strconv.Itoa(i)), Value: value}
		r.Length = int32(len(r.AppendTo(nil)) - 1) // the length of what follows its varint (one byte for 0)
		b.Records = r.AppendTo(b.Records)
	}
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-12)) // batch length: what follows it
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], crc32.MakeTable(crc32.Castagnoli)))
	return out
}

// idemProducer sends requests produce requests to one leader.
type idemProducer struct {
	topic string
	parts []int32
	batch []byte
	acks  int16
	pid   int64
	epoch int16
}

func (p *idemProducer) run(ctx context.Context, addr string, requests int) error {
	conn, err := wire.Dial(ctx, addr, "samsa-bench", 10*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	seqs := make([]int32, len(p.parts))
	inflight := make(chan *kmsg.ProduceRequest, idemInFlight)
	recvErr := make(chan error, 1)
	go func() {
		for req := range inflight {
			resp := req.ResponseKind().(*kmsg.ProduceResponse)
			if err := conn.Receive(req, resp, 30*time.Second); err != nil {
				recvErr <- err
				return
			}
			for _, t := range resp.Topics {
				for _, pr := range t.Partitions {
					if err := kerr.ErrorForCode(pr.ErrorCode); err != nil {
						recvErr <- fmt.Errorf("partition %d: %w", pr.Partition, err)
						return
					}
				}
			}
		}
		recvErr <- nil
	}()
	for range requests {
		req := p.request(seqs)
		if err := conn.Send(req, 30*time.Second); err != nil {
			close(inflight)
			return err
		}
		select {
		case inflight <- req:
		case err := <-recvErr:
			close(inflight)
			return err
		}
	}
	close(inflight)
	return <-recvErr
}

// request builds the next request: a copy of the batch for each partition,
// with the producer's id, epoch and next sequence when it is idempotent.
func (p *idemProducer) request(seqs []int32) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 9, p.acks, 30000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = p.topic
	for i, part := range p.parts {
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition = part
		rp.Records = slices.Clone(p.batch)
		if p.pid >= 0 {
			be := binary.BigEndian
			be.PutUint64(rp.Records[43:], uint64(p.pid))
			be.PutUint16(rp.Records[51:], uint16(p.epoch))
			be.PutUint32(rp.Records[53:], uint32(seqs[i]))
			be.PutUint32(rp.Records[17:], crc32.Checksum(rp.Records[21:], crc32.MakeTable(crc32.Castagnoli)))
			seqs[i] += idemRecordsPerBatch
		}
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return req
}

// clusterCPU is the brokers' CPU-seconds so far (utime+stime from
// /proc/<pid>/stat).
func clusterCPU(c *benchCluster) float64 {
	total := 0.0
	for _, p := range c.procs {
		if cpu, err := procCPU(p.Process.Pid); err == nil {
			total += cpu
		}
	}
	return total
}
