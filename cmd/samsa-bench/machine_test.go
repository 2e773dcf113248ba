package main

import (
	"testing"
	"time"
)

func TestSummarizeGaps(t *testing.T) {
	if s := summarizeGaps(nil); s.n != 0 || s.String() != "none" {
		t.Fatalf("no gaps: %+v %q", s, s)
	}
	us := time.Microsecond
	var gaps []time.Duration
	for i := range 200 { // 100 µs .. 299 µs
		gaps = append(gaps, time.Duration(100+i)*us)
	}
	gaps = append(gaps, 4*time.Millisecond)
	s := summarizeGaps(gaps)
	if s.n != 201 || s.longest != 4*time.Millisecond || s.over1ms != 1 {
		t.Fatalf("got %+v, want 201 gaps, one of them over 1 ms, the longest 4ms", s)
	}
	if want := (100+299)*100*us + 4*time.Millisecond; s.total != want {
		t.Fatalf("total %v, want %v", s.total, want)
	}
}

func TestPageCacheWrites(t *testing.T) {
	fresh, again, err := pageCacheWrites(t.TempDir(), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if fresh <= 0 || again <= 0 {
		t.Fatalf("rates %v, %v GB/s", fresh, again)
	}
}
