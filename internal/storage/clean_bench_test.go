package storage

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/samsa-kafka/samsa/internal/record/recordtest"
)

// BenchmarkCleaner (issue 17): one cleaner thread over a dirty section of
// SAMSA_CLEAN_BENCH_MB MiB (default 256; the figure is 1024) of
// 1 KiB records in uncompressed batches of 16, keys drawn from 10% as many
// distinct keys as records. It reports the input cleaned in MB/s and the
// process's peak RSS (VmHWM) beside log.cleaner.dedupe.buffer.size
// (default 128 MiB). Run with -benchtime=1x.
//
// Measured (2 shared cores, one thread, warm map), 1024 MiB: 494 MB/s
// (627 MB per CPU second), 1012 MiB read twice, 102 MiB written, 1048576
// records to 104849, peak RSS 156 MiB with the 128 MiB dedupe buffer; a
// cold first pass (map allocated and faulted in while timed): 290 MB/s,
// 391 MB per CPU second, peak RSS 151 MiB.
func BenchmarkCleaner(b *testing.B) { benchCleaner(b, false) }

// BenchmarkCleanerTxn (issue 19): the same records written by 4
// transactional producers, 8 batches a transaction, one transaction in 10
// aborted, each ended by its marker: the pass also follows the
// transactions (the map skips aborted data, the aborted data goes).
//
// Measured (2 shared cores, warm map), 256 MiB, one run each:
// BenchmarkCleaner 329 MB/s (602 MB per CPU second), BenchmarkCleanerTxn
// 428 MB/s (712 MB per CPU second), records 264192 -> 28260 (the 2048
// markers kept: data of each transaction is left); aborted batches are
// neither mapped nor decoded, which more than pays for following the
// transactions.
func BenchmarkCleanerTxn(b *testing.B) { benchCleaner(b, true) }

func benchCleaner(b *testing.B, txn bool) {
	mb := int64(256)
	if v, err := strconv.ParseInt(os.Getenv("SAMSA_CLEAN_BENCH_MB"), 10, 64); err == nil && v > 0 {
		mb = v
	}
	const recSize, perBatch = 1024, 16
	nRecs := mb << 20 / recSize
	keys := max(nRecs/10, 1)
	dedupe := int64(128 << 20)
	for range b.N {
		b.StopTimer()
		dir := b.TempDir()
		m, err := OpenManager(ManagerConfig{Dirs: []string{dir}, CleanerDedupeBufferSize: dedupe, Now: func() time.Time { return t0 }})
		if err != nil {
			b.Fatal(err)
		}
		cfg := compactConfig()
		cfg.SegmentBytes, cfg.IndexIntervalBytes, cfg.SegmentMs = 256<<20, 4096, 1<<40
		l, _ := m.Create(tp0, topic, cfg)
		rng := rand.New(rand.NewPCG(1, 2))
		value := []byte(strings.Repeat("v", recSize-40))
		var input int64
		seqs := map[int64]int32{}
		for i := int64(0); i < nRecs; i += perBatch {
			recs := make([]recordtest.Rec, perBatch)
			for j := range recs {
				recs[j] = recordtest.Rec{Key: fmt.Appendf(nil, "key-%012d", rng.Int64N(keys)), Value: value}
			}
			batchBytes := recordtest.Batch(t0.UnixMilli(), recordtest.None, recs...)
			n := i / perBatch // the batch's number; a transaction is 8 of them
			pid := n / 8 % 4
			if txn {
				batchBytes = withProducer(batchBytes, 0x10, pid, 0, seqs[pid])
				seqs[pid] += perBatch
			}
			h, err := record.Validate(batchBytes, 1<<30)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := l.Append(batchBytes, h, t0); err != nil {
				b.Fatal(err)
			}
			input += int64(len(batchBytes))
			if txn && n%8 == 7 {
				mk := record.Marker{ProducerID: pid, CoordinatorEpoch: 1, Commit: n/8%10 != 9}
				if _, err := l.AppendTxnMarker(mk, t0, 0); err != nil {
					b.Fatal(err)
				}
			}
		}
		// A roll: everything written is in non-active segments.
		roll := cfg
		roll.SegmentMs = 1
		l.SetConfig(roll)
		appendKeyed(b, l, t0.Add(time.Second), model{}, recordtest.None, [2][]byte{[]byte("active"), []byte("x")})
		commitAll(l)
		// As a cleaner thread past its first pass: map made once, its pages
		// touched (SAMSA_CLEAN_BENCH_COLD=1: a first pass, map made and
		// touched while timed); the setup's garbage collected.
		cold := os.Getenv("SAMSA_CLEAN_BENCH_COLD") == "1"
		if !cold {
			m.testCleaner = m.newCleaner(m.CleanerConfig(), nil)
			clear(m.testCleaner.m.slots)
		}
		runtime.GC()
		b.StartTimer()
		start, cpu0 := time.Now(), cpuTime()
		if _, err := m.CleanOnce(t0); err != nil {
			b.Fatal(err)
		}
		elapsed, cpu := time.Since(start), cpuTime()-cpu0
		b.StopTimer()
		// The machine is shared: MB/s per CPU second is the steadier figure.
		b.ReportMetric(float64(input)/1e6/cpu.Seconds(), "MB/cpu-s")
		st := m.testCleaner.stats
		b.ReportMetric(float64(input)/1e6/elapsed.Seconds(), "MB/s")
		b.ReportMetric(float64(peakRSS())/(1<<20), "peakRSS-MiB")
		b.ReportMetric(float64(dedupe)/(1<<20), "dedupe-MiB")
		b.Logf("dirty input %d MiB (%d read), written %d MiB, records %d -> %d, %v, peak RSS %d MiB, dedupe buffer %d MiB",
			input>>20, st.bytesRead>>20, st.bytesWritten>>20, st.recordsRead, st.recordsKept, elapsed, peakRSS()>>20, dedupe>>20)
		m.Close()
	}
}

// cpuTime is the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS is the process's VmHWM in bytes, 0 if unknown.
func peakRSS() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
