package storage

import (
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/record"
)

const benchProducers = 100_000

// manyProducers is the state of n producers with a full set of remembered
// batches each, built as appends build it.
func manyProducers(n int) *producerStates {
	s := newProducerStates()
	off := int64(0)
	for id := range int64(n) {
		for seq := range int32(producerBatches) {
			h := record.Header{ProducerID: id, BaseSequence: seq * 4, LastOffsetDelta: 3, NumRecords: 4,
				BaseOffset: off, MaxTimestamp: 1_700_000_000_000 + off}
			s.update(&h)
			off += 4
		}
	}
	return s
}

// BenchmarkProducerEntryMemory reports the heap held per (producer,
// partition) entry with its last 5 batches, map slot included.
func BenchmarkProducerEntryMemory(b *testing.B) {
	var perEntry float64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s := manyProducers(benchProducers)
		runtime.GC()
		runtime.ReadMemStats(&after)
		perEntry = float64(after.HeapAlloc-before.HeapAlloc) / benchProducers
		runtime.KeepAlive(s)
	}
	b.ReportMetric(perEntry, "B/entry")
}

// BenchmarkProducerStateLoad100k is a broker start's cost for a partition
// whose producer snapshot holds 100k producers (5 batches each): open the
// manager, load the log (clean shutdown: the snapshot at the log end is
// read, nothing replayed).
func BenchmarkProducerStateLoad100k(b *testing.B) {
	dir := b.TempDir()
	m := openManager(b, dir)
	l, _ := m.Create(tp0, topic, DefaultLogConfig())
	mustAppend(b, l, t0.UnixMilli(), "a", 1)
	if err := m.Close(); err != nil {
		b.Fatal(err)
	}
	if err := writeSnapshot(filepath.Join(dir, "t-0"), 1, manyProducers(benchProducers)); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		m, err := OpenManager(ManagerConfig{Dirs: []string{dir}, Now: func() time.Time { return t0 }})
		if err != nil {
			b.Fatal(err)
		}
		l := m.Get(tp0)
		if err := l.Open(); err != nil {
			b.Fatal(err)
		}
		if n := len(l.producers.producers); n != benchProducers {
			b.Fatalf("%d producers loaded", n)
		}
		b.StopTimer()
		if err := m.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkAppendIdempotent is BenchmarkAppend's 16 KiB batch from one
// idempotent producer: the check and update under the append lock.
func BenchmarkAppendIdempotent(b *testing.B) {
	m := openManager(b, b.TempDir())
	defer m.Close()
	l, _ := m.Create(tp0, topic, DefaultLogConfig())
	data, hdrs := batch16k()
	h := make([]record.Header, len(hdrs))
	b.SetBytes(int64(len(data)))
	seq := int32(0)
	for b.Loop() {
		copy(h, hdrs)
		h[0].ProducerID, h[0].ProducerEpoch, h[0].BaseSequence = 1, 0, seq
		seq += h[0].LastOffsetDelta + 1
		if _, err := l.Append(data, h, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
}
