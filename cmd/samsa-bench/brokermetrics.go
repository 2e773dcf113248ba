package main

// The broker's own view of produce latency in -replication: each broker
// process serves its Prometheus registry (-metrics-port), and the parent
// reads samsa_request_duration_seconds{api="Produce"} (internal/server:
// from a request's frame being read to its response being queued) before
// and after the paced run. The histogram's buckets are a factor of √2
// apart: the report gives the p99 interpolated within its bucket, and the
// bucket.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

const (
	produceDurationMetric = "samsa_request_duration_seconds_bucket"
	// The phases of a request's time (internal/server/phase.go).
	producePhaseMetric = "samsa_request_phase_seconds_bucket"
)

// producePhases are samsa_request_phase_seconds's phases, in order.
var producePhases = []string{"request_queue", "local", "remote", "response_queue", "response_send", "total"}

// histogram is a cumulative Prometheus histogram: count[i] observations
// at most le[i] seconds; the last bound is +Inf.
type histogram struct {
	le    []float64
	count []float64
}

// parseHistogram reads metric's buckets with label api=api (and, if phase
// is not empty, phase=phase) from the Prometheus text format.
func parseHistogram(r io.Reader, metric, api, phase string) (histogram, error) {
	var h histogram
	type bucket struct{ le, n float64 }
	var bs []bucket
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	want := []string{`api="` + api + `"`}
	if phase != "" {
		want = append(want, `phase="`+phase+`"`)
	}
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, metric+"{") {
			continue
		}
		end := strings.IndexByte(line, '}')
		if end < 0 {
			return h, fmt.Errorf("metrics: bad line %q", line)
		}
		labels := line[len(metric)+1 : end]
		have := strings.Split(labels, ",")
		if slices.ContainsFunc(want, func(w string) bool { return !slices.Contains(have, w) }) {
			continue
		}
		le, ok := labelValue(labels, "le")
		if !ok {
			return h, fmt.Errorf("metrics: no le in %q", line)
		}
		bound, err := strconv.ParseFloat(le, 64) // accepts "+Inf"
		if err != nil {
			return h, fmt.Errorf("metrics: le %q: %w", le, err)
		}
		f := strings.Fields(line[end+1:])
		if len(f) == 0 {
			return h, fmt.Errorf("metrics: no value in %q", line)
		}
		n, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return h, fmt.Errorf("metrics: value in %q: %w", line, err)
		}
		bs = append(bs, bucket{bound, n})
	}
	if err := sc.Err(); err != nil {
		return h, err
	}
	slices.SortFunc(bs, func(a, b bucket) int {
		switch {
		case a.le < b.le:
			return -1
		case a.le > b.le:
			return 1
		}
		return 0
	})
	for _, b := range bs {
		h.le, h.count = append(h.le, b.le), append(h.count, b.n)
	}
	return h, nil
}

func labelValue(labels, name string) (string, bool) {
	for _, kv := range strings.Split(labels, ",") {
		if v, ok := strings.CutPrefix(kv, name+`="`); ok {
			return strings.TrimSuffix(v, `"`), true
		}
	}
	return "", false
}

// add returns h+o (o-h when sign is -1); histograms with different bounds
// are an error unless one is empty.
func (h histogram) add(o histogram, sign float64) (histogram, error) {
	if len(h.le) == 0 {
		out := histogram{le: slices.Clone(o.le), count: slices.Clone(o.count)}
		for i := range out.count {
			out.count[i] *= sign
		}
		return out, nil
	}
	if len(o.le) == 0 {
		return h, nil
	}
	if !slices.Equal(h.le, o.le) {
		return h, fmt.Errorf("metrics: bucket bounds differ: %v, %v", h.le, o.le)
	}
	out := histogram{le: slices.Clone(h.le), count: slices.Clone(h.count)}
	for i := range out.count {
		out.count[i] += sign * o.count[i]
	}
	return out, nil
}

// quantileBucket returns the bounds (lo, hi] of the bucket holding the
// q-quantile, and false when h holds no observations.
func (h histogram) quantileBucket(q float64) (lo, hi float64, ok bool) {
	lo, hi, _, ok = h.quantile(q)
	return lo, hi, ok
}

// quantile returns the bucket (lo, hi] holding the q-quantile and an
// estimate within it, interpolated linearly between the bucket's bounds
// by rank (Prometheus's histogram_quantile); in the +Inf bucket the
// estimate is its lower bound.
func (h histogram) quantile(q float64) (lo, hi, est float64, ok bool) {
	if len(h.count) == 0 || h.count[len(h.count)-1] <= 0 {
		return 0, 0, 0, false
	}
	rank := q * h.count[len(h.count)-1]
	for i, c := range h.count {
		if c < rank {
			continue
		}
		below := 0.0
		if i > 0 {
			lo, below = h.le[i-1], h.count[i-1]
		}
		hi = h.le[i]
		if math.IsInf(hi, 1) || c == below {
			return lo, hi, lo, true
		}
		return lo, hi, lo + (hi-lo)*(rank-below)/(c-below), true
	}
	return 0, 0, 0, false
}

// formatQuantile is "1.9ms (1.6ms,2.3ms]": the estimate and its bucket.
func (h histogram) formatQuantile(q float64) string {
	lo, hi, est, ok := h.quantile(q)
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%s %s", seconds(est).Round(10*time.Microsecond), formatBucket(lo, hi, ok))
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// formatBucket is "(0.4ms, 1.6ms]", or "-" when ok is false.
func formatBucket(lo, hi float64, ok bool) string {
	if !ok {
		return "-"
	}
	d := func(s float64) string {
		if math.IsInf(s, 1) {
			return "+Inf"
		}
		return seconds(s).Round(time.Microsecond).String()
	}
	return fmt.Sprintf("(%s,%s]", d(lo), d(hi))
}

// produceHistograms are the brokers' Produce histograms: the duration
// (frame read to response queued) and each of producePhases.
type produceHistograms struct {
	duration histogram
	phases   map[string]histogram
}

// scrapeProduce sums the brokers' Produce histograms.
func scrapeProduce(urls []string) (produceHistograms, error) {
	sum := produceHistograms{phases: map[string]histogram{}}
	cl := http.Client{Timeout: 5 * time.Second}
	for _, u := range urls {
		resp, err := cl.Get(u)
		if err != nil {
			return sum, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return sum, err
		}
		h, err := parseHistogram(bytes.NewReader(body), produceDurationMetric, "Produce", "")
		if err != nil {
			return sum, err
		}
		if sum.duration, err = sum.duration.add(h, 1); err != nil {
			return sum, err
		}
		for _, p := range producePhases {
			h, err := parseHistogram(bytes.NewReader(body), producePhaseMetric, "Produce", p)
			if err != nil {
				return sum, err
			}
			if sum.phases[p], err = sum.phases[p].add(h, 1); err != nil {
				return sum, err
			}
		}
	}
	return sum, nil
}

// since is h less before (the observations between the two scrapes).
func (h produceHistograms) since(before produceHistograms) (produceHistograms, error) {
	out := produceHistograms{phases: map[string]histogram{}}
	var err error
	if out.duration, err = h.duration.add(before.duration, -1); err != nil {
		return out, err
	}
	for _, p := range producePhases {
		if out.phases[p], err = h.phases[p].add(before.phases[p], -1); err != nil {
			return out, err
		}
	}
	return out, nil
}
