package main

import (
	"math"
	"strings"
	"testing"
)

func TestParseProcStat(t *testing.T) {
	// Fields after the name: state ppid pgrp session tty tpgid flags minflt
	// cminflt majflt cmajflt utime stime cutime cstime ...
	tail := " S 1 2 3 0 -1 4194560 100 0 0 0 %s 0 0 20 0 8 0 1234 5678 90 18446744073709551615"
	for _, tc := range []struct {
		name, stat   string
		utime, stime uint64
		wantErr      bool
	}{
		{name: "plain", stat: "4242 (samsa-bench)" + strings.Replace(tail, "%s", "250 37", 1), utime: 250, stime: 37},
		{name: "spaces in name", stat: "7 (my broker 2)" + strings.Replace(tail, "%s", "1 2", 1), utime: 1, stime: 2},
		{name: "parens in name", stat: "7 (a) (b) c))" + strings.Replace(tail, "%s", "3 4", 1), utime: 3, stime: 4},
		{name: "name looks like fields", stat: "7 (x S 1 2 3 4 5 6 7 8 9 10 11 12)" + strings.Replace(tail, "%s", "5 6", 1), utime: 5, stime: 6},
		{name: "trailing newline", stat: "7 (k)" + strings.Replace(tail, "%s", "9 10", 1) + "\n", utime: 9, stime: 10},
		{name: "no name", stat: "7 k S 1 2", wantErr: true},
		{name: "truncated", stat: "7 (k) S 1 2 3 0 -1 4194560 100 0 0 0 5", wantErr: true},
		{name: "not a number", stat: "7 (k)" + strings.Replace(tail, "%s", "x 10", 1), wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ut, st, err := parseProcStat([]byte(tc.stat))
			if tc.wantErr {
				if err == nil {
					t.Fatalf("parseProcStat(%q) = %d, %d, want an error", tc.stat, ut, st)
				}
				return
			}
			if err != nil || ut != tc.utime || st != tc.stime {
				t.Fatalf("parseProcStat(%q) = %d, %d, %v, want %d, %d", tc.stat, ut, st, err, tc.utime, tc.stime)
			}
		})
	}
}

func TestProcCPUSelf(t *testing.T) {
	if _, err := procCPU(0); err != nil {
		t.Skipf("no /proc here: %v", err)
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{5}, 5},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{10, 10, 1, 100, 10}, 10},
	} {
		in := append([]float64(nil), tc.in...)
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
		for i := range in {
			if in[i] != tc.in[i] {
				t.Fatalf("median reordered its argument: %v", tc.in)
			}
		}
	}
	if got := median(nil); !math.IsNaN(got) {
		t.Errorf("median(nil) = %v, want NaN", got)
	}
}

func TestFairSummary(t *testing.T) {
	const gb = 1 << 30
	run := func(round int, target string, p, c, cpu float64) fairRun {
		return fairRun{round: round, target: target, partitions: 16, produceMBs: p, consumeMBs: c,
			serverCPU: cpu, clientCPU: 1, bytesMoved: 0.5 * gb}
	}
	runs := []fairRun{
		run(1, "samsa", 300, 900, 0.5), run(1, "kfake", 100, 200, 2),
		run(2, "samsa", 200, 700, 0.6), run(2, "kfake", 150, 300, 3),
		run(3, "samsa", 100, 800, 0.9), run(3, "kfake", 120, 250, 2.5),
		run(1, "other", 1, 1, 1), // another partition count's runs are left out below
	}
	runs[6].partitions = 1
	var b strings.Builder
	writeFairSummary(&b, 16, runs)
	want := `partitions=16, medians of 3 runs each:
                                samsa      kfake samsa/kfake
  produce MB/s                  200.0      120.0       1.67x  target >= 1.5x  PASS
  consume MB/s                  800.0      250.0       3.20x  target >= 2.0x  PASS
  server CPU-s/GB moved          1.20       5.00       0.24x  target samsa <= 1.5  PASS
`
	if got := b.String(); got != want {
		t.Errorf("summary:\n%s\nwant:\n%s", got, want)
	}

	runs[0].produceMBs, runs[2].produceMBs = 150, 150 // median 150: 1.25x
	runs[1].consumeMBs = 300                          // kfake's consume median 300: 2.67x
	runs[2].serverCPU = 0.9                           // samsa's median 1.8 CPU-s/GB
	b.Reset()
	writeFairSummary(&b, 16, runs)
	for _, line := range []string{
		"produce MB/s                  150.0      120.0       1.25x  target >= 1.5x  MISS",
		"consume MB/s                  800.0      300.0       2.67x  target >= 2.0x  PASS",
		"server CPU-s/GB moved          1.80       5.00       0.36x  target samsa <= 1.5  MISS",
	} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("summary lacks %q:\n%s", line, b.String())
		}
	}
}

func TestFormatFairRun(t *testing.T) {
	r := fairRun{round: 2, target: "kfake", partitions: 16, produceMBs: 123.45, consumeMBs: 456.78,
		serverCPU: 1.5, clientCPU: 0.75, bytesMoved: 1 << 30}
	got := formatFairRun(r)
	want := "    2 kfake          16        123.5        456.8         1.50         0.75             1.50             0.75"
	if got != want {
		t.Errorf("formatFairRun =\n%q\nwant\n%q", got, want)
	}
	if h, l := len(fairRunHeader), len(got); h != l {
		t.Errorf("header is %d wide, a row %d", h, l)
	}
}
