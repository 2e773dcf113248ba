package main

import (
	"math"
	"strings"
	"testing"
)

const metricsText = `# HELP samsa_request_duration_seconds Time from a request's frame being read to its response being queued, by API.
# TYPE samsa_request_duration_seconds histogram
samsa_request_duration_seconds_bucket{api="Fetch",le="0.0001"} 7
samsa_request_duration_seconds_bucket{api="Fetch",le="+Inf"} 9
samsa_request_duration_seconds_bucket{api="Produce",le="0.0004"} 90
samsa_request_duration_seconds_bucket{api="Produce",le="0.0001"} 10
samsa_request_duration_seconds_bucket{api="Produce",le="0.0016"} 99
samsa_request_duration_seconds_bucket{api="Produce",le="+Inf"} 100
samsa_request_duration_seconds_sum{api="Produce"} 0.05
samsa_request_duration_seconds_count{api="Produce"} 100
samsa_requests_total{api="Produce"} 100
`

func TestParseHistogram(t *testing.T) {
	h, err := parseHistogram(strings.NewReader(metricsText), produceDurationMetric, "Produce", "")
	if err != nil {
		t.Fatal(err)
	}
	wantLE := []float64{0.0001, 0.0004, 0.0016, math.Inf(1)}
	wantN := []float64{10, 90, 99, 100}
	if len(h.le) != len(wantLE) {
		t.Fatalf("parsed %v %v, want bounds %v", h.le, h.count, wantLE)
	}
	for i := range wantLE {
		if h.le[i] != wantLE[i] || h.count[i] != wantN[i] {
			t.Fatalf("parsed %v %v, want %v %v", h.le, h.count, wantLE, wantN)
		}
	}
	if _, err := parseHistogram(strings.NewReader(`samsa_request_duration_seconds_bucket{api="Produce",le="x"} 1`),
		produceDurationMetric, "Produce", ""); err == nil {
		t.Error("bad le: no error")
	}
	empty, err := parseHistogram(strings.NewReader(metricsText), produceDurationMetric, "Metadata", "")
	if err != nil || len(empty.le) != 0 {
		t.Errorf("absent api: %v, %v", empty, err)
	}
}

func TestHistogramQuantileBucket(t *testing.T) {
	before := histogram{le: []float64{0.0001, 0.0004, 0.0016, math.Inf(1)}, count: []float64{5, 5, 5, 5}}
	after := histogram{le: before.le, count: []float64{15, 95, 104, 105}} // the run: 10, 80, 9, 1
	run, err := after.add(before, -1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		q    float64
		want string
	}{
		{0.05, "(0s,100µs]"},
		{0.5, "(100µs,400µs]"},
		{0.9, "(100µs,400µs]"},
		{0.99, "(400µs,1.6ms]"},
		{0.999, "(1.6ms,+Inf]"},
	} {
		if got := formatBucket(run.quantileBucket(tc.q)); got != tc.want {
			t.Errorf("q%v = %s, want %s", tc.q, got, tc.want)
		}
	}
	for _, tc := range []struct {
		q    float64
		want string
	}{
		{0.05, "50µs (0s,100µs]"},     // rank 5 of the first bucket's 10
		{0.5, "250µs (100µs,400µs]"},  // rank 50: 40 of the bucket's 80
		{0.99, "1.6ms (400µs,1.6ms]"}, // rank 99: the bucket's last
		{0.995, "1.6ms (1.6ms,+Inf]"}, // +Inf: its lower bound
	} {
		if got := run.formatQuantile(tc.q); got != tc.want {
			t.Errorf("quantile %v = %s, want %s", tc.q, got, tc.want)
		}
	}
	if got := formatBucket(histogram{}.quantileBucket(0.99)); got != "-" {
		t.Errorf("empty histogram: %s, want -", got)
	}
	if _, err := before.add(histogram{le: []float64{1, math.Inf(1)}, count: []float64{1, 1}}, 1); err == nil {
		t.Error("adding histograms of different bounds: no error")
	}
	sum, err := histogram{}.add(before, 1)
	if err != nil || sum.count[3] != 5 {
		t.Errorf("empty + h = %v, %v", sum, err)
	}
}
