package main

import (
	"strings"
	"testing"
)

func TestParseProcStatusBytes(t *testing.T) {
	status := "Name:\tsamsa-bench\nVmPeak:\t 2000000 kB\nVmHWM:\t  130000 kB\nVmRSS:\t  123456 kB\nRssAnon:\t  100000 kB\nThreads:\t12\n"
	for _, tc := range []struct {
		field string
		want  int64
		err   bool
	}{
		{"VmRSS", 123456 << 10, false},
		{"VmHWM", 130000 << 10, false},
		{"RssAnon", 100000 << 10, false},
		{"VmSwap", 0, true},  // absent
		{"Threads", 0, true}, // not in kB
		{"Vm", 0, true},      // a prefix of a field is not that field
	} {
		got, err := parseProcStatusBytes([]byte(status), tc.field)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("%s: %d, %v; want %d, error %v", tc.field, got, err, tc.want, tc.err)
		}
	}
}

func TestParseGauge(t *testing.T) {
	metrics := `# HELP go_goroutines Number of goroutines that currently exist.
# TYPE go_goroutines gauge
go_goroutines 4711
go_goroutines_extra 1
go_memstats_heap_inuse_bytes 1.2345678e+08
samsa_request_duration_seconds_bucket{api="Produce",le="0.0001"} 3
`
	if g, err := parseGauge(strings.NewReader(metrics), "go_goroutines"); err != nil || g != 4711 {
		t.Errorf("go_goroutines: %v, %v", g, err)
	}
	if h, err := parseGauge(strings.NewReader(metrics), "go_memstats_heap_inuse_bytes"); err != nil || h != 123456780 {
		t.Errorf("heap: %v, %v", h, err)
	}
	if _, err := parseGauge(strings.NewReader(metrics), "go_threads"); err == nil {
		t.Error("absent metric: no error")
	}
}

func TestIdleTopics(t *testing.T) {
	got := idleTopics(2500, 1000)
	if len(got) != 3 || got["idle-0000"] != 1000 || got["idle-0001"] != 1000 || got["idle-0002"] != 500 {
		t.Fatalf("idleTopics(2500, 1000) = %v", got)
	}
}

// TestIdleTable: deltas over the phase before, per partition, and per
// connection for the last phase.
func TestIdleTable(t *testing.T) {
	samples := []idleSample{
		{phase: "started", rss: 40 << 20, peak: 45 << 20, heap: 10 << 20, fds: 25, goroutines: 100},
		{phase: "created", rss: 40<<20 + 2000*1000, peak: 50 << 20, heap: 10<<20 + 1500*1000, fds: 28, goroutines: 109},
		{phase: "written", rss: 40<<20 + 3000*1000, peak: 60 << 20, heap: 10<<20 + 2000*1000, fds: 2071, goroutines: 100},
		{phase: "conns", rss: 40<<20 + 3000*1000 + 10*16384, peak: 60 << 20, heap: 10<<20 + 2000*1000 + 10*131072, fds: 2081, goroutines: 130},
	}
	var b strings.Builder
	writeIdleTable(&b, samples, 1000, 10)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d lines:\n%s", len(lines), b.String())
	}
	for i, want := range [][]string{
		{"started", "40.0", "45.0", "10.0", "25", "100", "-", "-", "-", "-"},
		{"created", "41.9", "50.0", "11.4", "28", "109", "partition", "2000", "1500", "0.009"},
		{"written", "42.9", "60.0", "11.9", "2071", "100", "partition", "1000", "500", "-0.009"},
		{"conns", "43.0", "60.0", "13.2", "2081", "130", "connection", "16384", "131072", "3.000"},
	} {
		if got := strings.Fields(lines[i+1]); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("row %d: %v, want %v", i, got, want)
		}
	}
}
