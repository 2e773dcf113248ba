package storage

import (
	"reflect"
	"testing"
)

func cacheOf(es ...epochEntry) epochCache { return epochCache{es: es} }

// TestEpochCacheEndOffsetFor is Kafka's LeaderEpochFileCacheTest for
// endOffsetFor, KIP-279 cases included: an epoch the cache lacks answers
// with the largest epoch below it and where the next one starts.
func TestEpochCacheEndOffsetFor(t *testing.T) {
	kip279 := cacheOf(epochEntry{0, 10}, epochEntry{2, 13}, epochEntry{4, 17})
	tests := []struct {
		name      string
		c         epochCache
		req       int32
		leo       int64
		wantEpoch int32
		wantEnd   int64
	}{
		{"empty cache", cacheOf(), 0, 0, -1, -1},
		{"empty cache, undefined epoch", cacheOf(), -1, 0, -1, -1},
		{"undefined epoch", kip279, -1, 20, -1, -1},
		{"latest epoch: log end offset", kip279, 4, 20, 4, 20},
		{"epoch with a successor", kip279, 0, 20, 0, 13},
		{"KIP-279: missing epoch answers the one below", kip279, 1, 20, 0, 13},
		{"KIP-279: missing epoch between 2 and 4", kip279, 3, 20, 2, 17},
		{"exact middle epoch", kip279, 2, 20, 2, 17},
		{"newer than latest: unknown", kip279, 5, 20, -1, -1},
		{"older than first: its own epoch, first start", cacheOf(epochEntry{5, 11}), 4, 20, 4, 11},
		{"leaders changing many times", cacheOf(epochEntry{0, 0}, epochEntry{1, 7}, epochEntry{2, 8}), 1, 9, 1, 8},
	}
	for _, tc := range tests {
		e, o := tc.c.endOffsetFor(tc.req, tc.leo)
		if e != tc.wantEpoch || o != tc.wantEnd {
			t.Errorf("%s: endOffsetFor(%d, %d) = (%d, %d), want (%d, %d)", tc.name, tc.req, tc.leo, e, o, tc.wantEpoch, tc.wantEnd)
		}
	}
}

func TestEpochCacheAssignAndTruncate(t *testing.T) {
	base := func() epochCache { return cacheOf(epochEntry{2, 6}, epochEntry{3, 8}, epochEntry{4, 11}) }
	tests := []struct {
		name    string
		c       epochCache
		op      func(*epochCache) bool
		changed bool
		want    []epochEntry
	}{
		{"assign to empty", cacheOf(), func(c *epochCache) bool { return c.assign(2, 6) }, true, []epochEntry{{2, 6}}},
		{"same epoch again", cacheOf(epochEntry{2, 6}), func(c *epochCache) bool { return c.assign(2, 6) }, false, []epochEntry{{2, 6}}},
		{"assigned epoch keeps its start", cacheOf(epochEntry{2, 6}), func(c *epochCache) bool { return c.assign(2, 10) }, false, []epochEntry{{2, 6}}},
		{"older epoch ignored", base(), func(c *epochCache) bool { return c.assign(3, 20) }, false, base().es},
		{"negative epoch ignored", base(), func(c *epochCache) bool { return c.assign(-1, 20) }, false, base().es},
		{"newer epoch appended", base(), func(c *epochCache) bool { return c.assign(7, 20) }, true,
			[]epochEntry{{2, 6}, {3, 8}, {4, 11}, {7, 20}}},
		{"epoch that wrote nothing gives way", base(), func(c *epochCache) bool { return c.assign(5, 11) }, true,
			[]epochEntry{{2, 6}, {3, 8}, {5, 11}}},
		{"start offsets kept monotonic", base(), func(c *epochCache) bool { return c.assign(5, 7) }, true,
			[]epochEntry{{2, 6}, {5, 7}}},
		{"truncateFromEnd on an epoch boundary", base(), func(c *epochCache) bool { return c.truncateFromEnd(8) }, true,
			[]epochEntry{{2, 6}}},
		{"truncateFromEnd inside the last epoch", base(), func(c *epochCache) bool { return c.truncateFromEnd(12) }, false, base().es},
		{"truncateFromEnd between epochs", base(), func(c *epochCache) bool { return c.truncateFromEnd(9) }, true,
			[]epochEntry{{2, 6}, {3, 8}}},
		{"truncateFromEnd below all", base(), func(c *epochCache) bool { return c.truncateFromEnd(0) }, true, []epochEntry{}},
		{"truncateFromEnd undefined", base(), func(c *epochCache) bool { return c.truncateFromEnd(-1) }, false, base().es},
		{"truncateFromStart between epochs", base(), func(c *epochCache) bool { return c.truncateFromStart(9) }, true,
			[]epochEntry{{3, 9}, {4, 11}}},
		{"truncateFromStart on a boundary", base(), func(c *epochCache) bool { return c.truncateFromStart(8) }, true,
			[]epochEntry{{3, 8}, {4, 11}}},
		{"truncateFromStart past all starts", base(), func(c *epochCache) bool { return c.truncateFromStart(15) }, true,
			[]epochEntry{{4, 15}}},
		{"truncateFromStart at the first start", base(), func(c *epochCache) bool { return c.truncateFromStart(6) }, false, base().es},
		{"truncateFromStart below", base(), func(c *epochCache) bool { return c.truncateFromStart(3) }, false, base().es},
		{"clear", base(), func(c *epochCache) bool { return c.clear() }, true, []epochEntry{}},
	}
	for _, tc := range tests {
		c := tc.c
		changed := tc.op(&c)
		if changed != tc.changed || len(c.es) != len(tc.want) || (len(c.es) > 0 && !reflect.DeepEqual(c.es, tc.want)) {
			t.Errorf("%s: changed %v, entries %v; want %v, %v", tc.name, changed, c.es, tc.changed, tc.want)
		}
	}
}

func TestEpochCheckpointFormat(t *testing.T) {
	es := []epochEntry{{0, 0}, {3, 17}, {9, 1 << 40}}
	enc := encodeEpochs(es)
	if string(enc) != "0\n3\n0 0\n3 17\n9 1099511627776\n" {
		t.Fatalf("%q", enc)
	}
	got, err := parseEpochs(enc)
	if err != nil || !reflect.DeepEqual(got, es) {
		t.Fatalf("%v %v", got, err)
	}
	if got, err := parseEpochs([]byte("0\n0\n")); err != nil || len(got) != 0 {
		t.Fatalf("empty: %v %v", got, err)
	}
	for _, bad := range []string{"", "1\n0\n", "0\n2\n1 0\n", "0\n1\n1 0\n2 5\n", "0\n1\nx 0\n", "0\n1\n-1 0\n",
		"0\n2\n3 0\n2 5\n", "0\n2\n1 9\n2 5\n", "0\n1\n1 2 3\n"} {
		if _, err := parseEpochs([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

// A copy of the cache taken before an assignment still holds what the cache
// held: assign writes over no entry it keeps, whether it only appends,
// drops entries first (an epoch that wrote nothing) or changes nothing,
// and with room in the array or not.
func TestEpochAssignLeavesCopies(t *testing.T) {
	base := []epochEntry{{1, 0}, {2, 10}, {3, 20}}
	for _, room := range []int{0, 4} {
		for _, a := range []epochEntry{{4, 30}, {4, 20}, {4, 15}, {4, 0}, {3, 40}} {
			c := epochCache{es: append(make([]epochEntry, 0, len(base)+room), base...)}
			saved := c
			c.assign(a.epoch, a.start)
			if !reflect.DeepEqual(saved.es, base) {
				t.Errorf("room %d, assign %v: the copy holds %v, want %v", room, a, saved.es, base)
			}
		}
	}
}
