package chaos

import (
	"slices"
	"strings"
	"testing"
	"time"
)

var pa, pb = Partition{"t", 0}, Partition{"t", 1}

func write(writer, seq int, p Partition, acked bool, off int64) Write {
	return Write{Writer: writer, Seq: seq, Idempotent: true, Partition: p, Acked: acked, Offset: off}
}

func log(p Partition, values ...string) []Read {
	out := make([]Read, len(values))
	for i, v := range values {
		out[i] = Read{Partition: p, Offset: int64(i), Value: v}
	}
	return out
}

func TestCheckClean(t *testing.T) {
	h := History{
		Writes:  []Write{write(1, 0, pa, true, 0), write(1, 1, pa, true, 1), write(1, 2, pa, false, 0), write(2, 0, pb, true, 0)},
		Final:   map[Partition][]Read{pa: log(pa, "w1-0", "w1-1", "w1-2"), pb: log(pb, "w2-0")},
		Live:    []Read{{pa, 1, "w1-1"}},
		Commits: map[Partition][]int64{pa: {1, 3, 3}},
	}
	c := Check(h)
	if c.Violations() != 0 || c.Acked != 3 || c.Unacked != 1 || c.UnackedPresent != 1 {
		t.Fatalf("clean history: %+v", c)
	}
}

func TestCheckViolations(t *testing.T) {
	plain := write(3, 0, pb, true, 1)
	plain.Idempotent = false
	h := History{
		Writes: []Write{
			write(1, 0, pa, true, 0), // lost
			write(1, 1, pa, true, 1), // moved to 0
			write(1, 2, pa, true, 2), // duplicated, and before seq 1: reordered
			plain,                    // duplicated, allowed
		},
		Final: map[Partition][]Read{
			pa: log(pa, "w1-2", "w1-1", "w1-2", "x"),
			pb: log(pb, "w3-0", "w3-0"),
		},
		Live:    []Read{{pa, 0, "w1-0"}},
		Commits: map[Partition][]int64{pa: {5, 4}},
	}
	c := Check(h)
	want := Counts{Lost: 1, Moved: 0, Duplicated: 1, PlainDuplicates: 1, Reordered: 1, Unexpected: 1, Diverged: 1, CommitRegressions: 1}
	if c.Lost != want.Lost || c.Duplicated != want.Duplicated || c.PlainDuplicates != want.PlainDuplicates ||
		c.Reordered != want.Reordered || c.Unexpected != want.Unexpected || c.Diverged != want.Diverged ||
		c.CommitRegressions != want.CommitRegressions {
		t.Fatalf("got %+v\nwant %+v", c, want)
	}
	// w1-1 acknowledged at 1 and found at 1: not moved; w1-2 at 0 and 2.
	if c.Moved != 0 {
		t.Fatalf("moved = %d", c.Moved)
	}
	if !strings.Contains(c.String(), "lost 1") {
		t.Fatalf("report: %s", c)
	}
}

func TestCheckMoved(t *testing.T) {
	h := History{
		Writes: []Write{write(1, 0, pa, true, 0)},
		Final:  map[Partition][]Read{pa: log(pa, "w9-9", "w1-0")},
	}
	c := Check(h)
	if c.Moved != 1 || c.Unexpected != 1 || c.Violations() != 2 {
		t.Fatalf("got %+v", c)
	}
}

func TestLongestGap(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(p Partition, s float64) Write {
		return Write{Partition: p, Acked: true, At: t0.Add(time.Duration(s * float64(time.Second)))}
	}
	ws := []Write{at(pa, 1), at(pa, 2), at(pa, 7), at(pb, 1), at(pb, 3), {Partition: pb, At: t0.Add(9 * time.Second)}}
	gap, p, since := LongestGap(ws, t0, t0.Add(10*time.Second))
	// pb: acked at 1 and 3, then nothing until the window ends at 10 (the
	// unacknowledged write at 9 does not count): 7 s.
	if gap != 7*time.Second || p != pb || !since.Equal(t0.Add(3*time.Second)) {
		t.Fatalf("gap %v in %v from %v", gap, p, since.Sub(t0))
	}
	// pa from its ack at 2 to the window's end at 6 (its next ack is at 7).
	gap, p, since = LongestGap(ws, t0.Add(1500*time.Millisecond), t0.Add(6*time.Second))
	if gap != 4*time.Second || p != pa || !since.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("gap %v in %v from %v", gap, p, since.Sub(t0))
	}
}

func TestFirstAcks(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(p Partition, s float64, acked bool) Write {
		return Write{Partition: p, Acked: acked, At: t0.Add(time.Duration(s * float64(time.Second)))}
	}
	ws := []Write{at(pa, 0.5, true), at(pa, 2, true), at(pb, 1, false), at(pb, 3, true), at(pb, 20, true)}
	d, ok := FirstAcks(ws, []Partition{pa, pb}, t0.Add(time.Second), t0.Add(10*time.Second))
	if !ok || d != 2*time.Second {
		t.Fatalf("got %v %v", d, ok)
	}
	if _, ok := FirstAcks(ws, []Partition{pa, pb}, t0.Add(time.Second), t0.Add(2500*time.Millisecond)); ok {
		t.Fatal("pb took no write before 2.5 s")
	}
}

// TestProbeWrites: the prober's attempts are independent, so their order
// in the log is not checked, but their loss is; overGoal counts them for
// a fault's unavailability and leaves them out of the writers' gap.
func TestProbeWrites(t *testing.T) {
	probe := func(seq int, off int64) Write {
		w := write(9, seq, pa, true, off)
		w.Probe = true
		return w
	}
	h := History{
		Writes: []Write{probe(0, 1), probe(1, 0), probe(2, 5)},
		Final:  map[Partition][]Read{pa: log(pa, "w9-1", "w9-0")},
	}
	if c := Check(h); c.Reordered != 0 || c.Lost != 1 {
		t.Fatalf("got %+v", c)
	}

	t0 := time.Unix(1000, 0)
	at := func(w Write, s float64) Write {
		w.Partition, w.At = Partition{topic, 0}, t0.Add(time.Duration(s*float64(time.Second)))
		return w
	}
	ws := []Write{at(write(1, 0, pa, true, 0), 0.5), at(probe(0, 1), 3), at(write(1, 1, pa, true, 2), 9.5)}
	fs := []FaultRecord{{Name: "pause-controller", Majority: true, Start: t0, Held: 10 * time.Second}}
	over := overGoal(fs, ws, 6000, nil)
	if fs[0].Unavailable != 6500*time.Millisecond || fs[0].WritersGap != 9*time.Second || len(over) != 0 {
		t.Fatalf("unavailable %v, writers' gap %v, over the goal %q", fs[0].Unavailable, fs[0].WritersGap, over)
	}
	// Without the probe the gap is 9 s, over the 7 s goal: the line names
	// the fault's number and when the gap began, to find it in the logs.
	ws = slices.Delete(ws, 1, 2)
	fs = append(fs, fs[0])
	over = overGoal(fs, ws, 6000, nil)
	t0s := t0.UTC().Format(stamp)
	want := []string{"1 pause-controller  at " + t0s + ": chaos-0 without an acknowledged write for 9.0s from " +
		t0.Add(500*time.Millisecond).UTC().Format(stamp)}
	if !slices.Equal(over[:1], want) || len(over) != 2 || !strings.HasPrefix(over[1], "2 pause-controller") {
		t.Fatalf("over the goal %q, want %q and fault 2", over, want)
	}

	// A gap that began before the fault (its first write was not
	// acknowledged until 9 s into it) runs from the fault's start, and the
	// line tells when the partition's last write before it was.
	ws = []Write{at(write(1, 0, pa, true, 0), -4), at(write(1, 1, pa, false, -1), 0.5), at(write(1, 2, pa, true, 1), 9)}
	over = overGoal(fs[:1], ws, 6000, nil)
	want = []string{"1 pause-controller  at " + t0s + ": chaos-0 without an acknowledged write for 9.0s from " + t0s +
		" (its last acknowledged write before the fault: " + t0.Add(-4*time.Second).UTC().Format(stamp) + ")"}
	if !slices.Equal(over, want) {
		t.Fatalf("over the goal %q, want %q", over, want)
	}
}
