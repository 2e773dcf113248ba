package storage

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/samsa-kafka/samsa/internal/record/recordtest"
)

// TestSegmentMsAcrossReopen: after a restart the active segment's roll clock
// is its first batch's max timestamp (or, without one, the .log mtime), so
// segment.ms still rolls it.
func TestSegmentMsAcrossReopen(t *testing.T) {
	const hour = int64(3600_000)
	base := time.Now().Add(-10 * time.Hour).UnixMilli()
	tests := []struct {
		name     string
		firstTS  int64         // -1: the first batch has no timestamp
		mtimeAgo time.Duration // applied to the .log file when firstTS is -1
		nextTS   int64
		wantSegs int
	}{
		{"first batch older than segment.ms", base, 0, base + 2*hour, 2},
		{"first batch within segment.ms", base, 0, base + hour/2, 1},
		{"no timestamp, old mtime", -1, 2 * time.Hour, base, 2},
		{"no timestamp, recent mtime", -1, time.Minute, base, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := DefaultLogConfig()
			cfg.SegmentMs = hour
			m := openManager(t, dir)
			l, _ := m.Create(tp0, topic, cfg)
			b := recordtest.Batch(tc.firstTS, recordtest.None, recordtest.Rec{Value: []byte("first")})
			h, err := record.Validate(b, 1<<30)
			if err != nil {
				t.Fatal(err)
			}
			now := time.UnixMilli(max(tc.firstTS, base))
			if _, err := l.Append(b, h, now); err != nil {
				t.Fatal(err)
			}
			if err := m.Close(); err != nil {
				t.Fatal(err)
			}
			if tc.firstTS < 0 {
				mt := time.Now().Add(-tc.mtimeAgo)
				if err := os.Chtimes(filepath.Join(dir, "t-0", "00000000000000000000.log"), mt, mt); err != nil {
					t.Fatal(err)
				}
			}
			m = openManager(t, dir)
			defer m.Close()
			l = m.Get(tp0)
			l.SetConfig(cfg)
			b, h = batch(tc.nextTS, "next", 1)
			// The append's wall clock is the record time when there is one,
			// else now: the mtime cases measure against the real clock.
			appendNow := time.UnixMilli(tc.nextTS)
			if tc.firstTS < 0 {
				appendNow = time.Now()
			}
			if _, err := l.Append(b, h, appendNow); err != nil {
				t.Fatal(err)
			}
			l.mu.RLock()
			n := len(l.segs)
			l.mu.RUnlock()
			if n != tc.wantSegs {
				t.Fatalf("%d segments, want %d", n, tc.wantSegs)
			}
		})
	}
}
