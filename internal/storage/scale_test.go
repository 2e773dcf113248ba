package storage

import (
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

func openFDs(t testing.TB) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}

func TestManyPartitionsBoundedFDs(t *testing.T) {
	if testing.Short() {
		t.Skip("creates 20k partitions")
	}
	fsyncDisabled.Store(true) // 60k fsyncs would only measure the disk
	defer fsyncDisabled.Store(false)
	const n, budget, slack = 20_000, 256, 16
	dir := t.TempDir()
	open := func() *Manager {
		m, err := OpenManager(ManagerConfig{Dirs: []string{dir}, MaxOpenFiles: budget})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	base := openFDs(t)
	m := open()
	for i := range n {
		l, err := m.Create(kafka.TopicPartition{Topic: "many", Partition: int32(i)}, topic, DefaultLogConfig())
		if err != nil {
			t.Fatal(err)
		}
		mustAppend(t, l, int64(i), fmt.Sprint(i), 1)
		if i%1000 == 0 {
			if got := openFDs(t); got > base+budget+slack {
				t.Fatalf("after %d partitions %d fds open, budget %d", i, got-base, budget)
			}
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m = open()
	defer m.Close()
	if got := len(m.Partitions()); got != n {
		t.Fatalf("%d partitions after reopen", got)
	}
	if m.cache.openCount() != 0 || openFDs(t) > base+slack {
		t.Fatal("startup opened segment files")
	}
	for i := n - 1; i >= 0; i-- {
		l := m.Get(kafka.TopicPartition{Topic: "many", Partition: int32(i)})
		got := readAll(t, l, 0)
		if len(got) != 1 || string(got[0].Value) != fmt.Sprintf("%d-0", i) || got[0].Timestamp != int64(i) {
			t.Fatalf("partition %d: %v", i, values(got))
		}
	}
	if got := openFDs(t); got > base+budget+slack {
		t.Fatalf("%d fds open after reading all, budget %d", got-base, budget)
	}
}

// TestConcurrentReadersAndEviction appends and reads several logs from
// several goroutines under a tiny fd budget, so segments are evicted while
// in use; run with -race.
func TestConcurrentReadersAndEviction(t *testing.T) {
	m, err := OpenManager(ManagerConfig{Dirs: []string{t.TempDir()}, MaxOpenFiles: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	cfg := DefaultLogConfig()
	cfg.SegmentBytes = 4000
	var wg sync.WaitGroup
	for p := range 4 {
		l, _ := m.Create(kafka.TopicPartition{Topic: "c", Partition: int32(p)}, topic, cfg)
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range 100 {
				b, h := batch(int64(i), "v", 3)
				if _, err := l.Append(b, h, time.Now()); err != nil {
					t.Error(err)
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range 200 {
				leo := l.LogEndOffset()
				if leo == 0 {
					continue
				}
				if _, err := l.Read(leo/2, 1<<62, 10_000, true); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for p := range 4 {
		if got := readAll(t, m.Get(kafka.TopicPartition{Topic: "c", Partition: int32(p)}), 0); len(got) != 300 {
			t.Fatalf("partition %d: %d records", p, len(got))
		}
	}
}
