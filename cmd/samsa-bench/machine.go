package main

// What the machine itself does to a latency figure (-replication), measured
// before the rounds so that a run's p99 can be read against it:
//
//   - vCPU stalls: a thread spinning on each core, reading the clock, sees
//     every moment it did not run. On an idle machine those are the
//     hypervisor's (and the kernel's own) preemptions; a stall of some
//     milliseconds is one that no broker can hide from a 3 ms p99.
//   - the price of a new page-cache page: a new file written, then the same
//     bytes written again in place. The first write takes a page for each
//     4 KiB; the second only copies. On a virtual machine whose freed memory
//     goes back to the host (virtio-balloon free page reporting) each new
//     page is also faulted in by the host, which the ratio shows: every
//     segment append of a broker writes new pages.

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"time"
)

// stallThreshold is the smallest gap in a spinning thread's clock counted as
// a stall: a clock read takes tens of nanoseconds.
const stallThreshold = 100 * time.Microsecond

// spinGaps spins for d on a thread of its own and returns the gaps of at
// least stallThreshold between consecutive clock readings.
func spinGaps(d time.Duration) []time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var gaps []time.Duration
	last := time.Now()
	end := last.Add(d)
	for last.Before(end) {
		now := time.Now()
		if g := now.Sub(last); g >= stallThreshold {
			gaps = append(gaps, g)
		}
		last = now
	}
	return gaps
}

// stallSummary is one spinning thread's gaps, summed up.
type stallSummary struct {
	n       int
	total   time.Duration
	longest time.Duration
	over1ms int // gaps of 1 ms or more
}

func summarizeGaps(gaps []time.Duration) stallSummary {
	s := stallSummary{n: len(gaps)}
	if len(gaps) == 0 {
		return s
	}
	for _, g := range gaps {
		s.total += g
		if g >= time.Millisecond {
			s.over1ms++
		}
	}
	s.longest = slices.Max(gaps)
	return s
}

func (s stallSummary) String() string {
	if s.n == 0 {
		return "none"
	}
	r := func(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }
	return fmt.Sprintf("%d (%d of 1 ms or more), %v in all, the longest %v", s.n, s.over1ms, r(s.total), r(s.longest))
}

// pageCacheWrites writes size bytes to a new file in dir in 64 KiB writes,
// then the same bytes again in place, and returns both rates in GB/s
// (10^9 bytes). The file is removed.
func pageCacheWrites(dir string, size int) (fresh, again float64, err error) {
	f, err := os.CreateTemp(dir, "samsa-bench-pagecache")
	if err != nil {
		return 0, 0, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	buf := make([]byte, 64<<10)
	for i := range buf {
		buf[i] = byte(i)
	}
	pass := func() (float64, error) {
		start := time.Now()
		for off := 0; off < size; off += len(buf) {
			if _, err := f.WriteAt(buf, int64(off)); err != nil {
				return 0, err
			}
		}
		return float64(size) / 1e9 / time.Since(start).Seconds(), nil
	}
	if fresh, err = pass(); err != nil {
		return 0, 0, err
	}
	if again, err = pass(); err != nil {
		return 0, 0, err
	}
	return fresh, again, nil
}

// machineCheck prints the machine's vCPU stalls (a spinning thread per core
// for spin) and its page-cache write rates (size bytes, in the directory
// the brokers' logs go to).
func machineCheck(spin time.Duration, size int) {
	cores := runtime.NumCPU()
	sums := make([]stallSummary, cores)
	var wg sync.WaitGroup
	for i := range cores {
		wg.Go(func() { sums[i] = summarizeGaps(spinGaps(spin)) })
	}
	wg.Wait()
	fmt.Printf("machine, idle: a thread spinning on each of its %d cores for %v saw gaps of %v or more (how many, their sum, the longest):",
		cores, spin, stallThreshold)
	for i, s := range sums {
		fmt.Printf(" core %d: %v;", i, s)
	}
	fmt.Println()
	fresh, again, err := pageCacheWrites(os.TempDir(), size)
	if err != nil {
		fmt.Printf("machine, page cache: %v\n", err)
		return
	}
	fmt.Printf("machine, page cache: a new %d MiB file written at %.1f GB/s, the same bytes again in place at %.1f GB/s (%.1fx)\n",
		size>>20, fresh, again, again/fresh)
}
