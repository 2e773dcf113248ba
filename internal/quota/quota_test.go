package quota

import (
	"math"
	"testing"
	"time"
)

var t0 = time.UnixMilli(1_000_000)

func TestPrecedence(t *testing.T) {
	cases := []struct {
		set    []Entity
		bound  float64 // bound of the first entity set, which must win
		shared bool    // two client ids of the user share one sensor
	}{
		{[]Entity{{"u", "c"}, {"u", Default}, {"u", ""}, {Default, "c"}, {"", "c"}}, 1, false},
		{[]Entity{{"u", Default}, {"u", ""}, {Default, Default}, {"", "c"}}, 1, false},
		{[]Entity{{"u", ""}, {Default, "c"}, {Default, ""}, {"", "c"}}, 1, true},
		{[]Entity{{Default, "c"}, {Default, Default}, {Default, ""}, {"", "c"}}, 1, false},
		{[]Entity{{Default, Default}, {Default, ""}, {"", "c"}}, 1, false},
		{[]Entity{{Default, ""}, {"", "c"}, {"", Default}}, 1, true},
		{[]Entity{{"", "c"}, {"", Default}}, 1, false},
		{[]Entity{{"", Default}}, 1, false},
	}
	for i, tc := range cases {
		m := New(DefaultConfig)
		for j, e := range tc.set {
			m.Set(e, map[string]float64{ProducerByteRate: float64(j + 1)})
		}
		if got := m.MaxValueInWindow(Produce, "u", "c") / 10; got != tc.bound {
			t.Errorf("case %d: bound %v, want %v", i, got, tc.bound)
		}
		a, b := m.tags(Produce, "u", "c"), m.tags(Produce, "u", "other")
		if (a == b) != tc.shared {
			t.Errorf("case %d: tags %v and %v, shared want %v", i, a, b, tc.shared)
		}
	}
}

func TestNoQuotaNoThrottle(t *testing.T) {
	m := New(DefaultConfig)
	m.Set(Entity{"", "other"}, map[string]float64{ProducerByteRate: 1})
	if d := m.Record(Produce, Principal, "c", 1e9, t0); d != 0 {
		t.Fatalf("throttled %v without a quota", d)
	}
	if !math.IsInf(m.MaxValueInWindow(Produce, Principal, "c"), 1) {
		t.Fatal("bounded without a quota")
	}
	m.Set(Entity{"", "other"}, nil)
	if m.Enabled(Produce) {
		t.Fatal("removed quota still enabled")
	}
}

// A first record is measured over samples-1 full windows: 10 windows of
// 1 s, so 2000 bytes at 100 B/s is 200 B/s, throttled (200-100)/100 × 10 s.
func TestThrottleTime(t *testing.T) {
	m := New(DefaultConfig)
	m.Set(Entity{"", Default}, map[string]float64{ProducerByteRate: 100, RequestPercentage: 1})
	if d := m.Record(Produce, Principal, "c", 1000, t0); d != 0 {
		t.Fatalf("within quota throttled %v", d)
	}
	if d := m.Record(Produce, Principal, "c", 1000, t0); d != 10*time.Second {
		t.Fatalf("throttle %v, want 10s", d)
	}
	// request_percentage is capped at one window.
	if d := m.Record(Request, Principal, "c", 50, t0); d != time.Second {
		t.Fatalf("request throttle %v, want 1s", d)
	}
}

func TestUnrecord(t *testing.T) {
	m := New(DefaultConfig)
	m.Set(Entity{"", "c"}, map[string]float64{ConsumerByteRate: 100})
	if d := m.Record(Fetch, Principal, "c", 2000, t0); d == 0 {
		t.Fatal("not throttled")
	}
	m.Unrecord(Fetch, Principal, "c", 2000, t0)
	if d := m.Record(Fetch, Principal, "c", 1000, t0); d != 0 {
		t.Fatalf("unrecorded bytes still count: throttled %v", d)
	}
}

// A greedy client that waits out each throttle reaches the quota, within
// 10%, measured after its first full quota window (time is simulated).
func TestGreedyClientHeldToQuota(t *testing.T) {
	const bound, size = 10_000.0, 1_500.0
	m := New(DefaultConfig)
	m.Set(Entity{"", "c"}, map[string]float64{ProducerByteRate: bound})
	now := t0
	var sent float64
	start := t0.Add(12 * time.Second)
	for now.Before(t0.Add(612 * time.Second)) {
		d := m.Record(Produce, Principal, "c", size, now)
		if !now.Before(start) {
			sent += size
		}
		now = now.Add(d + time.Millisecond)
	}
	got := sent / 600
	if got > bound*1.1 || got < bound*0.9 {
		t.Fatalf("rate %.0f B/s, quota %.0f", got, bound)
	}
	t.Logf("rate %.0f B/s for a quota of %.0f", got, bound)
}

func TestSanitize(t *testing.T) {
	for in, want := range map[string]string{
		"client-1.a_b": "client-1.a_b", "a b*": "a%20b%2A", "<default>": "%3Cdefault%3E", "é": "%C3%A9",
	} {
		if got := Sanitize(in); got != want {
			t.Errorf("Sanitize(%q) = %q, want %q", in, got, want)
		}
		if back, _ := Desanitize(want); back != in {
			t.Errorf("Desanitize(%q) = %q", want, back)
		}
	}
}

// controller_mutation_rate is Kafka's token bucket (KIP-599): at 10
// mutations/s over 11 one-second windows it starts with 110; a strict
// quota accepts mutations while the bucket is not below zero, even ones
// that take it below, then refuses with the time to refill to zero; a
// permissive one accepts all and throttles those that leave it below zero.
func TestMutateTokenBucket(t *testing.T) {
	m := New(DefaultConfig)
	if ok, d := m.Mutate(Principal, "c", 1000, true, t0); !ok || d != 0 {
		t.Fatalf("without a quota: %v %v", ok, d)
	}
	m.Set(Entity{ClientID: "c"}, map[string]float64{ControllerMutationRate: 10})
	steps := []struct {
		at      time.Duration
		permits float64
		strict  bool
		ok      bool
		d       time.Duration
	}{
		{0, 100, true, true, 0},                                    // 10 left
		{0, 90, true, true, 0},                                     // -80: accepted, not throttled
		{0, 1, true, false, 8 * time.Second},                       // refused: 80 / 10 per second
		{2 * time.Second, 1, true, false, 6 * time.Second},         // refilled to -60
		{2 * time.Second, 5, false, true, 6500 * time.Millisecond}, // permissive: -65, accepted, throttled
		{8500 * time.Millisecond, 1, true, true, 0},                // refilled to 0: not below, accepted
		{8500 * time.Millisecond, 1, true, false, 100 * time.Millisecond},
		{time.Hour - time.Minute, 200, true, true, 0}, // full again (110): -90
	}
	for i, s := range steps {
		if ok, d := m.Mutate(Principal, "c", s.permits, s.strict, t0.Add(s.at)); ok != s.ok || d != s.d {
			t.Fatalf("step %d: ok %v throttle %v, want %v %v", i, ok, d, s.ok, s.d)
		}
	}
	if ok, _ := m.Mutate(Principal, "other", 500, true, t0); !ok {
		t.Fatal("a client without a quota refused")
	}
	if !m.Enabled(ControllerMutation) || m.Enabled(Produce) {
		t.Fatal("Enabled")
	}
}
