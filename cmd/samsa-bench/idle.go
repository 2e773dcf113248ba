package main

// The idle-memory benchmark (-idle, issue 22 item 6): what a broker holding
// many idle partitions, and many idle connections, costs in memory,
// goroutines and open files. One broker process (-broker on its own
// embedded store, as `samsa server` runs by default, serving its metrics),
// read at four phases:
//
//	started  no partitions
//	created  -idle-partitions partitions (topics of -idle-topic-partitions, RF 1), all led
//	written  one small record produced to every partition, the producer closed
//	conns    plus -conns idle client connections, each having done ApiVersions
//
// Before each reading the broker settles (-idle-settle), then runs a GC
// and returns freed memory to the OS (/debug/freeosmemory), so RSS is what
// it holds, not garbage it has not collected yet. RSS and open fds come from
// /proc/<pid>, goroutines and heap in use from its /metrics (the Go
// collector); with -profile, the broker's heap profile at each phase goes
// to broker-heap-<phase>.pb.gz there. Per-partition figures are the phase's delta over the one
// before it divided by the partitions; per-connection ones, conns' delta
// over written divided by the connections. Heap is the figure that holds
// after the broker has run a while: a large fresh allocation (a 64 KiB
// connection buffer) comes zeroed from the OS and is not resident until
// written, whereas a reused one is.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/loopback"
	"github.com/samsa-kafka/samsa/internal/wire"
)

// idleParams are the -idle flags.
type idleParams struct {
	partitions      int           // in all
	topicPartitions int           // per topic
	conns           int           // idle client connections of the last phase
	settle          time.Duration // wait before each reading
	timeout         time.Duration // the whole run
}

// idleSample is one phase's reading of the broker process.
type idleSample struct {
	phase      string
	rss        int64 // bytes, VmRSS
	peak       int64 // bytes, VmHWM: the largest RSS so far (garbage not yet collected included)
	heap       int64 // bytes, go_memstats_heap_inuse_bytes
	fds        int
	goroutines int
}

// idleBench runs the phases and prints the table.
func idleBench(w io.Writer, p idleParams) error {
	if p.partitions < 1 || p.topicPartitions < 1 || p.conns < 0 {
		return fmt.Errorf("idle: -idle-partitions and -idle-topic-partitions must be positive, -conns not negative")
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	defer cancel()
	fmt.Fprintf(w, "start: %s\n", uptimeLine())
	mport, err := loopback.FreePort()
	if err != nil {
		return err
	}
	srv, err := startSamsa("", "-metrics-port", strconv.Itoa(mport))
	if err != nil {
		return err
	}
	defer srv.stop()
	mbase := fmt.Sprintf("http://127.0.0.1:%d", mport)
	var samples []idleSample
	read := func(phase string) error {
		logf("%s: settling %v", phase, p.settle)
		select {
		case <-time.After(p.settle):
		case <-ctx.Done():
			return ctx.Err()
		}
		s, err := readIdleSample(ctx, srv.pid(), mbase)
		if err != nil {
			return fmt.Errorf("%s: %w", phase, err)
		}
		s.phase = phase
		samples = append(samples, s)
		if profileDir != "" {
			if err := saveHeapProfile(ctx, mbase, filepath.Join(profileDir, "broker-heap-"+phase+".pb.gz")); err != nil {
				return fmt.Errorf("%s: %w", phase, err)
			}
		}
		logf("%s: RSS %.1f MiB, %d fds, %d goroutines", phase, float64(s.rss)/(1<<20), s.fds, s.goroutines)
		return nil
	}
	if err := read("started"); err != nil {
		return err
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.addr), kgo.DisableIdempotentWrite(), kgo.RequiredAcks(kgo.LeaderAck()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0), kgo.RequestTimeoutOverhead(time.Minute))
	if err != nil {
		return err
	}
	defer cl.Close()
	topics := idleTopics(p.partitions, p.topicPartitions)
	start := time.Now()
	if err := createIdleTopics(ctx, cl, topics); err != nil {
		return err
	}
	logf("created %d partitions in %d topics, all led, in %v", p.partitions, len(topics), time.Since(start).Round(time.Millisecond))
	if err := read("created"); err != nil {
		return err
	}

	start = time.Now()
	if err := produceOneEach(ctx, cl, topics); err != nil {
		return err
	}
	cl.Close()
	logf("wrote one record to each partition in %v", time.Since(start).Round(time.Millisecond))
	if err := read("written"); err != nil {
		return err
	}

	conns, err := openIdleConns(ctx, srv.addr, p.conns)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	if err != nil {
		return err
	}
	if err := read("conns"); err != nil {
		return err
	}

	fmt.Fprintln(w)
	writeIdleTable(w, samples, p.partitions, p.conns)
	fmt.Fprintf(w, "\n1 broker process (embedded etcd in it, as samsa server runs by default), %d partitions in topics of %d, RF 1;\n",
		p.partitions, p.topicPartitions)
	fmt.Fprintln(w, "written = one ~100-byte record (plain producer, acks=1) to every partition, then the producer closed;")
	fmt.Fprintf(w, "conns = %d idle TCP connections, each having done ApiVersions v3. Each reading after %v idle, a GC and\n", p.conns, p.settle)
	fmt.Fprintln(w, "debug.FreeOSMemory; RSS = VmRSS of /proc/<pid>/status (embedded etcd's included), peak = its VmHWM (the")
	fmt.Fprintln(w, "largest RSS so far, uncollected garbage included), fds = /proc/<pid>/fd,")
	fmt.Fprintln(w, "goroutines and heap = the broker's go_goroutines and go_memstats_heap_inuse_bytes. Δ = over the phase before.")
	fmt.Fprintf(w, "end: %s\n", uptimeLine())
	return nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05 ")+format+"\n", args...)
}

// idleTopics splits partitions into topics of at most per partitions:
// name → partition count.
func idleTopics(partitions, per int) map[string]int32 {
	topics := map[string]int32{}
	for i := 0; partitions > 0; i++ {
		n := min(per, partitions)
		topics[fmt.Sprintf("idle-%04d", i)] = int32(n)
		partitions -= n
	}
	return topics
}

// createIdleTopics creates the topics, ten to a request, and waits until
// every partition has a leader.
func createIdleTopics(ctx context.Context, cl *kgo.Client, topics map[string]int32) error {
	adm := kadm.NewClient(cl)
	var names []string
	for t := range topics {
		names = append(names, t)
	}
	for i := 0; i < len(names); i += 10 {
		batch := names[i:min(i+10, len(names))]
		req := kmsg.NewPtrCreateTopicsRequest()
		req.TimeoutMillis = 60_000
		for _, t := range batch {
			rt := kmsg.NewCreateTopicsRequestTopic()
			rt.Topic, rt.NumPartitions, rt.ReplicationFactor = t, topics[t], 1
			req.Topics = append(req.Topics, rt)
		}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return fmt.Errorf("create topics: %w", err)
		}
		for _, t := range resp.Topics {
			if t.ErrorCode != 0 && t.ErrorCode != 36 { // 36: TOPIC_ALREADY_EXISTS (a retried request)
				return fmt.Errorf("create topic %s: error code %d", t.Topic, t.ErrorCode)
			}
		}
	}
	for {
		m, err := adm.Metadata(ctx, names...)
		if err == nil && allLed(m, topics) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for leaders: %w (last metadata error: %v)", ctx.Err(), err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func allLed(m kadm.Metadata, topics map[string]int32) bool {
	for t, n := range topics {
		td, ok := m.Topics[t]
		if !ok || td.Err != nil || len(td.Partitions) != int(n) {
			return false
		}
		for _, p := range td.Partitions {
			if p.Err != nil || p.Leader < 0 {
				return false
			}
		}
	}
	return true
}

// produceOneEach writes one small record to every partition.
func produceOneEach(ctx context.Context, cl *kgo.Client, topics map[string]int32) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	value := bytes.Repeat([]byte("i"), 100)
	for t, n := range topics {
		for p := range n {
			wg.Add(1)
			cl.Produce(ctx, &kgo.Record{Topic: t, Partition: p, Value: value}, func(_ *kgo.Record, err error) {
				if err != nil {
					mu.Lock()
					firstErr = cmpOr(firstErr, err)
					mu.Unlock()
				}
				wg.Done()
			})
		}
	}
	wg.Wait()
	if firstErr != nil {
		return fmt.Errorf("produce: %w", firstErr)
	}
	return nil
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// openIdleConns opens n connections to addr, each doing ApiVersions v3 as
// a client's first request, and leaves them open; on error it returns
// those opened so far.
func openIdleConns(ctx context.Context, addr string, n int) ([]*wire.Conn, error) {
	conns := make([]*wire.Conn, 0, n)
	for i := range n {
		c, err := wire.Dial(ctx, addr, "samsa-bench-idle", 10*time.Second)
		if err != nil {
			return conns, fmt.Errorf("connection %d: %w", i, err)
		}
		conns = append(conns, c)
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = 3
		req.ClientSoftwareName, req.ClientSoftwareVersion = "samsa-bench", "1"
		resp := kmsg.NewPtrApiVersionsResponse()
		if err := c.RoundTrip(req, resp, 10*time.Second); err != nil {
			return conns, fmt.Errorf("connection %d: ApiVersions: %w", i, err)
		}
		if resp.ErrorCode != 0 {
			return conns, fmt.Errorf("connection %d: ApiVersions error code %d", i, resp.ErrorCode)
		}
	}
	return conns, nil
}

// readIdleSample forces a GC in the broker, then reads its RSS, open fds,
// goroutines and heap.
func readIdleSample(ctx context.Context, pid int, mbase string) (idleSample, error) {
	var s idleSample
	hc := http.Client{Timeout: 30 * time.Second}
	get := func(path string) ([]byte, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, mbase+path, nil)
		if err != nil {
			return nil, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("GET %s: %s", path, resp.Status)
		}
		return io.ReadAll(resp.Body)
	}
	if _, err := get("/debug/freeosmemory"); err != nil {
		return s, err
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, err
	}
	if s.rss, err = parseProcStatusBytes(status, "VmRSS"); err != nil {
		return s, err
	}
	if s.peak, err = parseProcStatusBytes(status, "VmHWM"); err != nil {
		return s, err
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return s, err
	}
	s.fds = len(fds)
	metrics, err := get("/metrics")
	if err != nil {
		return s, err
	}
	g, err := parseGauge(bytes.NewReader(metrics), "go_goroutines")
	if err != nil {
		return s, err
	}
	s.goroutines = int(g)
	h, err := parseGauge(bytes.NewReader(metrics), "go_memstats_heap_inuse_bytes")
	if err != nil {
		return s, err
	}
	s.heap = int64(h)
	return s, nil
}

// saveHeapProfile writes the broker's heap profile to path.
func saveHeapProfile(ctx context.Context, mbase, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, mbase+"/debug/pprof/heap", nil)
	if err != nil {
		return err
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("heap profile: %s", resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// parseProcStatusBytes returns field (e.g. VmRSS) of /proc/<pid>/status,
// given there in kB, in bytes.
func parseProcStatusBytes(b []byte, field string) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), field+":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("procstatus: %s: %q, want a number of kB", field, rest)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("procstatus: %s: %w", field, err)
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("procstatus: no %s", field)
}

// parseGauge returns the value of an unlabelled metric from the
// Prometheus text format.
func parseGauge(r io.Reader, metric string) (float64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == metric {
			v, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				return 0, fmt.Errorf("metrics: %s: %w", metric, err)
			}
			return v, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("metrics: no %s", metric)
}

// writeIdleTable prints the samples with each phase's delta over the one
// before: per partition, except for conns: per connection.
func writeIdleTable(w io.Writer, samples []idleSample, partitions, conns int) {
	fmt.Fprintf(w, "%-8s %8s %9s %9s %6s %10s  %-12s %10s %10s %10s\n", "phase", "RSS MiB", "peak MiB", "heap MiB", "fds", "goroutines",
		"Δ per", "ΔRSS B", "Δheap B", "Δgoroutines")
	for i, s := range samples {
		per, rss, heap, g := "-", "-", "-", "-"
		if i > 0 {
			d := deltaOf(samples[i-1], s)
			n := partitions
			per = "partition"
			if s.phase == "conns" {
				n, per = conns, "connection"
			}
			if n > 0 {
				rss = fmt.Sprintf("%.0f", float64(d.rss)/float64(n))
				heap = fmt.Sprintf("%.0f", float64(d.heap)/float64(n))
				g = fmt.Sprintf("%.3f", float64(d.goroutines)/float64(n))
			}
		}
		fmt.Fprintf(w, "%-8s %8.1f %9.1f %9.1f %6d %10d  %-12s %10s %10s %10s\n", s.phase, float64(s.rss)/(1<<20),
			float64(s.peak)/(1<<20), float64(s.heap)/(1<<20), s.fds, s.goroutines, per, rss, heap, g)
	}
}

// deltaOf is b - a, field by field.
func deltaOf(a, b idleSample) idleSample {
	return idleSample{phase: b.phase, rss: b.rss - a.rss, heap: b.heap - a.heap, fds: b.fds - a.fds, goroutines: b.goroutines - a.goroutines}
}
