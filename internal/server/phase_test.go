package server

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// phaseStat is the count and sum (seconds) of one phase of one API.
func phaseStat(t *testing.T, ts *testServer, api, phase string) (uint64, float64) {
	t.Helper()
	if m := findMetric(t, ts, "samsa_request_phase_seconds", "api", api, "phase", phase); m != nil {
		return m.Histogram.GetSampleCount(), m.Histogram.GetSampleSum()
	}
	return 0, 0
}

// An acks=-1 Produce's wait for its replicas (a Later answer's) is its
// remote phase, not its local one, and its total holds it; a request
// answered at once has every phase but remote.
func TestRequestPhases(t *testing.T) {
	h, ts, c := startLater(t)
	const wait = 30 * time.Millisecond
	c.write(encodeRequest(laterProduce(true), 1))
	waitStarted(t, h, 1)
	time.Sleep(wait)
	h.release(1)
	readProduceMark(t, c, 1)
	c.roundTrip(kmsg.NewPtrMetadataRequest(), 2)
	// A response's send phases are recorded once its write returned, which
	// may be after the client read it.
	await(t, "the Metadata answer's send recorded", func() bool { n, _ := phaseStat(t, ts, "Metadata", "total"); return n == 1 })

	for _, p := range phaseNames {
		n, sum := phaseStat(t, ts, "Produce", p)
		if n != 1 {
			t.Fatalf("Produce %s: %d observations, want 1", p, n)
		}
		// The wait counts from the handler's return, just after it
		// told the test it started: a few µs after the test's sleep began.
		if p == "remote" && sum < (wait-5*time.Millisecond).Seconds() {
			t.Errorf("Produce remote %.4fs, less than the %v the answer waited", sum, wait)
		}
		if p == "total" {
			if _, remote := phaseStat(t, ts, "Produce", "remote"); sum < remote {
				t.Errorf("Produce total %.4fs, less than its remote %.4fs", sum, remote)
			}
		}
	}
	for _, p := range phaseNames {
		n, _ := phaseStat(t, ts, "Metadata", p)
		if want := map[bool]uint64{true: 0, false: 1}[p == "remote"]; n != want {
			t.Errorf("Metadata %s: %d observations, want %d", p, n, want)
		}
	}
}
