// Command samsa-failover-bench measures controller failover time against
// the number of partitions in the store (issue 3's benchmark).
//
//	go run ./cmd/samsa-failover-bench -partitions 10000,100000,1000000 -rf 3 -brokers 3
//	go run ./cmd/samsa-failover-bench -store etcd,zookeeper -partitions 100000
//
// For each partition count and each store of -store it starts a fresh
// store — an embedded etcd, or a standalone ZooKeeper server (Debian's
// zookeeper package, a JVM process of its own, killed when the round ends
// or this process dies) — loads topics of -per-topic partitions
// (assignment plus one leader/ISR state per partition, every partition
// online) straight through the store API, in transactions within the
// store's limits (on ZooKeeper 64 operations and jute.maxbuffer), starts
// -brokers stand-in brokers — Kafka listeners that answer the controller's
// inter-broker requests (LeaderAndIsr, UpdateMetadata, StopReplica) with
// empty successes and host no logs — and two controller candidates (nodes 1
// and 2, sharing the stand-ins' sessions as a real broker's controller
// shares its broker session). Once one is controller and every stand-in has
// its UpdateMetadata (the cold start), it kills the active controller
// (stops its event loop and sender, as SIGKILL would), ends its session
// and measures from that session end until every live stand-in has the new controller's
// UpdateMetadata (epoch 2). With the shared session the old controller's
// broker dies too, so the failover includes electing new leaders for the
// partitions it led, as a real controller crash does; -shared-session=false
// gives the controllers sessions of their own (pure controller failover).
//
// With -mode crash it measures a broker failure instead (issue 6): the
// last stand-in (never a controller candidate) crashes, and the figure is
// from its session end until every live stand-in has UpdateMetadata naming
// a new leader for every partition it led.
//
// Everything runs in this process on loopback: etcd, stand-ins and
// controllers share the machine's cores (ZooKeeper runs beside it). The
// session timeout is the same on both stores; ZooKeeper's server (tickTime
// 500 ms) accepts 1 s to 60 s.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

type options struct {
	stores                         []string // etcd, zookeeper
	rf, brokers, perTopic, writers int
	sessionTimeout                 time.Duration
	settle, wait, loadTimeout      time.Duration
	sharedSession                  bool
	crash                          bool // -mode crash: a broker dies instead of the controller
	cpuProfile, memProfile         string
	multi                          bool // several counts: profile file per count
	etcdLog                        *slog.Logger
	stateChange                    *slog.Logger // the controllers' state-change log: Info on stderr, as samsa server's
}

func main() {
	var o options
	parts := flag.String("partitions", "10000,100000", "partition counts to run, comma-separated")
	stores := flag.String("store", "etcd", "stores to run each count on, comma-separated: etcd (embedded), zookeeper (a standalone server process)")
	flag.IntVar(&o.rf, "rf", 3, "replication factor")
	flag.IntVar(&o.brokers, "brokers", 3, "stand-in brokers (at least 2: nodes 1 and 2 are the controller candidates)")
	flag.IntVar(&o.perTopic, "per-topic", 1000, "partitions per topic")
	flag.IntVar(&o.writers, "writers", 8, "concurrent loaders")
	flag.DurationVar(&o.sessionTimeout, "session-timeout", 6*time.Second, "store session TTL (metadata.store.session.timeout.ms)")
	flag.DurationVar(&o.settle, "settle", 3*time.Second, "pause between the cold start and the failover (lets a standby warm up)")
	flag.DurationVar(&o.wait, "wait", 5*time.Minute, "bound on each wait for the controller")
	flag.DurationVar(&o.loadTimeout, "load-timeout", 30*time.Minute, "bound on loading the store")
	flag.BoolVar(&o.sharedSession, "shared-session", true, "controllers campaign with their stand-in's session (the old controller's broker dies with it)")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the failover phase here (suffixed .<store> when several stores run, .<partitions> when several counts)")
	flag.StringVar(&o.memProfile, "memprofile", "", "write the allocation profile at the start (<file>.base) and end (<file>) of the failover phase; compare with go tool pprof -base")
	verbose := flag.Bool("v", false, "log controller and store info")
	mode := flag.String("mode", "failover", "failover: the active controller dies; crash: a broker that is not a controller candidate dies")
	flag.Parse()
	o.crash = *mode == "crash"
	if *mode != "crash" && *mode != "failover" {
		fmt.Fprintf(os.Stderr, "samsa-failover-bench: -mode %q: want failover or crash\n", *mode)
		os.Exit(2)
	}

	counts, err := parseCounts(*parts)
	if err == nil {
		o.stores, err = parseStores(*stores)
	}
	if err == nil {
		err = o.check()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "samsa-failover-bench:", err)
		os.Exit(2)
	}
	o.multi = len(counts) > 1
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	o.etcdLog = slog.New(slog.DiscardHandler) // its shutdown is noisy
	// The state-change log costs what it costs samsa server, which writes
	// it at Info to stderr: it is part of the figure.
	o.stateChange = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})).With("component", "state-change")
	if *verbose {
		o.etcdLog = log
	}

	fmt.Printf("controller failover: rf=%d, %d brokers, %d partitions per topic, session timeout %v, shared session %v\n",
		o.rf, o.brokers, o.perTopic, o.sessionTimeout, o.sharedSession)
	if o.crash {
		fmt.Println("mode crash: the highest-numbered broker (not a controller candidate) dies: listener closed, then its store session closed (etcd: lease revoked; ZooKeeper: session closed)")
	} else {
		fmt.Println("failover: the active controller's loop and sender are stopped (as by SIGKILL), then its store session is closed (etcd: lease revoked; ZooKeeper: session closed)")
	}
	fmt.Println("brokers are stand-ins: they answer inter-broker requests (ApiVersions, LeaderAndIsr, UpdateMetadata, StopReplica) without hosting logs")
	var results []result
	for _, n := range counts {
		for _, st := range o.stores {
			fmt.Printf("%d partitions on %s:\n", n, st)
			res, err := runRound(o, st, n, log)
			if err != nil {
				fmt.Fprintf(os.Stderr, "samsa-failover-bench: %d partitions on %s: %v\n", n, st, err)
				os.Exit(1) // runRound stopped everything it started
			}
			results = append(results, res)
		}
	}
	printTable(results)
}

func (o options) check() error {
	switch {
	case o.brokers < 2:
		return fmt.Errorf("-brokers %d: need at least 2", o.brokers)
	case o.crash && o.brokers < 3:
		return fmt.Errorf("-mode crash: need at least 3 brokers (nodes 1 and 2 are the controller candidates)")
	case o.rf < 1 || o.rf > o.brokers:
		return fmt.Errorf("-rf %d: want 1..%d", o.rf, o.brokers)
	case o.perTopic < 1 || o.writers < 1:
		return fmt.Errorf("-per-topic and -writers must be positive")
	}
	return nil
}

func parseStores(s string) ([]string, error) {
	var stores []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f != "etcd" && f != "zookeeper" || slices.Contains(stores, f) {
			return nil, fmt.Errorf("bad -store %q: want etcd, zookeeper or both, comma-separated", s)
		}
		stores = append(stores, f)
	}
	return stores, nil
}

func parseCounts(s string) ([]int, error) {
	var counts []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad -partitions %q", s)
		}
		counts = append(counts, n)
	}
	return counts, nil
}

func printTable(rs []result) {
	fmt.Println()
	if len(rs) > 0 && rs[0].crashLed > 0 {
		w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(w, "store\tpartitions\ttopics\tled by the crashed broker\tall shown with new leaders\tµs/partition\t")
		for _, r := range rs {
			fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%v\t%.1f\t\n", r.store, r.partitions, r.topics, r.crashLed, ms(r.crash), float64(r.crash.Microseconds())/float64(r.crashLed))
		}
		w.Flush()
		fmt.Println("broker crash: its listener closed, then its store session ended (lease revoked / session closed); measured from the session end until")
		fmt.Println("every live stand-in got UpdateMetadata showing a new leader for every partition the crashed broker led.")
		return
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "store\tpartitions\ttopics\tstore keys\tload\tcold start\tnew controller active\tfirst UpdateMetadata everywhere\tall partitions everywhere\t")
	for _, r := range rs {
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%v\t%v\t%v\t%v\t%v\t\n", r.store, r.partitions, r.topics, r.keys, ms(r.load), ms(r.cold), ms(r.active), ms(r.firstUM), ms(r.failover))
	}
	w.Flush()
	fmt.Println("cold start: first Startup → every partition's metadata (epoch 1) at every stand-in.")
	fmt.Println("failover, from the old controller's session end: 'active' = the standby holds /controller and has bumped the epoch from its warm")
	fmt.Println("context; 'first UpdateMetadata' = its first UpdateMetadata (live brokers, new controller: Kafka's failover step) at every live")
	fmt.Println("stand-in; 'all partitions' = an UpdateMetadata carrying every partition's leader/ISR at every live stand-in (arrival = last byte read).")
}

func ms(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
