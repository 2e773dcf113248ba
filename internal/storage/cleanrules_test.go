package storage

import (
	"math"
	"slices"
	"testing"
	"time"
)

func TestCleanableOffsets(t *testing.T) {
	segs := []segStat{ // three non-active segments of 100 bytes; active at 30
		{base: 0, end: 10, size: 100, largestTS: 1000, firstBatchTS: 900},
		{base: 10, end: 20, size: 100, largestTS: 2000, firstBatchTS: 1500},
		{base: 20, end: 30, size: 100, largestTS: 3000, firstBatchTS: 2500},
	}
	cfg := DefaultLogConfig()
	lag := func(min, max int64) LogConfig {
		c := cfg
		c.MinCompactionLagMs, c.MaxCompactionLagMs = min, max
		return c
	}
	for _, tc := range []struct {
		name                  string
		checkpoint, hw, nowMs int64
		cfg                   LogConfig
		horizon               int64
		want                  cleanable
	}{
		{"never cleaned", -1, 30, 5000, cfg, 0, cleanable{0, 30, 0, 300, false, false}},
		{"checkpoint in the middle", 10, 30, 5000, cfg, 0, cleanable{10, 30, 100, 200, false, false}},
		{"checkpoint past the active base", 99, 30, 5000, cfg, 0, cleanable{30, 30, 300, 0, false, false}},
		{"high watermark in the last", -1, 25, 5000, cfg, 0, cleanable{0, 20, 0, 200, false, false}},
		{"open transaction in the second (LSO 15)", -1, 15, 5000, cfg, 0, cleanable{0, 10, 0, 100, false, false}},
		{"min lag keeps the newest", -1, 30, 3500, lag(1000, math.MaxInt64), 0, cleanable{0, 20, 0, 200, false, false}},
		{"max lag forces", 10, 30, 5000, lag(0, 3000), 0, cleanable{10, 30, 100, 200, true, false}},
		{"max lag not reached", 10, 30, 4000, lag(0, 3000), 0, cleanable{10, 30, 100, 200, false, false}},
		{"tombstones due", 30, 30, 5000, cfg, 5000, cleanable{30, 30, 300, 0, false, true}},
		{"tombstones not due yet", 30, 30, 4999, cfg, 5000, cleanable{30, 30, 300, 0, false, false}},
	} {
		if got := cleanableOffsets(segs, 30, tc.checkpoint, tc.hw, tc.horizon, tc.cfg, tc.nowMs); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestFilthiest(t *testing.T) {
	cfg := DefaultLogConfig() // min ratio 0.5
	cands := []cleanable{{cleanBytes: 60, dirtyBytes: 40}, {cleanBytes: 30, dirtyBytes: 70}, {cleanBytes: 20, dirtyBytes: 80}, {cleanBytes: 90, dirtyBytes: 10, forced: true}}
	if got := filthiest(cands, []LogConfig{cfg, cfg, cfg, cfg}); got != 2 {
		t.Fatalf("filthiest %d, want 2", got)
	}
	if got := filthiest(cands[:1], []LogConfig{cfg}); got != -1 {
		t.Fatalf("ratio 0.4 under 0.5 picked: %d", got)
	}
	if got := filthiest(cands[3:], []LogConfig{cfg}); got != 0 {
		t.Fatalf("forced log not picked: %d", got)
	}
}

func TestGroupSegments(t *testing.T) {
	segs := []segStat{{base: 0, end: 10, size: 40, indexBytes: 8}, {base: 10, end: 20, size: 40, indexBytes: 8},
		{base: 20, end: 30, size: 40, indexBytes: 8}, {base: 30, end: 40, size: 0}, {base: 40, end: 50, size: 90}}
	for _, tc := range []struct {
		maxBytes, maxIndex int64
		want               [][2]int
	}{
		{100, 1000, [][2]int{{0, 2}, {2, 4}, {4, 5}}},
		{1000, 16, [][2]int{{0, 2}, {2, 5}}},
		{10, 1000, [][2]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}}},
	} {
		if got := groupSegments(segs, tc.maxBytes, tc.maxIndex); !slices.Equal(got, tc.want) {
			t.Errorf("max %d/%d: %v, want %v", tc.maxBytes, tc.maxIndex, got, tc.want)
		}
	}
	wide := []segStat{{base: 0, end: 10, size: 1}, {base: math.MaxInt32, end: math.MaxInt32 + 10, size: 1}}
	if got := groupSegments(wide, 100, 100); len(got) != 2 {
		t.Errorf("offsets beyond int32 of the base grouped: %v", got)
	}
}

func TestKeepRecord(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		hasKey, tombstone       bool
		offset, mapped, horizon int64
		hasHorizon              bool
		nowMs                   int64
		want                    bool
	}{
		{"no key", false, false, 5, -1, 0, false, 0, false},
		{"latest", true, false, 5, 5, 0, false, 0, true},
		{"not mapped", true, false, 5, -1, 0, false, 0, true},
		{"superseded", true, false, 5, 9, 0, false, 0, false},
		{"tombstone, no horizon yet", true, true, 5, 5, 0, false, 100, true},
		{"tombstone before its horizon", true, true, 5, 5, 200, true, 100, true},
		{"tombstone past its horizon", true, true, 5, 5, 200, true, 200, false},
		{"superseded tombstone", true, true, 5, 6, 0, false, 0, false},
	} {
		if got := keepRecord(tc.hasKey, tc.tombstone, tc.offset, tc.mapped, tc.horizon, tc.hasHorizon, tc.nowMs); got != tc.want {
			t.Errorf("%s: %v", tc.name, got)
		}
	}
}

func TestThrottleDelay(t *testing.T) {
	if d := throttleDelay(2e6, 500*time.Millisecond, 1e6); d != 1500*time.Millisecond {
		t.Errorf("2 MB in 0.5 s at 1 MB/s: sleep %v, want 1.5s", d)
	}
	if d := throttleDelay(1e5, time.Second, 1e6); d != 0 {
		t.Errorf("under the rate: sleep %v", d)
	}
}
