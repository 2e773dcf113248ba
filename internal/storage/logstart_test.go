package storage

import (
	"errors"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// TestIncrementLogStartOffset: DeleteRecords' raise of the log start offset
// hides the records below it from reads, is refused above the high
// watermark, survives a restart through log-start-offset-checkpoint, and
// lets the next retention pass delete the segments wholly below it, even
// under the compact policy.
func TestIncrementLogStartOffset(t *testing.T) {
	dir := t.TempDir()
	b, _ := batch(0, "x", 5)
	cfg := DefaultLogConfig()
	cfg.SegmentBytes = int64(2 * len(b)) // two batches per segment
	cfg.NoDelete = true                  // compact only: retention alone deletes nothing
	tp := kafka.TopicPartition{Topic: "t", Partition: 0}
	m := openManager(t, dir)
	l, _ := m.Create(tp, topic, cfg)
	for range 6 {
		mustAppend(t, l, time.Now().UnixMilli(), "v", 5)
	}
	if _, err := l.IncrementLogStartOffset(12); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("above the high watermark: %v, want ErrOffsetOutOfRange", err)
	}
	commitAll(l)
	if got, err := l.IncrementLogStartOffset(12); err != nil || got != 12 {
		t.Fatalf("IncrementLogStartOffset(12) = %d, %v", got, err)
	}
	if got, _ := l.IncrementLogStartOffset(3); got != 12 {
		t.Fatalf("a lower offset moved the start back to %d", got)
	}
	if _, err := l.Read(11, 1<<60, 1<<20, true); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read below the log start offset: %v", err)
	}
	if got := readAll(t, l, 12); len(got) != 20 || got[0].Offset != 10 { // whole batches, as Kafka
		t.Fatalf("read from 12: %d records", len(got))
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m = openManager(t, dir)
	defer m.Close()
	l = m.Get(tp)
	if got := l.LogStartOffset(); got != 12 {
		t.Fatalf("after restart LogStartOffset = %d, want 12", got)
	}
	if n := len(l.segments()); n != 3 {
		t.Fatalf("%d segments before retention, want 3", n)
	}
	m.RunOnce(time.Now())
	segs := l.segments()
	if len(segs) != 2 || segs[0].base != 10 {
		t.Fatalf("after retention: %d segments, first at %d; want 2 from 10", len(segs), segs[0].base)
	}
	if got := l.LogStartOffset(); got != 12 {
		t.Fatalf("after retention LogStartOffset = %d, want 12", got)
	}
	if err := l.TruncateFullyAndStartAt(40); err != nil || l.LogStartOffset() != 40 {
		t.Fatalf("TruncateFullyAndStartAt(40): %v, start %d", err, l.LogStartOffset())
	}
}
