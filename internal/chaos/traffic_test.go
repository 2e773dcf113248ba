package chaos

import (
	"testing"
	"time"
)

// TestAckedSince: the nemesis starts the next fault only once every
// partition of the topic has an acknowledged write answered after the
// heal; failed writes, writes answered before the heal and writes to
// other topics do not count.
func TestAckedSince(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(p Partition, s float64, acked bool) Write {
		return Write{Partition: p, Acked: acked, At: t0.Add(time.Duration(s * float64(time.Second)))}
	}
	tr := &Traffic{Topic: "t", Partitions: 2}
	healed := t0.Add(time.Second)
	steps := []struct {
		w    Write
		want bool
	}{
		{at(pa, 0.5, true), false},                  // before the heal
		{at(pa, 2, true), false},                    // pb has none
		{at(pb, 3, false), false},                   // not acknowledged
		{at(Partition{"moves", 1}, 3, true), false}, // another topic
		{at(Partition{"t", 2}, 3, true), false},     // not a partition of the topic
		{at(pb, 4, true), true},                     // both now
		{at(pb, 1.5, true), true},                   // an older answer recorded late keeps the latest
	}
	for i, s := range steps {
		tr.mu.Lock()
		tr.record(s.w)
		tr.mu.Unlock()
		if got := tr.AckedSince(healed); got != s.want {
			t.Fatalf("after write %d (%+v): AckedSince = %v, want %v", i, s.w, got, s.want)
		}
	}
	if tr.AckedSince(t0.Add(3 * time.Second)) {
		t.Fatal("pa's latest acknowledged write (2 s) is before 3 s")
	}
	tr.mu.Lock()
	tr.record(at(pa, 5, true))
	tr.mu.Unlock()
	if !tr.AckedSince(t0.Add(3500 * time.Millisecond)) {
		t.Fatal("pa's latest is 5 s, pb's 4 s (its 1.5 s answer came later but is older)")
	}
	if n := len(tr.writes); n != len(steps)+1 {
		t.Fatalf("history holds %d writes, want %d", n, len(steps)+1)
	}
}
