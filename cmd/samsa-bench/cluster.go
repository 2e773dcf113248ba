package main

// The replication benchmark (-replication): three broker processes (this
// binary re-executed with -broker) on one embedded etcd held by the parent,
// which also runs the client. It measures RF=3 acks=all and, in the same
// round, RF=1 acks=1: saturated throughput, then produce latency paced at
// half of that throughput, as the client sees it (p50, p99, p99.9) and as
// the brokers' request-duration histogram does (brokermetrics.go). Each of
// -rounds rounds runs on a fresh cluster; the summary is each
// configuration's medians, and RF 3 acks=all's paced p99 against issue 22's
// target.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-kafka/samsa/internal/broker"
	"github.com/samsa-kafka/samsa/internal/config"
	"github.com/samsa-kafka/samsa/internal/loopback"
	"github.com/samsa-kafka/samsa/internal/metastore/embedetcd"
)

// runBrokerChild is the -broker mode: one broker until SIGTERM.
func runBrokerChild(args []string) {
	fs := flag.NewFlagSet("broker", flag.ExitOnError)
	id := fs.String("id", "0", "broker.id")
	dir := fs.String("dir", "", "log.dirs")
	port := fs.Int("port", 0, "listener port")
	store := fs.String("store", "", "metadata.store.connect")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of this broker to the file (hidden: set by -profile)")
	metricsPort := fs.Int("metrics-port", 0, "serve the broker's Prometheus metrics and the Go runtime's (go_goroutines, go_memstats_*) on 127.0.0.1:port/metrics, and /debug/freeosmemory and /debug/pprof/ (0: not at all)")
	fs.Parse(args)
	if *cpuprofile != "" {
		stop, err := startCPUProfile(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer stop()
	}
	cfg, _, err := config.Load(map[string]string{
		"broker.id": *id, "listeners": fmt.Sprintf("PLAINTEXT://127.0.0.1:%d", *port), "log.dirs": *dir,
		"metadata.store.connect": *store, "metadata.store.max.txn.ops": strconv.Itoa(embedetcd.MaxTxnOps),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	opts := broker.Options{Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	if *metricsPort != 0 {
		reg := prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector())
		opts.Registry = reg
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *metricsPort))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		// -idle: a GC before each reading; heap and goroutine profiles.
		mux.HandleFunc("/debug/freeosmemory", func(http.ResponseWriter, *http.Request) { debug.FreeOSMemory() })
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		go http.Serve(l, mux)
	}
	b, err := broker.Start(cfg, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	b.Close()
}

// benchCluster is the store plus three broker processes.
type benchCluster struct {
	dir     string
	store   *embedetcd.Server
	procs   []*exec.Cmd
	addrs   []string
	metrics []string // each broker's Prometheus metrics URL
}

func startBenchCluster() (*benchCluster, error) {
	dir, err := os.MkdirTemp("", "samsa-bench-cluster")
	if err != nil {
		return nil, err
	}
	c := &benchCluster{dir: dir}
	if c.store, err = embedetcd.StartLocal(filepath.Join(dir, "store"), nil); err != nil {
		return nil, err
	}
	for id := range 3 {
		port, err := loopback.FreePort()
		if err != nil {
			c.stop()
			return nil, err
		}
		mport, err := loopback.FreePort()
		if err != nil {
			c.stop()
			return nil, err
		}
		args := []string{"-broker", "-id", strconv.Itoa(id), "-dir", filepath.Join(dir, strconv.Itoa(id)),
			"-port", strconv.Itoa(port), "-store", c.store.Endpoints()[0], "-metrics-port", strconv.Itoa(mport)}
		if profileDir != "" {
			args = append(args, "-cpuprofile", filepath.Join(profileDir, fmt.Sprintf("broker-%d.cpu", id)))
		}
		cmd := exec.Command(os.Args[0], args...)
		cmd.Stderr = os.Stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM} // this process dies: so do the brokers
		if err := cmd.Start(); err != nil {
			c.stop()
			return nil, err
		}
		c.procs = append(c.procs, cmd)
		c.addrs = append(c.addrs, fmt.Sprintf("127.0.0.1:%d", port))
		c.metrics = append(c.metrics, fmt.Sprintf("http://127.0.0.1:%d/metrics", mport))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		cl, err := kgo.NewClient(kgo.SeedBrokers(c.addrs...))
		if err == nil {
			m, merr := kadm.NewClient(cl).BrokerMetadata(ctx)
			cl.Close()
			if merr == nil && len(m.Brokers) == 3 && m.Controller >= 0 {
				return c, nil
			}
		}
		if ctx.Err() != nil {
			c.stop()
			return nil, fmt.Errorf("cluster did not form")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (c *benchCluster) stop() {
	for _, p := range c.procs {
		p.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range c.procs {
		done := make(chan struct{})
		go func() { p.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			p.Process.Kill()
		}
	}
	if c.store != nil {
		c.store.Close()
	}
	os.RemoveAll(c.dir)
}

// rf3P99Target is issue 22's: RF 3 acks=all at half the saturated
// throughput, the record p99 the client sees.
const rf3P99Target = 3 * time.Millisecond

// replicationBench runs both configurations on a fresh cluster each round
// and, with -floor, kfake-all after them (replicationRound).
func replicationBench(partitions, records, size, rounds int, kfakeBin string) error {
	fmt.Printf("start: %s\n", uptimeLine())
	machineCheck(2*time.Second, 1<<30)
	defer debug.SetGCPercent(debug.SetGCPercent(clientGOGC)) // the client's, as in the fair benchmark
	var floorBin string
	if floor && onlyConfig != "rf1-one" {
		bin, cleanup, err := kfakeBinary(kfakeBin)
		if err != nil {
			return err
		}
		defer cleanup()
		floorBin = bin
	}
	var results []result
	for round := 1; round <= rounds; round++ {
		rs, err := replicationRound(partitions, records, size, floorBin)
		if err != nil {
			return fmt.Errorf("round %d: %w", round, err)
		}
		for _, r := range rs {
			r.round = round
			results = append(results, r)
		}
	}
	fmt.Printf("%5s %-8s %10s %8s %12s %10s %10s %10s %10s %10s %10s %11s %26s %14s %8s %7s %15s\n", "round", "config", "partitions",
		"records", "produce MB/s", "sat p50", "sat p99", "paced MB/s", "paced p50", "paced p99", "p99.9", "request p99",
		"broker p99 (bucket)", "tail episodes", "cpu wait", "io wait", "CPU-s/GiB b+c")
	r10 := func(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }
	for _, r := range results {
		fmt.Printf("%5d %-8s %10d %8d %12.1f %10s %10s %10.1f %10s %10s %10s %11s %26s %14s %8s %7s %15s\n", r.round, r.target,
			r.partitions, r.records, r.produceMBs, r10(r.satP50), r10(r.satP99), r.pacedMBs, r10(r.p50), r10(r.p99), r10(r.p999),
			r10(r.requestP99), r.brokerProduce.formatQuantile(0.99), fmt.Sprintf("%d, %v", r.episodes, r.longestEpisode.Round(100*time.Microsecond)),
			r.cpuWait, r.ioWait, fmt.Sprintf("%.2f+%.2f", r.pacedCPU[0], r.pacedCPU[1]))
	}
	writePhaseTable(os.Stdout, results)
	writeReplicationSummary(os.Stdout, results, !pacedSet)
	fmt.Println("3 broker processes + client + embedded etcd on this machine; 1 KiB incompressible records, no compression;")
	fmt.Println("rf3-all = replication factor 3, acks=all (min.insync.replicas=1); rf1-one = replication factor 1, acks=1;")
	if floor {
		fmt.Println("kfake-all = the floor: kfake (its own process, 3 brokers in it) answering Produce at once and keeping nothing")
		fmt.Println("(samsa-kfake -discard), the same client and topic (RF 3, acks=all), paced at the round's rf3-all rate (-floor);")
	}
	fmt.Printf("paced = producing for %s at half the saturated throughput, a burst every 1 ms, no linger; latency = Produce call\n", pacedFor)
	fmt.Println("to acknowledgement (client);")
	fmt.Print("the paced run starts once the saturated run's writes reached the disk (sync(2):")
	for _, r := range results {
		fmt.Printf(" %d/%s %v", r.round, r.target, r.syncTook.Round(time.Millisecond))
	}
	fmt.Printf("); the client runs at GOGC=%d, the brokers at their default;\n", clientGOGC)
	fmt.Printf("%d produce request(s) in flight per broker (-inflight);\n", inflight)
	fmt.Println("request p99 = the paced run's Produce requests, written to answer read (the client's kgo BrokerE2E); a record's")
	fmt.Println("latency less its request's is its wait in the client for the request before (one in flight per broker);")
	fmt.Println("broker p99 = the brokers' samsa_request_duration_seconds{api=\"Produce\"} over the paced run (frame read to")
	fmt.Println("response queued), interpolated within its histogram bucket (bounds a factor of sqrt 2 apart);")
	fmt.Println("phases = the brokers' samsa_request_phase_seconds{api=\"Produce\"} over the paced run (Kafka's RequestMetrics):")
	fmt.Println("request_queue, frame read to handling; local, the handling (the leader's append); remote, the acks=-1 wait")
	fmt.Println("(the followers fetching the records and fetching again, the high watermark passing them); response_queue,")
	fmt.Println("response ready to its write; response_send, the write; total, frame read to response written;")
	fmt.Println("tail episodes = the paced records at or above its p99, grouped by when they were produced (ticks at most 2 ms")
	fmt.Println("apart are one episode): how many, and the longest, from its first record's Produce call to its last one's")
	fmt.Println("acknowledgement; few long episodes are stalls in which everything waited, many short ones queueing;")
	fmt.Println("cpu wait, io wait = the share of the paced run's wall time in which some task of the machine was runnable")
	fmt.Println("but waiting for a CPU, or waiting for I/O (/proc/pressure, \"some\");")
	fmt.Println("CPU-s/GiB b+c = the paced run's CPU-seconds (utime+stime, /proc/<pid>/stat) per GiB the client produced: the three")
	fmt.Println("brokers' together + the client process's (which holds the embedded etcd).")
	fmt.Printf("end: %s\n", uptimeLine())
	return nil
}

// replicationRound measures each configuration once on a fresh cluster,
// then, if floorBin is set and rf3-all ran, kfake-all: the same paced run
// at rf3-all's rate against kfake (floorBin, its own process, three brokers
// in it, the cluster stopped by then) answering Produce at once and keeping
// nothing (samsa-kfake -discard): its latency is what the machine and the
// client cost any server before a byte is written or replicated. (Keeping
// the records, kfake stalled for 150-250 ms three times a run.)
func replicationRound(partitions, records, size int, floorBin string) ([]result, error) {
	results, err := samsaRound(partitions, records, size)
	if err != nil || floorBin == "" {
		return results, err
	}
	i := slices.IndexFunc(results, func(r result) bool { return r.target == "rf3-all" })
	if i < 0 {
		return results, nil
	}
	srv, err := startKfake(floorBin, "-brokers", "3", "-discard")
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	r, err := runWith(runParams{target: "kfake-all", addrs: []string{srv.addr}, partitions: partitions, records: records,
		size: size, rf: 3, acks: kgo.AllISRAcks(), pacedAt: results[i].pacedMBs,
		serverCPU: func() float64 { cpu, _ := procCPU(srv.pid()); return cpu }})
	if err != nil {
		return nil, fmt.Errorf("kfake-all: %w", err)
	}
	return append(results, r), nil
}

// samsaRound measures the Samsa configurations on a fresh cluster.
func samsaRound(partitions, records, size int) ([]result, error) {
	c, err := startBenchCluster()
	if err != nil {
		return nil, err
	}
	defer c.stop()
	var results []result
	for _, m := range []struct {
		name string
		rf   int16
		acks kgo.Acks
	}{{"rf3-all", 3, kgo.AllISRAcks()}, {"rf1-one", 1, kgo.LeaderAck()}} {
		if onlyConfig != "" && onlyConfig != m.name {
			continue
		}
		r, err := runWith(runParams{target: m.name, addrs: c.addrs, partitions: partitions, records: records, size: size,
			rf: m.rf, acks: m.acks, pacedHalf: !pacedSet, metrics: c.metrics, serverCPU: func() float64 { return clusterCPU(c) }})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.name, err)
		}
		results = append(results, r)
	}
	return results, nil
}

// writePhaseTable prints, for each round and configuration, the p50 and
// p99 of each phase of the brokers' Produce requests in the paced run.
func writePhaseTable(w io.Writer, results []result) {
	fmt.Fprintf(w, "broker Produce phases, p50 / p99:\n%5s %-8s", "round", "config")
	for _, p := range producePhases {
		fmt.Fprintf(w, " %20s", p)
	}
	fmt.Fprintln(w)
	for _, r := range results {
		if len(r.brokerPhases) == 0 { // kfake-all: no broker metrics
			continue
		}
		fmt.Fprintf(w, "%5d %-8s", r.round, r.target)
		for _, p := range producePhases {
			h := r.brokerPhases[p]
			q := func(q float64) string {
				if _, _, est, ok := h.quantile(q); ok {
					return seconds(est).Round(10 * time.Microsecond).String()
				}
				return "-"
			}
			fmt.Fprintf(w, " %20s", q(0.5)+" / "+q(0.99))
		}
		fmt.Fprintln(w)
	}
}

// writeReplicationSummary prints each configuration's medians over its
// rounds and, when the paced runs were at half the saturated rate
// (halfLoad), RF 3 acks=all's paced p99 against rf3P99Target.
func writeReplicationSummary(w io.Writer, results []result, halfLoad bool) {
	for _, config := range []string{"rf3-all", "rf1-one", "kfake-all"} {
		var paced, p99, p999, req, broker []float64
		for _, r := range results {
			if r.target == config {
				paced = append(paced, r.pacedMBs)
				p99, p999 = append(p99, float64(r.p99)), append(p999, float64(r.p999))
				req = append(req, float64(r.requestP99))
				if _, _, est, ok := r.brokerProduce.quantile(0.99); ok {
					broker = append(broker, float64(seconds(est)))
				}
			}
		}
		if len(p99) == 0 {
			continue
		}
		ms := func(ns []float64) string {
			if len(ns) == 0 {
				return "-"
			}
			return time.Duration(median(ns)).Round(10 * time.Microsecond).String()
		}
		fmt.Fprintf(w, "%s, medians of %d rounds: paced %.1f MB/s, p99 %s, p99.9 %s, request p99 %s, broker p99 %s", config,
			len(p99), median(paced), ms(p99), ms(p999), ms(req), ms(broker))
		if config == "rf3-all" && halfLoad {
			fmt.Fprintf(w, "  target p99 <= %v at half load  %s", rf3P99Target, passMiss(median(p99) <= float64(rf3P99Target)))
		}
		fmt.Fprintln(w)
	}
}
