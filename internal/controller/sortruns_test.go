package controller

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// sortRuns sorts whatever it is given: sorted runs (merged), many runs
// (sorted outright), repeats and edge sizes, and keeps repeats.
func TestSortRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 500 {
		n := rng.IntN(60)
		runs := 1 + rng.IntN(12)
		var s []int
		for r := range runs {
			run := make([]int, n/runs+r%2)
			for i := range run {
				run[i] = rng.IntN(40)
			}
			slices.Sort(run)
			s = append(s, run...)
		}
		want := slices.Clone(s)
		slices.Sort(want)
		sortRuns(s, cmp.Compare[int])
		if !slices.Equal(s, want) {
			t.Fatalf("trial %d: got %v, want %v", trial, s, want)
		}
	}
}

// tpList gives each partition once, in topic then partition order, with
// its values folded, however the partitions came.
func TestTPList(t *testing.T) {
	var l tpList[bool]
	for _, e := range []struct {
		topic string
		p     int32
		v     bool
	}{{"b", 2, false}, {"b", 0, false}, {"a", 5, false}, {"b", 2, true}, {"a", 1, false}, {"b", 0, false}, {"a", 5, false}} {
		l.add(TP{Topic: e.topic, Partition: e.p}, e.v)
	}
	if l.len() != 7 {
		t.Fatalf("len %d before folding, want 7", l.len())
	}
	list := func() []string {
		var got []string
		l.each(or, func(tp TP, v bool) { got = append(got, fmt.Sprintf("%s-%d:%v", tp.Topic, tp.Partition, v)) })
		return got
	}
	want := []string{"a-1:false", "a-5:false", "b-0:false", "b-2:true"}
	if got := list(); !slices.Equal(got, want) || l.len() != 4 || len(l.tps(or)) != 4 {
		t.Fatalf("got %v (len %d), want %v", got, l.len(), want)
	}
	// Adding to a folded list, a new topic included, folds again.
	l.add(TP{Topic: "b", Partition: 1}, true)
	l.add(TP{Topic: "b", Partition: 0}, true)
	l.add(TP{Topic: "0", Partition: 9}, false)
	want = []string{"0-9:false", "a-1:false", "a-5:false", "b-0:true", "b-1:true", "b-2:true"}
	if got := list(); !slices.Equal(got, want) || l.len() != 6 {
		t.Fatalf("after more adds: got %v (len %d), want %v", got, l.len(), want)
	}
}

// sameAs compares entries, whatever order they came in.
func TestTPListSameAs(t *testing.T) {
	var a, b, c tpList[bool]
	for _, p := range []int32{3, 1, 2} {
		a.add(TP{Topic: "t", Partition: p}, p == 2)
		c.add(TP{Topic: "t", Partition: p}, false)
	}
	for _, p := range []int32{1, 2, 3} {
		b.add(TP{Topic: "t", Partition: p}, p == 2)
	}
	eq := func(x, y bool) bool { return x == y }
	if !a.sameAs(&b, or, eq) || a.sameAs(&c, or, eq) {
		t.Fatal("sameAs")
	}
	b.add(TP{Topic: "u", Partition: 0}, false)
	if a.sameAs(&b, or, eq) {
		t.Fatal("sameAs with another topic")
	}
}
