package storage

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/record"
)

// TestRetentionLeavesIdleLogsUnloaded: after a restart, a retention pass
// loads only the logs that have segments to delete, judged from their files.
func TestRetentionLeavesIdleLogsUnloaded(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	old := now.Add(-8 * 24 * time.Hour).UnixMilli() // past the default 7 days
	recent := now.Add(-time.Hour).UnixMilli()
	b, _ := batch(0, "x", 5)
	small := DefaultLogConfig()
	small.SegmentBytes = int64(2 * len(b)) // two batches per segment
	const idle = 200
	m := openManager(t, dir)
	for i := range idle {
		l, _ := m.Create(kafka.TopicPartition{Topic: "idle", Partition: int32(i)}, topic, small)
		for j := range 1 + i%5 { // up to 3 rolled segments, all recent
			mustAppend(t, l, recent, fmt.Sprint(j), 5)
		}
	}
	tpOld, tpBig := kafka.TopicPartition{Topic: "old", Partition: 0}, kafka.TopicPartition{Topic: "big", Partition: 0}
	l, _ := m.Create(tpOld, topic, small)
	for j := range 6 {
		mustAppend(t, l, old+int64(j), fmt.Sprint(j), 5)
	}
	commitAll(l)
	l, _ = m.Create(tpBig, topic, small)
	for j := range 6 {
		mustAppend(t, l, recent, fmt.Sprint(j), 5)
	}
	commitAll(l)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}

	m = openManager(t, dir)
	defer m.Close()
	bytesCfg := DefaultLogConfig()
	bytesCfg.RetentionBytes = int64(2 * len(b))
	m.Get(tpBig).SetConfig(bytesCfg) // does not load
	m.RunOnce(now)
	for i := range idle {
		if m.Get(kafka.TopicPartition{Topic: "idle", Partition: int32(i)}).loaded.Load() {
			t.Fatalf("idle-%d loaded by a retention pass with nothing to delete", i)
		}
	}
	if got := m.Get(tpOld).LogStartOffset(); got != 30 {
		t.Fatalf("old: log start %d, want 30 (all expired)", got)
	}
	if got := m.Get(tpBig).LogStartOffset(); got != 20 {
		t.Fatalf("big: log start %d, want 20 (last segment kept by retention.bytes)", got)
	}
}

// TestRetentionDueAgreesWithLoad: for a log on disk, the look at its files
// says "due" whenever loading it and applying retention deletes something.
func TestRetentionDueAgreesWithLoad(t *testing.T) {
	now := time.Now()
	b, _ := batch(0, "x", 5)
	tests := []struct {
		name      string
		tsAgo     []time.Duration // one batch each, two batches per segment
		retention func(*LogConfig)
		due       bool
	}{
		{"all recent", []time.Duration{time.Hour, time.Hour, time.Hour}, func(*LogConfig) {}, false},
		{"first segment old", []time.Duration{9 * time.Hour, 9 * time.Hour, time.Hour}, func(c *LogConfig) { c.RetentionMs = 3600_000 * 2 }, true},
		{"only active old", []time.Duration{9 * time.Hour}, func(c *LogConfig) { c.RetentionMs = 3600_000 * 2 }, true}, // no time index entry, mtime recent: headers decide
		{"size within", []time.Duration{0, 0, 0}, func(c *LogConfig) { c.RetentionBytes = int64(3 * len(b)) }, false},
		{"size over", []time.Duration{0, 0, 0, 0, 0}, func(c *LogConfig) { c.RetentionBytes = int64(3 * len(b)) }, true},
		{"forever", []time.Duration{900 * time.Hour, 900 * time.Hour, 0}, func(c *LogConfig) { c.RetentionMs = -1 }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := DefaultLogConfig()
			cfg.SegmentBytes = int64(2 * len(b))
			m := openManager(t, dir)
			l, _ := m.Create(tp0, topic, cfg)
			for i, ago := range tc.tsAgo {
				mustAppend(t, l, now.Add(-ago).UnixMilli(), fmt.Sprint(i), 5)
			}
			commitAll(l)
			m.Close()
			tc.retention(&cfg)
			m = openManager(t, dir)
			defer m.Close()
			l = m.Get(tp0)
			l.SetConfig(cfg)
			if got := l.retentionDue(now.UnixMilli()); got != tc.due {
				t.Fatalf("retentionDue %v, want %v", got, tc.due)
			}
			if l.loaded.Load() {
				t.Fatal("retentionDue loaded the log")
			}
			l.enforceRetention(now)
			if deleted := l.LogStartOffset() > 0; deleted != tc.due {
				t.Fatalf("loaded retention deleted=%v, retentionDue said %v", deleted, tc.due)
			}
		})
	}
}

// TestReadDuringRetention: readers racing with appends and retention get
// their records intact or ErrOffsetOutOfRange, never garbage. Run with
// -race.
func TestReadDuringRetention(t *testing.T) {
	m, err := OpenManager(ManagerConfig{Dirs: []string{t.TempDir()}, MaxOpenFiles: 6})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	b, _ := batch(0, "x", 4)
	cfg := DefaultLogConfig()
	cfg.SegmentBytes = int64(3 * len(b))
	cfg.RetentionBytes = int64(6 * len(b))
	l, _ := m.Create(tp0, topic, cfg)
	const appends = 400
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() { // the only writer: batch values are "<base>-<i>"
		defer wg.Done()
		defer close(stop)
		for range appends {
			mustAppendTagged(t, l)
		}
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				m.RunOnce(time.Now())
			}
		}
	}()
	var outOfRange sync.Map
	for r := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				leo := l.LogEndOffset()
				off := max(leo-int64(i*7+r*13)%40, 0)
				res, err := l.Read(off, 1<<62, 1<<20, true)
				if errors.Is(err, ErrOffsetOutOfRange) {
					outOfRange.Store(r, true)
					continue
				}
				if err != nil {
					t.Errorf("read %d: %v", off, err)
					return
				}
				if err := checkTagged(res.Records, off); err != nil {
					t.Errorf("read %d: %v", off, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if start := l.LogStartOffset(); start == 0 {
		t.Fatal("retention deleted nothing")
	}
}

func mustAppendTagged(t *testing.T, l *Log) {
	b, h := batch(time.Now().UnixMilli(), strconv.FormatInt(l.LogEndOffset(), 10), 4)
	if _, err := l.Append(b, h, time.Now()); err != nil {
		t.Error(err)
	}
	commitAll(l)
}

// TestRetentionStopsAtHighWatermark: expired segments reaching above the
// high watermark stay until the high watermark passes them (a follower may
// still fetch them).
func TestRetentionStopsAtHighWatermark(t *testing.T) {
	b, _ := batch(0, "x", 5)
	m := openManager(t, t.TempDir())
	defer m.Close()
	cfg := DefaultLogConfig()
	cfg.SegmentBytes = int64(2 * len(b)) // two batches per segment: bases 0, 10, 20, 30, 40
	cfg.RetentionMs = 1000
	l, _ := m.Create(tp0, topic, cfg)
	for i := range 10 {
		mustAppend(t, l, 1000+int64(i), fmt.Sprint(i), 5)
	}
	for _, step := range []struct{ hw, wantStart int64 }{
		{0, 0},   // nothing replicated: nothing goes
		{15, 10}, // [0,10) is below the HW; [10,20) reaches above it
		{20, 20},
		{49, 40}, // the active segment [40,50) reaches the LEO
		{50, 50}, // all replicated: all go, the active segment rolled
	} {
		l.SetHighWatermark(step.hw)
		m.RunOnce(time.UnixMilli(100_000))
		if got := l.LogStartOffset(); got != step.wantStart {
			t.Fatalf("hw %d: log start %d, want %d", step.hw, got, step.wantStart)
		}
	}
}

// checkTagged validates batches read at off: whole, CRC-valid, the first
// holding off, every record valued "<base>-<i>" with base+i its offset.
func checkTagged(recs []byte, off int64) error {
	if len(recs) == 0 {
		return nil // off was the log end
	}
	hs, err := record.Validate(recs, 1<<30)
	if err != nil {
		return err
	}
	if hs[0].BaseOffset > off || hs[0].LastOffset() < off {
		return fmt.Errorf("first batch [%d, %d]", hs[0].BaseOffset, hs[0].LastOffset())
	}
	for p := 0; p < len(recs); {
		h, _ := record.ReadHeader(recs[p:])
		err := record.Records(recs[p:p+h.Size()], func(r record.Record) bool {
			base, i, ok := strings.Cut(string(r.Value), "-")
			bn, err1 := strconv.ParseInt(base, 10, 64)
			in, err2 := strconv.ParseInt(i, 10, 64)
			if !ok || err1 != nil || err2 != nil || bn+in != r.Offset {
				err = fmt.Errorf("record %d holds %q", r.Offset, r.Value)
			}
			return err == nil
		})
		if err != nil {
			return err
		}
		p += h.Size()
	}
	return nil
}

// TestRetentionSparesCompactOnlyLog: retention by time deletes segments
// only under the delete cleanup policy (Kafka's deleteOldSegments); a
// compact-only log keeps them, and compact,delete deletes.
func TestRetentionSparesCompactOnlyLog(t *testing.T) {
	m := openManager(t, t.TempDir())
	defer m.Close()
	b, _ := batch(0, "x", 5)
	cfg := DefaultLogConfig()
	cfg.SegmentBytes, cfg.RetentionMs = int64(len(b)), 1
	l, _ := m.Create(tp0, topic, cfg)
	for j := range 4 { // keyless records: written before the policy becomes compact
		mustAppend(t, l, t0.UnixMilli()-10_000, fmt.Sprint(j), 5)
	}
	commitAll(l)
	cfg.Compact, cfg.NoDelete = true, true
	l.SetConfig(cfg)
	m.RunOnce(t0)
	if got := l.LogStartOffset(); got != 0 {
		t.Fatalf("compact-only log start %d after retention, want 0", got)
	}
	cfg.NoDelete = false
	l.SetConfig(cfg)
	m.RunOnce(t0)
	if got := l.LogStartOffset(); got == 0 {
		t.Fatal("compact,delete log kept its expired segments")
	}
}
