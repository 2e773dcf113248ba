package main

import (
	"math"
	"strings"
	"testing"
	"time"
)

// The summary is each configuration's medians over its rounds, and RF 3
// acks=all's median p99 against the target only at half load.
func TestReplicationSummary(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	// p99At is a histogram of the brokers' Produce durations whose p99
	// estimate is milliseconds ms: 99 of 100 requests within it.
	p99At := func(ms float64) histogram {
		return histogram{le: []float64{ms / 1000, 2 * ms / 1000, math.Inf(1)}, count: []float64{99, 100, 100}}
	}
	rf3 := func(round int, p99 float64, broker histogram) result {
		return result{target: "rf3-all", round: round, pacedMBs: 200 + float64(round), p99: ms(p99), p999: ms(2 * p99),
			requestP99: ms(p99 / 2), brokerProduce: broker}
	}
	results := []result{
		rf3(1, 4.5, p99At(2)), rf3(2, 2.9, histogram{}), rf3(3, 3.1, p99At(1.8)),
		{target: "rf1-one", round: 1, pacedMBs: 500, p99: ms(2), p999: ms(4), requestP99: ms(1)},
		{target: "kfake-all", round: 1, pacedMBs: 201, p99: ms(1.5), p999: ms(3), requestP99: ms(1)},
	}
	var b strings.Builder
	writeReplicationSummary(&b, results, true)
	got := b.String()
	for _, want := range []string{
		// p99 median of 4.5, 2.9, 3.1; broker median of the two rounds that have one
		"rf3-all, medians of 3 rounds: paced 202.0 MB/s, p99 3.1ms, p99.9 6.2ms, request p99 1.55ms, broker p99 1.9ms  target p99 <= 3ms at half load  MISS\n",
		"rf1-one, medians of 1 rounds: paced 500.0 MB/s, p99 2ms, p99.9 4ms, request p99 1ms, broker p99 -\n",
		"kfake-all, medians of 1 rounds: paced 201.0 MB/s, p99 1.5ms, p99.9 3ms, request p99 1ms, broker p99 -\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}

	results[0].p99 = ms(2.5) // the median is now 2.9 ms
	b.Reset()
	writeReplicationSummary(&b, results, true)
	if !strings.Contains(b.String(), "p99 2.9ms, p99.9 6.2ms") || !strings.Contains(b.String(), "at half load  PASS") {
		t.Errorf("median p99 2.9ms should pass:\n%s", b.String())
	}

	b.Reset()
	writeReplicationSummary(&b, results, false) // -paced-mbs: not the target's load
	if strings.Contains(b.String(), "target") {
		t.Errorf("a paced rate set by hand is checked against the target:\n%s", b.String())
	}
}

// The phase table has a p50 / p99 pair per phase, "-" for a phase with
// no observations (rf1-one's remote: acks=1 does not wait).
func TestPhaseTable(t *testing.T) {
	at := func(ms float64) histogram { // p50 and p99 both within (ms/2, ms]
		return histogram{le: []float64{ms / 2000, ms / 1000, math.Inf(1)}, count: []float64{0, 100, 100}}
	}
	phases := map[string]histogram{}
	for i, p := range producePhases {
		phases[p] = at(float64(i + 1))
	}
	one := map[string]histogram{"local": at(1)}
	var b strings.Builder
	writePhaseTable(&b, []result{{target: "rf3-all", round: 1, brokerPhases: phases}, {target: "rf1-one", round: 1, brokerPhases: one},
		{target: "kfake-all", round: 1}})
	lines := strings.Split(b.String(), "\n")
	if strings.Contains(b.String(), "kfake-all") {
		t.Errorf("kfake-all, which has no broker metrics, has a row:\n%s", b.String())
	}
	if len(lines) < 4 || !strings.Contains(lines[1], "request_queue") || !strings.Contains(lines[1], "total") {
		t.Fatalf("table:\n%s", b.String())
	}
	// remote (the third phase) within (1.5ms, 3ms]: p50 at 2.25ms, p99 at 2.985ms
	if !strings.Contains(lines[2], "2.25ms / 2.99ms") {
		t.Errorf("rf3-all's remote p50 / p99 missing:\n%s", b.String())
	}
	if got := strings.Count(lines[3], "- / -"); got != len(producePhases)-1 {
		t.Errorf("rf1-one has %d empty phases, want %d:\n%s", got, len(producePhases)-1, b.String())
	}
}
