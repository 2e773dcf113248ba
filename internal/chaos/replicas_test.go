package chaos

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// batch is a 61-byte record batch as batchesBelow reads one: base offset,
// length, one record (last offset delta 0), and tag in its body.
func batch(base int64, tag byte) []byte {
	b := make([]byte, 61)
	binary.BigEndian.PutUint64(b[0:8], uint64(base))
	binary.BigEndian.PutUint32(b[8:12], 61-12)
	b[60] = tag
	return b
}

// copies writes each broker's copy of p (its batches' tags, one a
// batch from offset 0) into a log dir of its own.
func copies(t *testing.T, p Partition, tags map[string]string) map[string]string {
	dirs := map[string]string{}
	for name, ts := range tags {
		dir := filepath.Join(t.TempDir(), name)
		if err := os.MkdirAll(filepath.Join(dir, p.String()), 0o755); err != nil {
			t.Fatal(err)
		}
		var seg []byte
		for i, tag := range []byte(ts) {
			seg = append(seg, batch(int64(i), tag)...)
		}
		if err := os.WriteFile(filepath.Join(dir, p.String(), "00000000000000000000.log"), seg, 0o644); err != nil {
			t.Fatal(err)
		}
		dirs[name] = dir
	}
	return dirs
}

func TestCompareReplicas(t *testing.T) {
	p := Partition{"chaos-moves", 0}
	hw := map[Partition]int64{p: 3} // offsets 0-2 are committed
	for _, tc := range []struct {
		name          string
		tags          map[string]string
		isr           map[Partition][]string
		diffs         int
		outside       []string
		diffMentioned string
	}{
		{name: "in sync", tags: map[string]string{"b1": "aaax", "b2": "aaay"}, isr: map[Partition][]string{p: {"b1", "b2"}}},
		{name: "a lagging ISR member is a prefix", tags: map[string]string{"b1": "aaa", "b2": "aa"}, isr: map[Partition][]string{p: {"b1", "b2"}}},
		{name: "ISR members diverge", tags: map[string]string{"b1": "aab", "b2": "aac"}, isr: map[Partition][]string{p: {"b1", "b2"}},
			diffs: 1, diffMentioned: "b1 and b2 differ below the high watermark 3"},
		{name: "a stray copy with its own tail", tags: map[string]string{"b1": "ab", "b2": "aaa", "b3": "aaa"},
			isr:     map[Partition][]string{p: {"b2", "b3"}},
			outside: []string{"chaos-moves-0 on b1 (ISR b2,b3): differs from b2's below the high watermark at byte 121 (183 and 122 bytes)"}},
		{name: "a stray copy that agrees", tags: map[string]string{"b1": "aa", "b2": "aaa", "b3": "aaa"},
			isr: map[Partition][]string{p: {"b2", "b3"}}, outside: []string{"chaos-moves-0 on b1 (ISR b2,b3)"}},
		{name: "the stray compared when no ISR is known", tags: map[string]string{"b1": "ab", "b2": "aaa", "b3": "aaa"},
			diffs: 2, diffMentioned: "b1 and b3 differ"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			diffs, outside := CompareReplicas(copies(t, p, tc.tags), hw, tc.isr)
			if len(diffs) != tc.diffs {
				t.Fatalf("diffs %q, want %d", diffs, tc.diffs)
			}
			if tc.diffMentioned != "" && !strings.Contains(strings.Join(diffs, "\n"), tc.diffMentioned) {
				t.Fatalf("diffs %q lack %q", diffs, tc.diffMentioned)
			}
			if !slices.Equal(outside, tc.outside) {
				t.Fatalf("outside %q, want %q", outside, tc.outside)
			}
		})
	}
}
