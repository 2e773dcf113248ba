package quota

import (
	"math"
	"sync"
	"time"
)

// Config is quota.window.num and quota.window.size.seconds.
type Config struct {
	Samples int           // quota.window.num, default 11
	Window  time.Duration // quota.window.size.seconds, default 1s
}

// DefaultConfig is Kafka's defaults.
var DefaultConfig = Config{Samples: 11, Window: time.Second}

func (c Config) windowMs() int64 { return c.Window.Milliseconds() }

// withDefaults is c with DefaultConfig's values for those out of range.
func (c Config) withDefaults() Config {
	if c.Samples < 1 {
		c.Samples = DefaultConfig.Samples
	}
	if c.Window < time.Second {
		c.Window = DefaultConfig.Window
	}
	return c
}

// Type is one of Kafka's client quota types.
type Type int

const (
	Produce Type = iota // producer_byte_rate: bytes per second
	Fetch               // consumer_byte_rate: bytes per second
	Request             // request_percentage: % of one thread's time
	// ControllerMutation is controller_mutation_rate: partitions created
	// or deleted per second (KIP-599), measured with a token bucket
	// (Mutate), not a rate.
	ControllerMutation
	numTypes
)

// Config keys, as Kafka's QuotaConfigs names them.
const (
	ProducerByteRate       = "producer_byte_rate"
	ConsumerByteRate       = "consumer_byte_rate"
	RequestPercentage      = "request_percentage"
	ControllerMutationRate = "controller_mutation_rate"
)

var typeKeys = [numTypes]string{ProducerByteRate, ConsumerByteRate, RequestPercentage, ControllerMutationRate}

// Default names the default entity of a component.
const Default = "<default>"

// Entity is a quota entity: /config/users/<User>,
// /config/users/<User>/clients/<ClientID> or /config/clients/<ClientID>.
// Names are sanitized; "" is a missing component.
type Entity struct{ User, ClientID string }

// tags are the metric tags a sensor is shared under (user, client-id).
type tags struct{ user, client string }

type sensor struct {
	r    rate   // Produce, Fetch, Request
	b    bucket // ControllerMutation
	used int64
}

// inactive is how long an unused sensor lives (Kafka's
// InactiveSensorExpirationTimeSeconds).
const inactive = int64(time.Hour / time.Millisecond)

// Manager holds the quotas in force and the rates measured against them.
type Manager struct {
	cfg       Config
	mu        sync.Mutex
	overrides [numTypes]map[Entity]float64
	sensors   [numTypes]map[tags]*sensor
	lastSweep int64
}

// New returns a Manager without quotas.
func New(cfg Config) *Manager {
	m := &Manager{cfg: cfg.withDefaults()}
	for t := range numTypes {
		m.overrides[t] = map[Entity]float64{}
		m.sensors[t] = map[tags]*sensor{}
	}
	return m
}

// Set replaces an entity's quotas (keys as stored; unknown keys ignored);
// nil or empty values remove them.
func (m *Manager) Set(e Entity, values map[string]float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for t, k := range typeKeys {
		if v, ok := values[k]; ok {
			m.overrides[t][e] = v
		} else {
			delete(m.overrides[t], e)
		}
	}
}

// Enabled reports whether some quota of type t is set.
func (m *Manager) Enabled(t Type) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.overrides[t]) > 0
}

// Active reports whether any quota is set.
func (m *Manager) Active() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, o := range m.overrides {
		if len(o) > 0 {
			return true
		}
	}
	return false
}

// Record adds value for the client (sanitized user, raw client id) at
// now and returns how long to throttle it: zero within its quota, else
// Kafka's QuotaUtils.throttleTime, capped at one window for Request.
func (m *Manager) Record(t Type, user, clientID string, value float64, now time.Time) time.Duration {
	ms := now.UnixMilli()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.overrides[t]) == 0 {
		return 0
	}
	tg := m.tags(t, user, Sanitize(clientID))
	bound, ok := m.limit(t, tg)
	if !ok {
		return 0
	}
	d := m.sensor(t, tg, ms).r.recordOver(m.cfg, value, bound, ms)
	if t == Request {
		d = min(d, m.cfg.Window)
	}
	return d
}

// Unrecord takes back a value recorded at now (a throttled fetch answers
// no data, so its bytes do not count).
func (m *Manager) Unrecord(t Type, user, clientID string, value float64, now time.Time) {
	ms := now.UnixMilli()
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.sensors[t][m.tags(t, user, Sanitize(clientID))]; ok {
		s.r.unrecord(m.cfg, value, ms)
	}
}

// MaxValueInWindow is the most a client may use within the quota window
// (Kafka's getMaxValueInQuotaWindow): bound × (samples-1) × window
// seconds, +Inf without a quota. Fetch caps max_bytes with it.
func (m *Manager) MaxValueInWindow(t Type, user, clientID string) float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.overrides[t]) == 0 {
		return math.Inf(1)
	}
	bound, ok := m.limit(t, m.tags(t, user, Sanitize(clientID)))
	if !ok {
		return math.Inf(1)
	}
	return bound * float64(m.cfg.Samples-1) * m.cfg.Window.Seconds()
}

// throttle is X = (O - T) / T × W, rounded to the millisecond.
func throttle(observed, bound float64, windowMs int64) time.Duration {
	return roundMs((observed - bound) / bound * float64(windowMs))
}

func roundMs(ms float64) time.Duration {
	if math.IsNaN(ms) || ms > math.MaxInt32 {
		ms = math.MaxInt32
	}
	return time.Duration(math.Round(ms)) * time.Millisecond
}

// Mutate asks for permits controller mutations (partitions created or
// deleted) for the client (sanitized user, raw client id) at now, against
// its controller_mutation_rate, as Kafka's ControllerMutationQuotaManager:
// a token bucket that refills at the quota's rate up to a burst of quota ×
// quota.window.num × quota.window.size.seconds, and that a mutation drains,
// below zero if it takes more than is left. A strict quota (CreateTopics
// v6+, DeleteTopics v5+, CreatePartitions v3+) refuses the mutation (ok
// false) while the bucket is below zero, with the time it takes to refill
// to zero as the throttle, and does not throttle one it accepts; a
// permissive one (older versions) accepts every mutation and throttles the
// one that leaves the bucket below zero for that time.
func (m *Manager) Mutate(user, clientID string, permits float64, strict bool, now time.Time) (ok bool, throttle time.Duration) {
	ms := now.UnixMilli()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.overrides[ControllerMutation]) == 0 {
		return true, 0
	}
	tg := m.tags(ControllerMutation, user, Sanitize(clientID))
	bound, found := m.limit(ControllerMutation, tg)
	if !found {
		return true, 0
	}
	b := &m.sensor(ControllerMutation, tg, ms).b
	b.refill(m.cfg, bound, ms)
	if strict && b.tokens < 0 {
		return false, b.refillTime(bound)
	}
	b.take(m.cfg, bound, permits)
	if !strict {
		return true, b.refillTime(bound)
	}
	return true, 0
}

func (m *Manager) sensor(t Type, tg tags, now int64) *sensor {
	if now-m.lastSweep >= 60_000 {
		m.lastSweep = now
		for _, ss := range m.sensors {
			for k, s := range ss {
				if now-s.used >= inactive {
					delete(ss, k)
				}
			}
		}
	}
	s, ok := m.sensors[t][tg]
	if !ok {
		s = &sensor{}
		m.sensors[t][tg] = s
	}
	s.used = now
	return s
}
