package storage

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

func hwFile(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, hwCheckpointFile))
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(data)
}

// TestHighWatermarkCheckpoint: the high watermark is clamped to the log,
// written by RunOnce only when it changed, left out for lazy logs, and
// back after a restart.
func TestHighWatermarkCheckpoint(t *testing.T) {
	dir := t.TempDir()
	m := openManager(t, dir)
	l, _ := m.Create(tp0, topic, DefaultLogConfig())
	mustAppend(t, l, t0.UnixMilli(), "a", 5)
	mustAppend(t, l, t0.UnixMilli(), "b", 5)
	for _, c := range []struct{ set, want int64 }{{7, 7}, {100, 10}, {-3, 0}, {7, 7}} {
		if l.SetHighWatermark(c.set); l.HighWatermark() != c.want {
			t.Fatalf("SetHighWatermark(%d): %d, want %d", c.set, l.HighWatermark(), c.want)
		}
	}
	lazy, _ := m.Create(kafka.TopicPartition{Topic: "t", Partition: 1}, topic, DefaultLogConfig())
	if lazy.SetHighWatermark(5); lazy.HighWatermark() != 0 {
		t.Fatalf("lazy HW %d", lazy.HighWatermark())
	}
	m.RunOnce(t0)
	if got := hwFile(t, dir); got != "0\n1\nt 0 7\n" {
		t.Fatalf("checkpoint %q", got)
	}
	os.Remove(filepath.Join(dir, hwCheckpointFile))
	l.SetHighWatermark(7)
	m.RunOnce(t0)
	if _, err := os.Stat(filepath.Join(dir, hwCheckpointFile)); !os.IsNotExist(err) {
		t.Fatalf("unchanged checkpoint rewritten: %v", err)
	}
	l.SetHighWatermark(8)
	m.RunOnce(t0)
	if got := hwFile(t, dir); got != "0\n1\nt 0 8\n" {
		t.Fatalf("checkpoint %q", got)
	}
	l.SetHighWatermark(9)
	m.Close()
	m = openManager(t, dir)
	defer m.Close()
	if hw := m.Get(tp0).HighWatermark(); hw != 9 {
		t.Fatalf("HW after restart %d", hw)
	}
}

// TestHighWatermarkLoad: checkpointed values are clamped to each log when
// it loads (no entry counts as 0), and a log never loaded keeps its value
// in later checkpoints without being opened.
func TestHighWatermarkLoad(t *testing.T) {
	dir := t.TempDir()
	m := openManager(t, dir)
	l, _ := m.Create(tp0, topic, DefaultLogConfig())
	mustAppend(t, l, t0.UnixMilli(), "a", 10)
	tp3 := kafka.TopicPartition{Topic: "t", Partition: 3}
	l3, _ := m.Create(tp3, topic, DefaultLogConfig())
	if err := l3.TruncateFullyAndStartAt(20); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l3, t0.UnixMilli(), "c", 5)
	m.Close()

	os.WriteFile(filepath.Join(dir, hwCheckpointFile), []byte("0\n2\nt 0 1000\nt 9 4\n"), 0o644)
	m = openManager(t, dir)
	if hw := m.Get(tp0).HighWatermark(); hw != 10 {
		t.Fatalf("t-0 HW %d, want the log end 10", hw)
	}
	if hw := m.Get(tp3).HighWatermark(); hw != 20 {
		t.Fatalf("t-3 HW %d, want the log start 20", hw)
	}
	m.Close()

	os.WriteFile(filepath.Join(dir, hwCheckpointFile), []byte("0\n2\nt 0 6\nt 9 4\n"), 0o644)
	m = openManager(t, dir)
	defer m.Close()
	m.Get(tp3).SetHighWatermark(24)
	m.RunOnce(t0)
	if got := hwFile(t, dir); got != "0\n2\nt 0 6\nt 3 24\n" {
		t.Fatalf("checkpoint %q", got)
	}
	if m.Get(tp0).loaded.Load() {
		t.Fatal("checkpoint loaded t-0")
	}
}

// TestHighWatermarkCheckpointInRun: Run writes a changed high watermark
// every HighWatermarkCheckpointInterval, without a retention pass.
func TestHighWatermarkCheckpointInRun(t *testing.T) {
	dir := t.TempDir()
	m, err := OpenManager(ManagerConfig{Dirs: []string{dir}, HighWatermarkCheckpointInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	l, _ := m.Create(tp0, topic, DefaultLogConfig())
	mustAppend(t, l, 0, "a", 4)
	l.SetHighWatermark(3)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { m.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	for deadline := time.Now().Add(10 * time.Second); hwFile(t, dir) != "0\n1\nt 0 3\n"; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("checkpoint %q", hwFile(t, dir))
		}
	}
}
