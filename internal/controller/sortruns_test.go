package controller

import (
	"cmp"
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
