package main

// The default benchmark (issue 22): Samsa against franz-go's kfake, each
// server a process of its own (servers.go), driven by the same client
// settings from this process. Runs alternate samsa, kfake, samsa, kfake, …
// with a fresh server each run; each run produces -mb of incompressible
// records as fast as the client sends them, then consumes them back, and
// reads the server's CPU time from /proc/<pid>/stat around the two. The
// summary gives medians, samsa/kfake ratios and the targets.

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// fairRun is one run against one server.
type fairRun struct {
	round                  int
	target                 string // "samsa" or "kfake"
	partitions             int
	produceMBs, consumeMBs float64
	serverCPU, clientCPU   float64 // CPU-seconds during produce + consume
	bytesMoved             float64 // produced + consumed
}

func (r fairRun) gbMoved() float64        { return r.bytesMoved / (1 << 30) }
func (r fairRun) serverCPUPerGB() float64 { return r.serverCPU / r.gbMoved() }
func (r fairRun) clientCPUPerGB() float64 { return r.clientCPU / r.gbMoved() }

// clientGOGC is the client's GOGC during the fair benchmark and the
// replication benchmark (cluster.go: it shares the cores with the three
// brokers, and every CPU-second it spends is one their latency waits on). Its live heap
// is small (records in flight point into one shared pool of values) while
// it allocates a request buffer per produce and a fetch buffer per fetch:
// at GOGC=100 it collected so often that a third of its CPU went to the
// collector and to faulting freed pages back in, and the client, not the
// server, set both servers' produce rate (samsa/kfake 1.21x). The servers
// run with their defaults.
var clientGOGC = 400

// fairTargets are the targets for this machine.
var fairTargets = struct{ produceRatio, consumeRatio, samsaCPUPerGB float64 }{1.5, 2, 1.5}

// fairBench runs rounds × (samsa, kfake) for each partition count.
func fairBench(w io.Writer, counts []int, mb, size, rounds int, kfakeBin string) error {
	kfakeBin, cleanup, err := kfakeBinary(kfakeBin)
	if err != nil {
		return err
	}
	defer cleanup()
	defer debug.SetGCPercent(debug.SetGCPercent(clientGOGC))
	fmt.Fprintf(w, "start: %s\n", uptimeLine())
	values := benchValues(size)
	records := mb << 20 / size
	var runs []fairRun
	fmt.Fprintln(os.Stderr, fairRunHeader)
	for _, n := range counts {
		for round := 1; round <= rounds; round++ {
			for _, target := range []string{"samsa", "kfake"} {
				r, err := fairOne(target, kfakeBin, round, n, records, values)
				if err != nil {
					return fmt.Errorf("%s round %d, %d partitions: %w", target, round, n, err)
				}
				fmt.Fprintf(os.Stderr, "%s\n", formatFairRun(r))
				runs = append(runs, r)
			}
		}
	}
	fmt.Fprintln(w)
	writeFairRuns(w, runs)
	fmt.Fprintln(w)
	for _, n := range counts {
		writeFairSummary(w, n, runs)
	}
	fmt.Fprintf(w, "\n%d MiB a run of %d-byte incompressible records, no compression, acks=1, 1 broker; GB = GiB moved (produced + consumed);\n", mb, size)
	fmt.Fprintln(w, "CPU = the process's utime+stime from /proc/<pid>/stat over produce and consume. Each server is a fresh process a run")
	fmt.Fprintln(w, "(samsa: -broker on its embedded store, writing segments without fsync; kfake: cmd/samsa-kfake, in memory);")
	fmt.Fprintf(w, "the client is this process, with the same settings for both (GOGC=%d, records not timed); all share this machine's cores.\n", clientGOGC)
	fmt.Fprintf(w, "end: %s\n", uptimeLine())
	return nil
}

// fairOne starts target, measures one run, and stops it.
func fairOne(target, kfakeBin string, round, partitions, records int, values [][]byte) (fairRun, error) {
	var srv *serverProc
	var err error
	if target == "kfake" {
		srv, err = startKfake(kfakeBin)
	} else {
		prof := ""
		if profileDir != "" {
			prof = filepath.Join(profileDir, fmt.Sprintf("samsa-%d-%d.cpu", partitions, round))
		}
		srv, err = startSamsa(prof)
	}
	if err != nil {
		return fairRun{}, err
	}
	defer srv.stop()
	return fairMeasure(srv, target, round, partitions, records, values)
}

func fairMeasure(srv *serverProc, target string, round, partitions, records int, values [][]byte) (fairRun, error) {
	r := fairRun{round: round, target: target, partitions: partitions}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	topic := fmt.Sprintf("fair-%d", partitions)
	cl, err := newProducer([]string{srv.addr}, topic, kgo.LeaderAck())
	if err != nil {
		return r, err
	}
	defer cl.Close()
	if cr, err := kadm.NewClient(cl).CreateTopic(ctx, int32(partitions), 1, nil, topic); err != nil || cr.Err != nil {
		return r, fmt.Errorf("create topic: %v %v", err, cr.Err)
	}
	s0, err := procCPU(srv.pid())
	if err != nil {
		return r, err
	}
	c0, _ := procCPU(0)
	_, elapsed, err := produceAll(ctx, cl, records, values, false)
	if err != nil {
		return r, err
	}
	bytes := float64(records * len(values[0]))
	r.produceMBs = bytes / (1 << 20) / elapsed.Seconds()
	if elapsed, err = consumeAll(ctx, []string{srv.addr}, topic, partitions, records); err != nil {
		return r, err
	}
	r.consumeMBs = bytes / (1 << 20) / elapsed.Seconds()
	s1, err := procCPU(srv.pid())
	if err != nil {
		return r, err
	}
	c1, _ := procCPU(0)
	r.serverCPU, r.clientCPU, r.bytesMoved = s1-s0, c1-c0, 2*bytes
	return r, nil
}

var fairRunHeader = fmt.Sprintf("%5s %-6s %10s %12s %12s %12s %12s %16s %16s", "round", "target", "partitions",
	"produce MB/s", "consume MB/s", "server CPU-s", "client CPU-s", "server CPU-s/GB", "client CPU-s/GB")

func formatFairRun(r fairRun) string {
	return fmt.Sprintf("%5d %-6s %10d %12.1f %12.1f %12.2f %12.2f %16.2f %16.2f", r.round, r.target, r.partitions,
		r.produceMBs, r.consumeMBs, r.serverCPU, r.clientCPU, r.serverCPUPerGB(), r.clientCPUPerGB())
}

func writeFairRuns(w io.Writer, runs []fairRun) {
	fmt.Fprintln(w, fairRunHeader)
	for _, r := range runs {
		fmt.Fprintln(w, formatFairRun(r))
	}
}

// writeFairSummary prints the medians of each target's runs with n
// partitions, the samsa/kfake ratios, and the targets met or missed.
func writeFairSummary(w io.Writer, n int, runs []fairRun) {
	type med struct{ produce, consume, cpu float64 }
	meds := map[string]med{}
	for _, target := range []string{"samsa", "kfake"} {
		var p, c, cpu []float64
		for _, r := range runs {
			if r.target == target && r.partitions == n {
				p, c, cpu = append(p, r.produceMBs), append(c, r.consumeMBs), append(cpu, r.serverCPUPerGB())
			}
		}
		meds[target] = med{median(p), median(c), median(cpu)}
	}
	s, k := meds["samsa"], meds["kfake"]
	fmt.Fprintf(w, "partitions=%d, medians of %d runs each:\n", n, countRuns(runs, "samsa", n))
	fmt.Fprintf(w, "  %-24s %10s %10s %10s\n", "", "samsa", "kfake", "samsa/kfake")
	fmt.Fprintf(w, "  %-24s %10.1f %10.1f %10.2fx  target >= %.1fx  %s\n", "produce MB/s", s.produce, k.produce,
		s.produce/k.produce, fairTargets.produceRatio, passMiss(s.produce/k.produce >= fairTargets.produceRatio))
	fmt.Fprintf(w, "  %-24s %10.1f %10.1f %10.2fx  target >= %.1fx  %s\n", "consume MB/s", s.consume, k.consume,
		s.consume/k.consume, fairTargets.consumeRatio, passMiss(s.consume/k.consume >= fairTargets.consumeRatio))
	fmt.Fprintf(w, "  %-24s %10.2f %10.2f %10.2fx  target samsa <= %.1f  %s\n", "server CPU-s/GB moved", s.cpu, k.cpu,
		s.cpu/k.cpu, fairTargets.samsaCPUPerGB, passMiss(s.cpu <= fairTargets.samsaCPUPerGB))
}

func countRuns(runs []fairRun, target string, n int) int {
	c := 0
	for _, r := range runs {
		if r.target == target && r.partitions == n {
			c++
		}
	}
	return c
}

func passMiss(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}

// median of xs (the mean of the middle two for an even count); NaN for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
