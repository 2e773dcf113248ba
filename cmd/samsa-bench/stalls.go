package main

// Where a paced run's tail comes from (-replication): whether the records
// above the p99 are spread over the run, as a busy server's queueing
// would spread them, or gathered in a few stalls in which everything
// produced waited; and how long the machine's tasks waited for a CPU
// (Linux pressure stall information, /proc/pressure) while it ran.

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// tailEpisodes groups the records whose latency is at least threshold by
// when they were produced (sent, an offset from the run's start, one per
// latency): records of the same tick, or of ticks at most gap apart, are
// one episode. It returns the number of episodes and the longest one's
// span, from its first record's production to its last record's
// acknowledgement.
func tailEpisodes(sent, lat []time.Duration, threshold, gap time.Duration) (n int, longest time.Duration) {
	type rec struct{ at, done time.Duration }
	var tail []rec
	for i, d := range lat {
		if d >= threshold {
			tail = append(tail, rec{sent[i], sent[i] + d})
		}
	}
	if len(tail) == 0 {
		return 0, 0
	}
	// sent is in production order, so tail is too.
	start, last, done := tail[0].at, tail[0].at, tail[0].done
	end := func() {
		n++
		longest = max(longest, done-start)
	}
	for _, r := range tail[1:] {
		if r.at-last > gap {
			end()
			start, done = r.at, r.done
		}
		last, done = r.at, max(done, r.done)
	}
	end()
	return n, longest
}

// psiSome is the total time (µs) in which at least one task waited for
// resource ("cpu", "io", "memory"), from /proc/pressure; ok is false where
// the kernel does not account it.
func psiSome(resource string) (us uint64, ok bool) {
	b, err := os.ReadFile("/proc/pressure/" + resource)
	if err != nil {
		return 0, false
	}
	us, err = parsePSISome(string(b))
	return us, err == nil
}

// parsePSISome reads the total= of the "some" line of a /proc/pressure file.
func parsePSISome(s string) (uint64, error) {
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "some" {
			continue
		}
		for _, kv := range f[1:] {
			if v, found := strings.CutPrefix(kv, "total="); found {
				return strconv.ParseUint(v, 10, 64)
			}
		}
	}
	return 0, fmt.Errorf("pressure: no some total in %q", s)
}

// pressure measures the share of wall time in which some task waited for
// a CPU and for I/O, between its creation and share.
type pressure struct {
	start       time.Time
	cpu, io     uint64
	cpuOK, ioOK bool
}

func startPressure() pressure {
	p := pressure{start: time.Now()}
	p.cpu, p.cpuOK = psiSome("cpu")
	p.io, p.ioOK = psiSome("io")
	return p
}

// share formats the two shares since start ("-" where not accounted).
func (p pressure) share() (cpu, io string) {
	wall := float64(time.Since(p.start).Microseconds())
	f := func(before uint64, ok bool, resource string) string {
		now, nowOK := psiSome(resource)
		if !ok || !nowOK || wall <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.0f%%", 100*float64(now-before)/wall)
	}
	return f(p.cpu, p.cpuOK, "cpu"), f(p.io, p.ioOK, "io")
}
