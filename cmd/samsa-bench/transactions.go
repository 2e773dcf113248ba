package main

// -transactions: the cost of transactions (issue 19). Three broker
// processes (cluster.go), a topic of RF 3 and franz-go's producer with its
// defaults (idempotent, acks=all) but no compression (the records are
// incompressible, each different), once plain and once transactional with
// -txn-records records per transaction (Begin, produce, Flush,
// EndTransaction commit). Runs alternate (plain then
// transactional, then the other way round); the table shows median
// throughput, the brokers' CPU-seconds per GB, and the EndTxn round trip
// (the client's request to answer: the coordinator's PrepareCommit write,
// acks=all) at p50 and p99 over every transaction of every run.

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// txnRun is one measurement.
type txnRun struct {
	mbs, cpuPerGB float64
	endTxn        []time.Duration // EndTxn round trips, transactional runs only
}

func transactionsBench(partitions, mb, size, perTxn, rounds int) error {
	c, err := startBenchCluster()
	if err != nil {
		return err
	}
	defer c.stop()
	names := []string{"plain (idempotent)", "transactional"}
	runs := map[string][]txnRun{}
	for round := range rounds {
		for i := range names {
			txn := (i+round)%2 == 1 // alternate which goes first
			name := names[0]
			if txn {
				name = names[1]
			}
			topic := fmt.Sprintf("txn-%d-%d", round, i)
			r, err := txnMeasure(c, topic, txn, partitions, mb, size, perTxn, round)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			runs[name] = append(runs[name], r)
			fmt.Fprintf(os.Stderr, "round %d %-20s %8.1f MB/s %6.2f cpu-s/GB\n", round+1, name, r.mbs, r.cpuPerGB)
		}
	}
	fmt.Printf("%-20s %5s %12s %9s %10s %12s %12s %8s\n", "producer", "runs", "median MB/s", "cpu-s/GB", "vs plain", "EndTxn p50", "EndTxn p99", "EndTxns")
	plain := txnMedian(runs[names[0]], func(r txnRun) float64 { return r.mbs })
	for _, name := range names {
		rs := runs[name]
		mbs := txnMedian(rs, func(r txnRun) float64 { return r.mbs })
		cpu := txnMedian(rs, func(r txnRun) float64 { return r.cpuPerGB })
		var ends []time.Duration
		for _, r := range rs {
			ends = append(ends, r.endTxn...)
		}
		p50, p99 := "", ""
		if len(ends) > 0 {
			slices.Sort(ends)
			p50 = ends[len(ends)/2].Round(10 * time.Microsecond).String()
			p99 = ends[len(ends)*99/100].Round(10 * time.Microsecond).String()
		}
		fmt.Printf("%-20s %5d %12.1f %9.2f %9.3fx %12s %12s %8d\n", name, len(rs), mbs, cpu, mbs/plain, p50, p99, len(ends))
	}
	fmt.Printf("3 broker processes, topic RF 3 (min.insync.replicas=1), %d partitions, %d-byte records, %d MB a run,\n", partitions, size, mb)
	fmt.Printf("franz-go defaults (idempotent, acks=all), uncompressed incompressible records; transactional: %d records a transaction; cpu-s/GB: the three brokers' user+system CPU.\n", perTxn)
	return nil
}

func txnMedian(rs []txnRun, f func(txnRun) float64) float64 {
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	slices.Sort(v)
	return v[len(v)/2]
}

// txnMeasure creates topic and produces mb megabytes to it, in
// transactions of perTxn records if txn.
func txnMeasure(c *benchCluster, topic string, txn bool, partitions, mb, size, perTxn, round int) (txnRun, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if _, err := idemTopic(ctx, c.addrs, topic, partitions); err != nil {
		return txnRun{}, err
	}
	timer := &reqTimer{key: kmsg.EndTxn}
	opts := []kgo.Opt{kgo.SeedBrokers(c.addrs...), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.ProducerBatchMaxBytes(1 << 20),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.WithHooks(timer)}
	if txn {
		opts = append(opts, kgo.TransactionalID(fmt.Sprintf("bench-%d", round)))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return txnRun{}, err
	}
	defer cl.Close()
	// Incompressible records, each different: values are windows of a
	// random buffer.
	pool := make([]byte, 4<<20+size)
	rand.Read(pool)
	value := func(i int) []byte { o := (i * 7919) % (4 << 20); return pool[o : o+size] }
	records := (mb << 20) / size
	var firstErr error
	var errOnce sync.Once
	promise := func(r *kgo.Record, err error) {
		if err != nil {
			err = fmt.Errorf("produce to partition %d: %w", r.Partition, err)
			errOnce.Do(func() { firstErr = err })
		}
	}
	// Warm up: the producer id (and for transactions the coordinator,
	// which creates __transaction_state on first use) outside the timing.
	if txn {
		if err := cl.BeginTransaction(); err != nil {
			return txnRun{}, err
		}
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: value(0)}).FirstErr(); err != nil {
		return txnRun{}, err
	}
	if txn {
		if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			return txnRun{}, err
		}
		timer.start() // EndTxn round trips from here on
	}
	cpu0 := clusterCPU(c)
	start := time.Now()
	for done := 0; done < records; {
		n := min(perTxn, records-done)
		if txn {
			if err := cl.BeginTransaction(); err != nil {
				return txnRun{}, fmt.Errorf("begin at record %d: %w", done, err)
			}
		}
		for i := range n {
			cl.Produce(ctx, &kgo.Record{Value: value(done + i)}, promise)
		}
		done += n
		if txn {
			// EndTransaction does not flush: records still buffered or in
			// flight would reach their partitions after the commit (and
			// be refused, KIP-890 part 1).
			if err := cl.Flush(ctx); err != nil {
				return txnRun{}, err
			}
			if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
				return txnRun{}, fmt.Errorf("commit of records %d..%d: %w (produce: %v)", done-n, done, err, firstErr)
			}
		}
	}
	if err := cl.Flush(ctx); err != nil {
		return txnRun{}, err
	}
	elapsed := time.Since(start)
	if firstErr != nil {
		return txnRun{}, firstErr
	}
	bytes := float64(records * size)
	return txnRun{mbs: bytes / (1 << 20) / elapsed.Seconds(), cpuPerGB: (clusterCPU(c) - cpu0) / (bytes / (1 << 30)),
		endTxn: timer.stop()}, nil
}
