package main

import (
	"testing"
	"time"
)

func TestTailEpisodes(t *testing.T) {
	ms := time.Millisecond
	// Ticks of two records each; a stall at 10-12 ms, one slow record at 20
	// ms and one at 23 ms (3 ms later: another episode).
	var sent, lat []time.Duration
	for tick := range 30 {
		for range 2 {
			d := ms
			switch {
			case tick >= 10 && tick <= 12:
				d = time.Duration(15-tick) * ms // all acknowledged at 15 ms
			case tick == 20 || tick == 23:
				d = 4 * ms
			}
			sent = append(sent, time.Duration(tick)*ms)
			lat = append(lat, d)
		}
	}
	n, longest := tailEpisodes(sent, lat, 3*ms, 2*ms)
	if n != 3 || longest != 5*ms {
		t.Fatalf("%d episodes, longest %v; want 3, 5ms (10 ms to 15 ms)", n, longest)
	}
	// With a 3 ms gap, the records at 20 and 23 ms are one episode of 7 ms.
	if n, longest := tailEpisodes(sent, lat, 3*ms, 3*ms); n != 2 || longest != 7*ms {
		t.Fatalf("%d episodes, longest %v; want 2, 7ms", n, longest)
	}
	if n, longest := tailEpisodes(sent, lat, time.Second, 2*ms); n != 0 || longest != 0 {
		t.Fatalf("nothing above the threshold: %d episodes, longest %v", n, longest)
	}
}

func TestParsePSISome(t *testing.T) {
	got, err := parsePSISome("some avg10=20.82 avg60=27.78 avg300=24.68 total=2973497943\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=12\n")
	if err != nil || got != 2973497943 {
		t.Fatalf("got %d, %v", got, err)
	}
	for _, bad := range []string{"", "full avg10=0.00 total=12\n", "some avg10=1.00\n", "some total=x\n"} {
		if _, err := parsePSISome(bad); err == nil {
			t.Fatalf("%q: no error", bad)
		}
	}
}
