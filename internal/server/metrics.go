package server

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	// phases splits a request's time as Kafka's RequestMetrics do
	// (phase.go).
	phases *prometheus.HistogramVec
	// byKey caches the collectors of each API key (phase.go): a label
	// lookup hashes the label values on every request.
	byKey [maxCachedKey + 1]atomic.Pointer[apiCollectors]
	// errors counts the error codes of the responses by API (errcount.go),
	// its counters cached by API key and code.
	errors      *prometheus.CounterVec
	errorsByKey [maxCachedKey + 1]atomic.Pointer[apiErrors]
	active      prometheus.Gauge
	// throttled: connections muted for a client quota (throttle.go).
	throttled prometheus.Histogram
}

// newMetrics creates the server's collectors and registers them on reg
// (unless nil). A collector already registered by another Server on the same
// registry is shared.
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "samsa_requests_total",
			Help: "Requests handled, by API.",
		}, []string{"api"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "samsa_request_errors_total",
			Help: "Error codes of the responses, by API and error: every error code a response carries, its own and its " +
				"topics', partitions', groups', NONE left out (Kafka's kafka.network:type=RequestMetrics,name=ErrorsPerSec).",
		}, []string{"api", "error"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "samsa_request_duration_seconds",
			Help: "Time from a request's frame being read to its response being queued, by API.",
			// 25µs to 26s, a factor of √2 apart: fine enough to tell a
			// 2ms p99 from a 3ms one (samsa-bench -replication).
			Buckets: prometheus.ExponentialBuckets(25e-6, math.Sqrt2, 41),
		}, []string{"api"}),
		phases: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "samsa_request_phase_seconds",
			Help: "Where a request's time goes, by API and phase, as Kafka's RequestMetrics: request_queue (frame read to " +
				"handling), local (handling; a Fetch's wait for data included), remote (an acks=-1 Produce's wait for " +
				"its replicas), response_queue (response ready to its write), response_send (its write), total (frame " +
				"read to response written).",
			Buckets: prometheus.ExponentialBuckets(25e-6, math.Sqrt2, 41),
		}, []string{"api", "phase"}),
		active: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "samsa_connections_active",
			Help: "Open client connections.",
		}),
		throttled: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "samsa_connection_throttle_seconds",
			Help:    "Throttle times of connections muted after a response for a client quota (KIP-219).",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
		}),
	}
	if reg == nil {
		return m, nil
	}
	var err error
	if m.requests, err = register(reg, m.requests); err != nil {
		return nil, err
	}
	if m.errors, err = register(reg, m.errors); err != nil {
		return nil, err
	}
	if m.duration, err = register(reg, m.duration); err != nil {
		return nil, err
	}
	if m.phases, err = register(reg, m.phases); err != nil {
		return nil, err
	}
	if m.active, err = register(reg, m.active); err != nil {
		return nil, err
	}
	if m.throttled, err = register(reg, m.throttled); err != nil {
		return nil, err
	}
	return m, nil
}

func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, fmt.Errorf("server: registering metrics: %w", err)
}

func (m *metrics) observe(key int16, d time.Duration) {
	c := m.of(key)
	c.requests.Inc()
	c.duration.Observe(d.Seconds())
}
