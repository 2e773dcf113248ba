package broker

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// createTopicsConcurrently creates topics prefix-0..n-1 with parts
// partitions each (RF 3), in requests of batch topics, one request in flight
// per client (a broker serves a connection's requests one at a time, as
// Kafka does, so concurrency needs connections).
func createTopicsConcurrently(b *testing.B, adms []*kadm.Client, prefix string, n, parts, batch int) {
	var wg sync.WaitGroup
	free := make(chan *kadm.Client, len(adms))
	for _, a := range adms {
		free <- a
	}
	var mu sync.Mutex
	var firstErr error
	for start := 0; start < n; start += batch {
		var names []string
		for i := start; i < min(start+batch, n); i++ {
			names = append(names, fmt.Sprintf("%s-%d", prefix, i))
		}
		wg.Add(1)
		adm := <-free
		go func() {
			defer func() { free <- adm; wg.Done() }()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			res, err := adm.CreateTopics(ctx, int32(parts), 3, nil, names...)
			if err == nil {
				err = res.Error()
			}
			if err != nil {
				mu.Lock()
				firstErr = err
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		b.Fatal(firstErr)
	}
}

// adminClients returns n admin clients of broker, each with its own
// connection.
func adminClients(b *testing.B, broker *Broker, n int) []*kadm.Client {
	out := make([]*kadm.Client, n)
	for i := range out {
		out[i] = kadm.NewClient(newClient(b, broker))
	}
	return out
}

// envInt is the positive integer in environment variable name, or def.
func envInt(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return n
}

// windowProfile profiles the timed window only (-cpuprofile and
// -memprofile cover set-up and teardown too): a CPU profile when
// SAMSA_BENCH_CPUPROFILE names a file, else, when SAMSA_BENCH_MEMPROFILE
// does, the allocation profile at the window's start (<file>.base) and end
// (<file>; compare with go tool pprof -base). The returned func ends it.
func windowProfile(b *testing.B) func() {
	if mp := os.Getenv("SAMSA_BENCH_MEMPROFILE"); mp != "" {
		writeAllocs := func(path string) {
			f, err := os.Create(path)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
				b.Fatal(err)
			}
		}
		writeAllocs(mp + ".base")
		return func() {
			runtime.GC() // the profile is as of the last completed collection
			writeAllocs(mp)
		}
	}
	path := os.Getenv("SAMSA_BENCH_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}

// processCPU is the CPU time (user and system) this process has used: the
// brokers, their store and the clients all run in it, so a window's share
// is the work done then, whatever else the machine runs.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// BenchmarkCreate100kPartitions: 100 topics × 1000 partitions, RF 3, on 3
// brokers in this process (real logs on disk, one embedded etcd), through
// CreateTopics of 25 topics each from 4 clients at a time
// (SAMSA_CREATE_BATCH and SAMSA_CREATE_CLIENTS change both); a topic
// counts when its leaders are in the metadata. It runs once per store
// SAMSA_BENCH_STORE lists (benchStores: etcd when unset); on zookeeper
// the brokers share a standalone ZooKeeper server process.
//
//	go test ./internal/broker -run '^$' -bench Create100k -benchtime 1x
//	SAMSA_BENCH_STORE=etcd,zookeeper go test ./internal/broker -run '^$' -bench Create100k -benchtime 1x
func BenchmarkCreate100kPartitions(b *testing.B) { benchStores(b, benchCreate100k) }

func benchCreate100k(b *testing.B) {
	clients, batch := envInt(b, "SAMSA_CREATE_CLIENTS", 4), envInt(b, "SAMSA_CREATE_BATCH", 25)
	for range b.N {
		brokers := startCluster(b, 3, nil)
		adms := adminClients(b, controllerOf(b, brokers), clients)
		stop := windowProfile(b)
		cpu0 := processCPU()
		start := time.Now()
		createTopicsConcurrently(b, adms, "bench", 100, 1000, batch)
		took := time.Since(start)
		cpu := processCPU() - cpu0
		stop()
		b.ReportMetric(100_000/took.Seconds(), "partitions/s")
		b.ReportMetric(cpu.Seconds(), "cpu-s")
		b.Logf("created 100000 partitions (300000 replicas) on %s in %v (%v of CPU), %d clients with %d topics per CreateTopics; load average %s",
			storeKind(b), took.Round(time.Millisecond), cpu.Round(time.Millisecond), clients, batch, loadAvg())
	}
}

// BenchmarkDelete1000Topics: 1000 topics × 10 partitions (RF 3) deleted
// with DeleteTopics, timed from the request to every partition directory
// on every broker renamed for deletion.
//
//	go test ./internal/broker -run '^$' -bench Delete1000 -benchtime 1x
func BenchmarkDelete1000Topics(b *testing.B) {
	for range b.N {
		brokers := startCluster(b, 3, map[string]string{"log.segment.delete.delay.ms": "600000"})
		adms := adminClients(b, controllerOf(b, brokers), 4)
		adm := adms[0]
		createTopicsConcurrently(b, adms, "del", 1000, 10, 50)
		// One record per partition, so that the leaders' directories exist
		// (an empty partition has none; followers fetch with replication).
		pr := newClient(b, brokers[0], kgo.RecordPartitioner(kgo.ManualPartitioner()))
		ctx0, cancel0 := context.WithTimeout(context.Background(), 5*time.Minute)
		for i := range 1000 {
			for p := range int32(10) {
				pr.Produce(ctx0, &kgo.Record{Topic: fmt.Sprintf("del-%d", i), Partition: p, Value: []byte("x")}, nil)
			}
		}
		if err := pr.Flush(ctx0); err != nil {
			b.Fatal(err)
		}
		cancel0()
		var names []string
		for i := range 1000 {
			names = append(names, fmt.Sprintf("del-%d", i))
		}
		adm.SetTimeoutMillis(60_000)
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		res, err := adm.DeleteTopics(ctx, names...)
		cancel()
		if err == nil {
			err = res.Error()
		}
		if err != nil {
			b.Fatal(err)
		}
		answered := time.Since(start)
		for {
			left := 0
			for _, br := range brokers {
				for _, d := range br.cfg.LogDirs {
					m, _ := filepath.Glob(filepath.Join(d, "del-*"))
					for _, p := range m {
						if !strings.HasSuffix(p, "-delete") {
							left++
						}
					}
				}
			}
			if left == 0 {
				break
			}
			if time.Since(start) > 5*time.Minute {
				b.Fatalf("%d partition dirs never renamed", left)
			}
			time.Sleep(5 * time.Millisecond)
		}
		took := time.Since(start)
		b.ReportMetric(took.Seconds(), "s/1000-topic-delete")
		b.Logf("deleted 1000 topics × 10 partitions (30000 replicas, 10000 written directories): response after %v, all dirs renamed after %v; load average %s",
			answered.Round(time.Millisecond), took.Round(time.Millisecond), loadAvg())
	}
}
