// Command samsa-bench measures produce and consume throughput of a Samsa
// broker against franz-go's kfake (an in-memory fake cluster), each server a
// process of its own driven by the same franz-go client from this process,
// and the servers' CPU-seconds per GB moved (fair.go).
//
//	go run ./cmd/samsa-bench [-mb 300] [-record 1024] [-partitions 16] [-rounds 3] [-kfake-bin PATH]
//	go run ./cmd/samsa-bench -replication [-partitions 3] [-rounds 3]   (see cluster.go)
//	go run ./cmd/samsa-bench -idempotence [-partitions 16] [-mb 256] [-rounds 3]   (see idempotence.go)
//	go run ./cmd/samsa-bench -transactions [-partitions 16] [-mb 256] [-txn-records 1000] [-rounds 3]   (see transactions.go)
//	go run ./cmd/samsa-bench -idle [-idle-partitions 100000] [-conns 1000]   (memory of idle partitions and connections, see idle.go)
//
// Client and servers run on loopback and share the machine's cores. Samsa
// writes real segment files (no fsync per write, as Kafka's default
// log.flush.interval.messages) under a temp dir.
package main

import (
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var (
	pacedMBs   float64
	profileDir string            // -profile: CPU profiles of the client and each broker process
	onlyConfig string            // -only: run one configuration of -replication
	pacedSet   bool              // -paced-mbs given: -replication paces at it rather than at half the throughput
	pacedFor   = 5 * time.Second // -paced-for: the latency run's length (5000 ticks of 1 ms)
	inflight   = 1               // -inflight: produce requests in flight per broker (kgo's default 1; Java's 5)
	floor      bool              // -floor: -replication also runs kfake-all (cluster.go)
)

type result struct {
	target              string
	partitions          int
	produceMBs          float64
	satP50, satP99      time.Duration // at saturation: client queueing included
	p50, p99, p999      time.Duration // at the paced rate
	episodes            int           // the paced run's records at or above its p99, in episodes (stalls.go)
	longestEpisode      time.Duration
	cpuWait, ioWait     string               // the share of the paced run in which some task waited for a CPU, for I/O (stalls.go)
	pacedCPU            [2]float64           // the paced run's CPU-seconds per GiB produced: the brokers' together, the client's (-replication)
	requestP99          time.Duration        // the paced run's Produce requests' round trip (reqtimer.go)
	brokerProduce       histogram            // the brokers' Produce durations over the paced run (-replication; empty otherwise)
	brokerPhases        map[string]histogram // and the phases of those requests' time (producePhases)
	round               int                  // -replication: the round it was measured in, from 1
	consumeMBs          float64
	pacedMBs            float64
	syncTook            time.Duration // writing the saturated run's data back before the paced run
	records, recordSize int
}

// runParams is one measurement: where, what topic, which acks.
type runParams struct {
	target              string
	addrs               []string
	partitions, records int
	size                int
	rf                  int16
	acks                kgo.Acks
	pacedHalf           bool    // pace the latency run at half the measured throughput
	pacedAt             float64 // pace it at this many MB/s instead (when > 0)
	consume             bool
	metrics             []string       // brokers' metrics URLs: read around the paced run
	serverCPU           func() float64 // the servers' CPU-seconds so far (-replication: clusterCPU), read around the paced run
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-broker" {
		runBrokerChild(os.Args[2:])
		return
	}
	replication := flag.Bool("replication", false, "measure RF=3 acks=all and RF=1 acks=1 on three broker processes")
	idempotence := flag.Bool("idempotence", false, "measure idempotent against plain produce on three broker processes (idempotence.go)")
	transactions := flag.Bool("transactions", false, "measure transactional against plain produce on three broker processes (transactions.go)")
	txnRecords := flag.Int("txn-records", 1000, "with -transactions: records per transaction")
	rounds := flag.Int("rounds", 3, "alternating runs of each server (or, with -idempotence and -transactions, configuration; with -replication, rounds of both configurations, each on a fresh cluster)")
	mb := flag.Int("mb", 300, "megabytes (MiB) to produce per run")
	recSize := flag.Int("record", 1024, "record value size in bytes")
	parts := flag.String("partitions", "16", "partition counts to run (-replication: the first; -idempotence, -transactions: the last)")
	kfakeBin := flag.String("kfake-bin", "", "the samsa-kfake binary (default: beside this one, else built with go build)")
	flag.Float64Var(&pacedMBs, "paced-mbs", 50, "produce rate (MB/s) of the latency run")
	flag.StringVar(&profileDir, "profile", "", "write CPU profiles (client.cpu; broker-N.cpu with -replication, samsa-PARTITIONS-ROUND.cpu by default) to this directory; with -idle, the broker's heap profiles (broker-heap-PHASE.pb.gz)")
	flag.DurationVar(&pacedFor, "paced-for", pacedFor, "length of the paced latency run (its p99 is over its 1 ms ticks: 2s made it the worst 20)")
	flag.IntVar(&inflight, "inflight", 1, "with -replication: produce requests in flight per broker (1: franz-go's default; the Java producer's max.in.flight.requests.per.connection is 5)")
	flag.StringVar(&onlyConfig, "only", "", "with -replication: run only this configuration (rf3-all or rf1-one; kfake-all follows rf3-all)")
	flag.BoolVar(&floor, "floor", true, "with -replication: after rf3-all, pace kfake at its rate (kfake-all, the machine's and client's floor)")
	idle := flag.Bool("idle", false, "measure RSS, open fds and goroutines of one broker holding idle partitions and connections (idle.go)")
	var ip idleParams
	flag.IntVar(&ip.partitions, "idle-partitions", 100_000, "with -idle: partitions to create")
	flag.IntVar(&ip.topicPartitions, "idle-topic-partitions", 1000, "with -idle: partitions per topic")
	flag.IntVar(&ip.conns, "conns", 1000, "with -idle: idle client connections to open")
	flag.DurationVar(&ip.settle, "idle-settle", 10*time.Second, "with -idle: idle time before each reading")
	flag.DurationVar(&ip.timeout, "idle-timeout", 30*time.Minute, "with -idle: the whole run's bound")
	flag.Parse()
	flag.Visit(func(f *flag.Flag) { pacedSet = pacedSet || f.Name == "paced-mbs" })
	if profileDir != "" {
		stop, err := startCPUProfile(filepath.Join(profileDir, "client.cpu"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer stop()
	}

	var counts []int
	for _, s := range strings.Split(*parts, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "bad -partitions %q\n", *parts)
			os.Exit(2)
		}
		counts = append(counts, n)
	}
	records := *mb << 20 / *recSize
	if *idle {
		if err := idleBench(os.Stdout, ip); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if *idempotence {
		if err := idempotenceBench(counts[len(counts)-1], *mb, *recSize, *rounds); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if *transactions {
		if err := transactionsBench(counts[len(counts)-1], *mb, *recSize, *txnRecords, *rounds); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if *replication {
		if err := replicationBench(counts[0], records, *recSize, *rounds, *kfakeBin); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}

	if err := fairBench(os.Stdout, counts, *mb, *recSize, *rounds, *kfakeBin); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// newProducer is the producer every server is driven with: plain (not
// idempotent) produce, 1 MiB batches, no linger, no compression,
// round-robin over partitions.
func newProducer(addrs []string, topic string, acks kgo.Acks, opts ...kgo.Opt) (*kgo.Client, error) {
	return kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addrs...), kgo.DisableIdempotentWrite(),
		kgo.RequiredAcks(acks), kgo.DefaultProduceTopic(topic),
		kgo.ProducerBatchMaxBytes(1 << 20), kgo.MaxBufferedRecords(64 << 10),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.ProducerLinger(0)}, opts...)...)
}

// runWith measures one target: it creates the topic, produces rp.records
// records as fast as the client sends them (throughput and saturated
// latency), consumes them back when rp.consume, then measures latency at
// a paced rate.
func runWith(rp runParams) (result, error) {
	res := result{target: rp.target, partitions: rp.partitions, records: rp.records, recordSize: rp.size}
	topic := fmt.Sprintf("bench-%s-%d", rp.target, rp.partitions)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	timer := &reqTimer{key: kmsg.Produce}
	cl, err := newProducer(rp.addrs, topic, rp.acks, kgo.WithHooks(timer), kgo.MaxProduceRequestsInflightPerBroker(inflight))
	if err != nil {
		return res, err
	}
	defer cl.Close()
	if r, err := kadm.NewClient(cl).CreateTopic(ctx, int32(rp.partitions), rp.rf, nil, topic); err != nil || r.Err != nil {
		return res, fmt.Errorf("create topic: %v %v", err, r.Err)
	}

	values := benchValues(rp.size)
	lat, elapsed, err := produceAll(ctx, cl, rp.records, values, true)
	if err != nil {
		return res, err
	}
	res.produceMBs = float64(rp.records*rp.size) / (1 << 20) / elapsed.Seconds()
	res.satP50, res.satP99 = lat[len(lat)/2], lat[len(lat)*99/100]
	res.pacedMBs = pacedMBs
	switch {
	case rp.pacedAt > 0:
		res.pacedMBs = rp.pacedAt
	case rp.pacedHalf:
		res.pacedMBs = res.produceMBs / 2
	}
	if rp.consume {
		elapsed, err := consumeAll(ctx, rp.addrs, topic, rp.partitions, rp.records)
		if err != nil {
			return res, err
		}
		res.consumeMBs = float64(rp.records*rp.size) / (1 << 20) / elapsed.Seconds()
	}
	var h0 produceHistograms
	if len(rp.metrics) > 0 {
		if h0, err = scrapeProduce(rp.metrics); err != nil {
			return res, err
		}
	}
	// The paced run measures half load, not the tail of the saturated run:
	// it starts once that run's writes (gigabytes in the page cache, RF 3)
	// have reached the disk.
	syncStart := time.Now()
	syscall.Sync()
	res.syncTook = time.Since(syncStart)
	timer.start()
	psi := startPressure()
	var s0, c0 float64
	if rp.serverCPU != nil {
		s0 = rp.serverCPU()
		c0, _ = procCPU(0)
	}
	sent, lat, err := pacedLatency(ctx, cl, topic, res.pacedMBs, values)
	if err != nil {
		return res, err
	}
	res.cpuWait, res.ioWait = psi.share()
	if rp.serverCPU != nil {
		c1, _ := procCPU(0)
		gib := float64(len(lat)*rp.size) / (1 << 30)
		res.pacedCPU = [2]float64{(rp.serverCPU() - s0) / gib, (c1 - c0) / gib}
	}
	sorted := slices.Sorted(slices.Values(lat))
	res.p50, res.p99, res.p999 = sorted[len(sorted)/2], sorted[len(sorted)*99/100], sorted[len(sorted)*999/1000]
	res.episodes, res.longestEpisode = tailEpisodes(sent, lat, res.p99, 2*time.Millisecond)
	res.requestP99 = p99(timer.stop())
	if len(rp.metrics) > 0 {
		h1, err := scrapeProduce(rp.metrics)
		if err != nil {
			return res, err
		}
		run, err := h1.since(h0)
		if err != nil {
			return res, err
		}
		res.brokerProduce, res.brokerPhases = run.duration, run.phases
	}
	return res, nil
}

// benchValues are 1024 values of size bytes each, incompressible: with no
// client compression, the bytes measured are the bytes that cross the wire
// and reach the log.
func benchValues(size int) [][]byte {
	values := make([][]byte, 1024)
	for i := range values {
		values[i] = make([]byte, size)
		rand.Read(values[i])
	}
	return values
}

// produceAll produces records records as fast as cl sends them and
// returns the time they all took and, if timed, each record's
// Produce-call-to-acknowledgement latency, sorted (the fair benchmark does
// not time records: two clock reads and a sort a record are client CPU
// taken from the servers it compares).
func produceAll(ctx context.Context, cl *kgo.Client, records int, values [][]byte, timed bool) ([]time.Duration, time.Duration, error) {
	var lat []time.Duration
	if timed {
		lat = make([]time.Duration, records)
	}
	var wg sync.WaitGroup
	var firstErr error
	var errOnce sync.Once
	wg.Add(records)
	start := time.Now()
	for i := range records {
		var sent time.Time
		if timed {
			sent = time.Now()
		}
		cl.Produce(ctx, &kgo.Record{Value: values[i%len(values)]}, func(_ *kgo.Record, err error) {
			if timed {
				lat[i] = time.Since(sent)
			}
			if err != nil {
				errOnce.Do(func() { firstErr = err })
			}
			wg.Done()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(lat)
	return lat, elapsed, firstErr
}

// consumeAll reads records records of topic's partitions from the start
// with a new client and returns the time it took.
func consumeAll(ctx context.Context, addrs []string, topic string, partitions, records int) (time.Duration, error) {
	offsets := map[string]map[int32]kgo.Offset{topic: {}}
	for p := range int32(partitions) {
		offsets[topic][p] = kgo.NewOffset().AtStart()
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.ConsumePartitions(offsets),
		kgo.FetchMaxBytes(32<<20), kgo.FetchMaxPartitionBytes(8<<20))
	if err != nil {
		return 0, err
	}
	defer cons.Close()
	got := 0
	start := time.Now()
	for got < records {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			return 0, fmt.Errorf("consumed %d of %d: %w", got, records, ctx.Err())
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) { ferr = err })
		if ferr != nil {
			return 0, ferr
		}
		got += fs.NumRecords()
	}
	return time.Since(start), nil
}

// pacedLatency produces at rate MB/s for pacedFor with no linger and
// returns, for each record in the order produced, when it was produced
// (from the run's start) and its Produce-call-to-acknowledgement latency.
func pacedLatency(ctx context.Context, cl *kgo.Client, topic string, rate float64, values [][]byte) (sent, lat []time.Duration, err error) {
	const tick = time.Millisecond
	size := len(values[0])
	perTick := max(1, int(rate*(1<<20)/float64(size)*tick.Seconds()))
	records := int(pacedFor/tick+1) * perTick
	sent, lat = make([]time.Duration, 0, records), make([]time.Duration, 0, records)
	var mu sync.Mutex // lat, written by the callbacks
	var firstErr error
	var wg sync.WaitGroup
	t := time.NewTicker(tick)
	defer t.Stop()
	start := time.Now()
	for end := start.Add(pacedFor); time.Now().Before(end); <-t.C {
		for i := range perTick {
			at := time.Now()
			wg.Add(1)
			mu.Lock()
			sent = append(sent, at.Sub(start))
			lat = append(lat, 0)
			j := len(lat) - 1
			mu.Unlock()
			cl.Produce(ctx, &kgo.Record{Topic: topic, Value: values[i%len(values)]}, func(_ *kgo.Record, err error) {
				d := time.Since(at)
				mu.Lock()
				lat[j] = d
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
				wg.Done()
			})
		}
	}
	wg.Wait()
	return sent, lat, firstErr
}

// startCPUProfile profiles this process into path until the returned
// function is called.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
