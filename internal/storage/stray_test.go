package storage

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// A stray log is set aside, then deleted: renamed <topic>-<p>.<uuid>-stray,
// closed, not served, not loaded again after a restart, and removed
// file.delete.delay.ms later (one minute here), also when a restart came
// in between; a new log of the same partition starts empty.
func TestMarkStray(t *testing.T) {
	dir := t.TempDir()
	m := openManager(t, dir)
	l, _ := m.Create(tp0, topic, DefaultLogConfig())
	mustAppend(t, l, 0, "a", 3)
	lazy := kafka.TopicPartition{Topic: "t", Partition: 1}
	if _, err := m.Create(lazy, topic, DefaultLogConfig()); err != nil {
		t.Fatal(err)
	}
	if err := m.MarkStray([]kafka.TopicPartition{tp0, lazy, {Topic: "absent", Partition: 0}}, "a test"); err != nil {
		t.Fatal(err)
	}
	if m.Get(tp0) != nil || m.Get(lazy) != nil || len(m.Partitions()) != 0 {
		t.Fatalf("stray logs still listed: %v", m.Partitions())
	}
	strays, _ := filepath.Glob(filepath.Join(dir, "t-*"))
	if len(strays) != 1 || filepath.Base(strays[0])[:4] != "t-0." || len(filepath.Base(strays[0])) != len("t-0.")+32+len("-stray") {
		t.Fatalf("directories after MarkStray: %v (the lazy log has none)", strays)
	}
	m.RunOnce(t0.Add(30 * time.Second))
	m.Close()

	m = openManager(t, dir)
	defer m.Close()
	if len(m.Partitions()) != 0 {
		t.Fatalf("a restart loaded %v", m.Partitions())
	}
	m.RunOnce(t0.Add(30 * time.Second))
	if _, err := os.Stat(strays[0]); err != nil {
		t.Fatalf("the stray log is gone before file.delete.delay.ms: %v", err)
	}
	m.RunOnce(t0.Add(61 * time.Second))
	if _, err := os.Stat(strays[0]); !os.IsNotExist(err) {
		t.Fatalf("the stray log is still there after file.delete.delay.ms: %v", err)
	}
	l, err := m.Create(tp0, topic, DefaultLogConfig())
	if err != nil {
		t.Fatal(err)
	}
	if end := l.LogEndOffset(); end != 0 {
		t.Fatalf("a new log of the partition ends at %d, want 0", end)
	}
}
