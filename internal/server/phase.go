package server

// Where a request's time goes, in the phases of Kafka's RequestMetrics
// (kafka.network:type=RequestMetrics: RequestQueueTimeMs, LocalTimeMs,
// RemoteTimeMs, ResponseQueueTimeMs, ResponseSendTimeMs, TotalTimeMs), as
// samsa_request_phase_seconds{api, phase}:
//
//   - request_queue: from the request's frame being read to its handling
//     starting (the connection's handling goroutine was busy with the
//     requests before it, or waiting for a CPU);
//   - local: the handler's own time; unlike Kafka's, a Fetch's long poll
//     (and any other wait inside a handler) is in it;
//   - remote: a Later answer's wait (an acks=-1 Produce waiting for its
//     replicas: the leader's append to the high watermark passing it),
//     from the handler's return to the wait's end;
//   - response_queue: from the response being encoded to its write
//     starting (queued behind other responses, or waiting for the writer
//     goroutine to run);
//   - response_send: its write, to the flush that put its last byte on
//     the socket;
//   - total: from the frame being read to that flush.
//
// A request with no response (acks=0) has no response phases and no
// total. The observers are looked up once per API key and phase.

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type phase int

const (
	phaseRequestQueue phase = iota
	phaseLocal
	phaseRemote
	phaseResponseQueue
	phaseResponseSend
	phaseTotal
	numPhases
)

var phaseNames = [numPhases]string{"request_queue", "local", "remote", "response_queue", "response_send", "total"}

// maxCachedKey bounds the API keys whose collectors are cached; others
// are looked up each time.
const maxCachedKey = 127

// apiCollectors are one API key's request counter, duration and phases.
type apiCollectors struct {
	requests prometheus.Counter
	duration prometheus.Observer
	phases   [numPhases]prometheus.Observer
}

// of returns key's collectors, made (and, for a cached key, kept) on its
// first request.
func (m *metrics) of(key int16) *apiCollectors {
	var slot *atomic.Pointer[apiCollectors]
	if key >= 0 && key <= maxCachedKey {
		slot = &m.byKey[key]
		if c := slot.Load(); c != nil {
			return c
		}
	}
	api := kmsg.NameForKey(key)
	c := &apiCollectors{requests: m.requests.WithLabelValues(api), duration: m.duration.WithLabelValues(api)}
	for p := range c.phases {
		c.phases[p] = m.phases.WithLabelValues(api, phaseNames[p])
	}
	if slot != nil {
		slot.Store(c)
	}
	return c
}

func (m *metrics) observePhase(key int16, p phase, d time.Duration) {
	m.of(key).phases[p].Observe(d.Seconds())
}

// timing is what a response frame carries of its request's times.
type timing struct {
	key   int16
	read  time.Time // the request's frame was read
	ready time.Time // the response was encoded; zero: not timed
}

// sentFrames notes when the writing of each timed frame of one write
// started, and records their response phases at the flush that put them
// on the socket. A write holds at most queueDepth frames (or one); any
// beyond len(at) go unrecorded.
type sentFrames struct {
	n  int
	at [2 * queueDepth]struct {
		t     timing
		start time.Time
	}
}

func (s *sentFrames) start(t timing) {
	if t.ready.IsZero() || s.n == len(s.at) {
		return
	}
	s.at[s.n].t, s.at[s.n].start = t, time.Now()
	s.n++
}

func (s *sentFrames) flushed(m *metrics) {
	if s.n == 0 {
		return
	}
	now := time.Now()
	for _, f := range s.at[:s.n] {
		m.observePhase(f.t.key, phaseResponseQueue, f.start.Sub(f.t.ready))
		m.observePhase(f.t.key, phaseResponseSend, now.Sub(f.start))
		m.observePhase(f.t.key, phaseTotal, now.Sub(f.t.read))
	}
	s.n = 0
}
