package quota

import "time"

// sample is one window of a sampled sum (Kafka's SampledStat.Sample).
type sample struct {
	value       float64
	start, last int64 // ms: window start, last event
}

func (s *sample) reset(now int64) { *s = sample{start: now, last: now} }

// rate is Kafka's Rate over a WindowedSum: config.samples windows of
// windowMs, one extra sample kept, obsolete samples purged by their last
// event, and a window size of at least samples-1 full windows.
type rate struct {
	samples []sample
	current int
}

func (r *rate) cur(now int64) *sample {
	if len(r.samples) == 0 {
		r.samples = append(r.samples, sample{start: now, last: now})
	}
	return &r.samples[r.current]
}

func (r *rate) record(c Config, v float64, now int64) {
	s := r.cur(now)
	if now-s.start >= c.windowMs() {
		r.current = (r.current + 1) % (c.Samples + 1)
		if r.current >= len(r.samples) {
			r.samples = append(r.samples, sample{start: now, last: now})
		} else {
			r.samples[r.current].reset(now)
		}
		s = &r.samples[r.current]
	}
	s.value += v
	s.last = now
}

// unrecord takes back a value recorded now (Kafka's unrecordQuotaSensor
// records its negation).
func (r *rate) unrecord(c Config, v float64, now int64) { r.record(c, -v, now) }

func (r *rate) purge(c Config, now int64) {
	expire := int64(c.Samples) * c.windowMs()
	for i := range r.samples {
		if now-r.samples[i].last >= expire {
			r.samples[i].reset(now)
		}
	}
}

func (r *rate) sum(c Config, now int64) float64 {
	r.purge(c, now)
	var t float64
	for _, s := range r.samples {
		t += s.value
	}
	return t
}

// windowSize is Rate.windowSize in ms.
func (r *rate) windowSize(c Config, now int64) int64 {
	r.purge(c, now)
	r.cur(now)
	oldest := r.samples[0].start
	for _, s := range r.samples[1:] {
		oldest = min(oldest, s.start)
	}
	elapsed := now - oldest
	if full, minFull := elapsed/c.windowMs(), int64(c.Samples-1); full < minFull {
		elapsed += (minFull - full) * c.windowMs()
	}
	return elapsed
}

// recordOver records v at now and returns how long to throttle to bring
// the rate back to bound per second (Kafka's QuotaUtils.throttleTime), zero
// within it.
func (r *rate) recordOver(c Config, v, bound float64, now int64) time.Duration {
	r.record(c, v, now)
	if observed := r.measure(c, now); observed > bound {
		return throttle(observed, bound, r.windowSize(c, now))
	}
	return 0
}

// measure is the rate per second.
func (r *rate) measure(c Config, now int64) float64 {
	v := r.sum(c, now)
	return v / (float64(r.windowSize(c, now)) / 1000)
}

// bucket is Kafka's TokenBucket: tokens refill at the quota's rate up to a
// burst of quota × samples × window seconds; it starts full.
type bucket struct {
	tokens  float64
	last    int64 // ms of the last refill
	started bool
}

func burst(c Config, quota float64) float64 {
	return quota * float64(c.Samples) * c.Window.Seconds()
}

func (b *bucket) refill(c Config, quota float64, now int64) {
	if !b.started {
		b.tokens, b.started = burst(c, quota), true
	} else if now > b.last {
		b.tokens = min(burst(c, quota), b.tokens+quota*float64(now-b.last)/1000)
	}
	b.last = max(b.last, now)
}

// take drains v tokens, below zero if need be.
func (b *bucket) take(c Config, quota, v float64) {
	b.tokens = min(burst(c, quota), b.tokens-v)
}

// refillTime is how long the bucket takes to refill to zero at quota per
// second (Kafka's ControllerMutationQuotaManager.throttleTimeMs); zero when
// it is not below zero.
func (b *bucket) refillTime(quota float64) time.Duration {
	if b.tokens >= 0 {
		return 0
	}
	return roundMs(-b.tokens / quota * 1000)
}

// Limiter is one rate against a bound, over the sampled windows of cfg
// (Kafka's Sensor with a Rate and a quota, as ConnectionQuotas keeps for
// connection creation). Not safe for concurrent use.
type Limiter struct {
	cfg Config
	r   rate
}

// NewLimiter returns a Limiter over cfg's windows (DefaultConfig's for a
// zero field).
func NewLimiter(cfg Config) *Limiter { return &Limiter{cfg: cfg.withDefaults()} }

// Record adds v at now and returns how long to throttle to bring the rate
// back to bound per second (Kafka's QuotaUtils.throttleTime), zero within
// it.
func (l *Limiter) Record(v, bound float64, now time.Time) time.Duration {
	return l.r.recordOver(l.cfg, v, bound, now.UnixMilli())
}
