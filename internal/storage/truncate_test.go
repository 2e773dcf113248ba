package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// truncLog makes t-0 with 10 batches of 5 records, 3 batches a segment
// (bases 0, 15, 30, 45), an index entry per batch, timestamps out of order
// and epochs 1 (offsets 0-14), 2 (15-29), 3 (30-44), 4 (45-49).
func truncLog(t *testing.T, m *Manager) *Log {
	t.Helper()
	b, _ := batch(0, "x", 5)
	cfg := DefaultLogConfig()
	cfg.SegmentBytes = int64(3 * len(b))
	cfg.IndexIntervalBytes = 1
	l, _ := m.Create(tp0, topic, cfg)
	for i := range 10 {
		b, h := batch(1000+int64(i*7%10)*10, fmt.Sprint(i), 5)
		if _, err := l.AppendAsLeader(b, h, t0, int32(i/3+1)); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// checkIndexes checks every segment's index files against memory, the
// time index against the segment's offsets, and the active segment's
// offset index, largest timestamp and index spacing against a rebuild
// from the log.
func checkIndexes(t *testing.T, l *Log) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.segs {
		if err := s.acquire(); err != nil {
			t.Fatal(err)
		}
		s.mu.Lock()
		ib, _ := os.ReadFile(s.path + ".index")
		tb, _ := os.ReadFile(s.path + ".timeindex")
		fi, ok1 := parseOffsetIndex(ib, s.size)
		ft, ok2 := parseTimeIndex(tb, s.next-s.base)
		if !ok1 || !ok2 || len(fi) != len(s.idx) || len(ft) != len(s.tidx) ||
			(len(fi) > 0 && !reflect.DeepEqual(fi, s.idx)) || (len(ft) > 0 && !reflect.DeepEqual(ft, s.tidx)) {
			t.Errorf("segment %d: index files %v %v differ from memory %v %v", s.base, fi, ft, s.idx, s.tidx)
		}
		for _, e := range s.tidx {
			if s.base+int64(e.rel) >= s.next {
				t.Errorf("segment %d: time entry %+v past next %d", s.base, e, s.next)
			}
		}
		if s.active {
			idx, maxTS, maxOff, since := s.idx, s.maxTS, s.maxTSOff, s.sinceIdx
			if _, next, err := s.rebuildLocked(false, s.size); err != nil || next != s.next {
				t.Errorf("rebuild: next %d, %v", next, err)
			}
			if len(idx) != len(s.idx) || (len(idx) > 0 && !reflect.DeepEqual(idx, s.idx)) ||
				maxTS != s.maxTS || maxOff != s.maxTSOff || since != s.sinceIdx {
				t.Errorf("segment %d: idx %v maxTS %d@%d since %d; rebuilt %v %d@%d %d",
					s.base, idx, maxTS, maxOff, since, s.idx, s.maxTS, s.maxTSOff, s.sinceIdx)
			}
		}
		s.mu.Unlock()
		s.release()
	}
}

// checkMaxTimestamp compares MaxTimestamp with the records.
func checkMaxTimestamp(t *testing.T, l *Log) {
	t.Helper()
	wantTS, wantOff := int64(-1), int64(-1)
	for _, r := range readAll(t, l, l.LogStartOffset()) {
		if r.Timestamp > wantTS {
			wantTS, wantOff = r.Timestamp, r.Offset
		}
	}
	if ts, off, err := l.MaxTimestamp(); err != nil || ts != wantTS || off != wantOff {
		t.Fatalf("MaxTimestamp = %d@%d %v, want %d@%d", ts, off, err, wantTS, wantOff)
	}
}

// TestTruncateTo: mid-segment, on batch and segment boundaries, across
// segments and inside the first segment; the log end, epochs, high
// watermark and indexes follow; an unclean restart finds the truncated log,
// appends continue at the new end and read back after another restart.
func TestTruncateTo(t *testing.T) {
	tests := []struct {
		name     string
		to, leo  int64
		latest   int32
		segments int
	}{
		{"straddling batch mid-segment", 37, 35, 3, 3},
		{"batch boundary mid-segment", 20, 20, 2, 2},
		{"straddling batch after an indexed one", 27, 25, 2, 2},
		{"last offset of an indexed batch", 29, 25, 2, 2},
		{"segment boundary", 45, 45, 3, 4},
		{"across segments", 16, 15, 1, 2},
		{"inside the first batch", 3, 0, -1, 1},
		{"to zero", 0, 0, -1, 1},
		{"at the end: no-op", 50, 50, 4, 4},
		{"past the end: no-op", 60, 50, 4, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			m := openManager(t, dir)
			l := truncLog(t, m)
			l.SetHighWatermark(48)
			before := readAll(t, l, 0)
			if err := l.TruncateTo(tc.to); err != nil {
				t.Fatal(err)
			}
			check := func(l *Log, leo int64) {
				t.Helper()
				if l.LogEndOffset() != leo || l.LogStartOffset() != 0 {
					t.Fatalf("LEO %d start %d, want %d 0", l.LogEndOffset(), l.LogStartOffset(), leo)
				}
				if e, ok := l.LatestEpoch(); (tc.latest < 0 && ok) || (tc.latest >= 0 && e != tc.latest) {
					t.Fatalf("latest epoch %d %v, want %d", e, ok, tc.latest)
				}
			}
			check(l, tc.leo)
			if hw := l.HighWatermark(); hw != min(48, tc.leo) {
				t.Fatalf("HW %d", hw)
			}
			if n := len(l.segs); n != tc.segments {
				t.Fatalf("%d segments, want %d", n, tc.segments)
			}
			if got := readAll(t, l, 0); !reflect.DeepEqual(values(got), values(before[:tc.leo])) {
				t.Fatalf("after truncate: %v", values(got))
			}
			checkMaxTimestamp(t, l)
			checkIndexes(t, l)
			m.crash()

			m = openManager(t, dir)
			l = m.Get(tp0)
			check(l, tc.leo)
			b, h := batch(2000, "y", 5)
			if _, err := l.AppendAsLeader(b, h, t0, 7); err != nil {
				t.Fatal(err)
			}
			if e, o := l.EndOffsetForEpoch(max(tc.latest, 0)); tc.latest >= 0 && (e != tc.latest || o != tc.leo) {
				t.Fatalf("EndOffsetForEpoch(%d) = %d %d", tc.latest, e, o)
			}
			m.Close()

			m = openManager(t, dir)
			defer m.Close()
			l = m.Get(tp0)
			got := readAll(t, l, 0)
			want := append(values(before[:tc.leo]), fmt.Sprintf("%d:y-0", tc.leo))
			if len(got) != int(tc.leo)+5 || !reflect.DeepEqual(values(got[:tc.leo+1]), want) {
				t.Fatalf("after truncate, crash, append, restart: %v", values(got))
			}
			if e, o := l.EndOffsetForEpoch(7); e != 7 || o != tc.leo+5 {
				t.Fatalf("EndOffsetForEpoch(7) = %d %d", e, o)
			}
		})
	}
}

// TestTruncateToUnloadedLog: a log not yet loaded loads and truncates.
func TestTruncateToUnloadedLog(t *testing.T) {
	dir := t.TempDir()
	m := openManager(t, dir)
	truncLog(t, m)
	m.Close()
	m = openManager(t, dir)
	defer m.Close()
	l := m.Get(tp0)
	if l.loaded.Load() {
		t.Fatal("loaded at open")
	}
	if err := l.TruncateTo(31); err != nil || l.LogEndOffset() != 30 {
		t.Fatalf("LEO %d, %v", l.LogEndOffset(), err)
	}
	if e, o := l.EndOffsetForEpoch(2); e != 2 || o != 30 {
		t.Fatalf("EndOffsetForEpoch(2) = %d %d", e, o)
	}
}

// TestTruncateFullyAndStartAt: the log restarts empty at the offset with
// no epochs and the high watermark there, and keeps that across restarts;
// a lazy log restarted at 0 stays lazy, elsewhere it is materialized.
func TestTruncateFullyAndStartAt(t *testing.T) {
	dir := t.TempDir()
	m := openManager(t, dir)
	l := truncLog(t, m)
	l.SetHighWatermark(40)
	if err := l.TruncateFullyAndStartAt(-1); err == nil {
		t.Fatal("negative offset accepted")
	}
	if err := l.TruncateFullyAndStartAt(100); err != nil {
		t.Fatal(err)
	}
	if l.LogStartOffset() != 100 || l.LogEndOffset() != 100 || l.HighWatermark() != 100 {
		t.Fatalf("start %d end %d HW %d", l.LogStartOffset(), l.LogEndOffset(), l.HighWatermark())
	}
	if e, ok := l.LatestEpoch(); ok {
		t.Fatalf("epoch %d left", e)
	}
	if got := epochFile(t, dir); got != "0\n0\n" {
		t.Fatalf("checkpoint %q", got)
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "t-0", "*.log"))
	if len(logs) != 1 || filepath.Base(logs[0]) != fmt.Sprintf("%020d.log", 100) {
		t.Fatalf("segments %v", logs)
	}
	b, h := epochBatch(100, 3, "z", 5)
	if _, err := l.AppendAsFollower(b, h); err != nil {
		t.Fatal(err)
	}
	m.crash()
	m = openManager(t, dir)
	l = m.Get(tp0)
	if got := readAll(t, l, 100); l.LogStartOffset() != 100 || len(got) != 5 || got[0].Offset != 100 {
		t.Fatalf("after restart: start %d, %v", l.LogStartOffset(), values(got))
	}
	if e, o := l.EndOffsetForEpoch(3); e != 3 || o != 105 {
		t.Fatalf("EndOffsetForEpoch(3) = %d %d", e, o)
	}

	tp1 := kafka.TopicPartition{Topic: "t", Partition: 1}
	lazy, _ := m.Create(tp1, topic, DefaultLogConfig())
	lazy.AssignEpochStartOffset(2, 0)
	if err := lazy.TruncateFullyAndStartAt(0); err != nil || !lazy.lazy.Load() {
		t.Fatalf("lazy %v, %v", lazy.lazy.Load(), err)
	}
	if e, ok := lazy.LatestEpoch(); ok {
		t.Fatalf("lazy log kept epoch %d", e)
	}
	if _, err := os.Stat(filepath.Join(dir, "t-1")); !os.IsNotExist(err) {
		t.Fatalf("lazy log got a directory: %v", err)
	}
	if err := lazy.TruncateFullyAndStartAt(50); err != nil || lazy.lazy.Load() {
		t.Fatalf("lazy %v, %v", lazy.lazy.Load(), err)
	}
	if lazy.LogStartOffset() != 50 || lazy.LogEndOffset() != 50 || lazy.HighWatermark() != 50 {
		t.Fatalf("start %d end %d HW %d", lazy.LogStartOffset(), lazy.LogEndOffset(), lazy.HighWatermark())
	}
	b, h = epochBatch(50, 1, "w", 1)
	if _, err := lazy.AppendAsFollower(b, h); err != nil {
		t.Fatal(err)
	}
	m.Close()
	m = openManager(t, dir)
	defer m.Close()
	if l := m.Get(tp1); l == nil || l.LogStartOffset() != 50 || l.LogEndOffset() != 51 || l.HighWatermark() != 50 {
		t.Fatalf("t-1 after restart: %v", l)
	}
}
