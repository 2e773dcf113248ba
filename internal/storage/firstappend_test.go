package storage

import (
	"runtime"
	"testing"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// TestFirstAppendAllocates: the first record written to a partition that
// was created empty costs a few KiB of garbage at most. An idle broker holds
// 100k such partitions; a scan of the empty segment used to allocate two
// 64 KiB buffers on each one's first append (~1.6 KB more RSS per written
// partition in samsa-bench -idle).
func TestFirstAppendAllocates(t *testing.T) {
	m := openManager(t, t.TempDir())
	defer m.Close()
	const n = 50
	var reqs []CreateRequest
	for p := range n {
		reqs = append(reqs, CreateRequest{kafka.TopicPartition{Topic: "idle", Partition: int32(p)}, topic, DefaultLogConfig()})
	}
	logs, err := m.CreateMany(reqs)
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, logs[0], 1, "warm", 1) // the log dir's first write: shared state
	b, h := batch(1, "x", 1)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, l := range logs[1:] {
		if _, err := l.Append(b, h, t0); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	per := (after.TotalAlloc - before.TotalAlloc) / (n - 1)
	t.Logf("%d bytes allocated per first append", per)
	if per > 32<<10 {
		t.Fatalf("first append allocates %d bytes, want at most 32 KiB", per)
	}
}
