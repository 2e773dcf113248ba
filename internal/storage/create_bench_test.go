package storage

import (
	"testing"
)

// BenchmarkCreatePartitions creates b.N partitions in a fresh manager, every
// fsync on, and reports partitions/s: one Create call each, or one
// CreateMany of all of them, made durable by syncfs or by parallel fsyncs.
// Run with -benchtime=20000x.
func BenchmarkCreatePartitions(b *testing.B) {
	cfg := DefaultLogConfig()
	reqs := func(n int) []CreateRequest {
		out := make([]CreateRequest, n)
		for i := range out {
			out[i] = CreateRequest{TopicPartition{"bench", int32(i)}, topic, cfg}
		}
		return out
	}
	b.Run("Create", func(b *testing.B) {
		m := openManager(b, b.TempDir())
		defer m.Close()
		rs := reqs(b.N)
		b.ResetTimer()
		for _, r := range rs {
			if _, err := m.Create(r.TopicPartition, r.TopicID, r.Config); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "partitions/s")
	})
	for _, mode := range []struct {
		name    string
		syncfsN int
	}{{"CreateMany/syncfs", 1}, {"CreateMany/fsync", 1 << 62}} {
		b.Run(mode.name, func(b *testing.B) {
			defer func(v int) { syncfsMinBatch = v }(syncfsMinBatch)
			syncfsMinBatch = mode.syncfsN
			m := openManager(b, b.TempDir())
			defer m.Close()
			rs := reqs(b.N)
			b.ResetTimer()
			if _, err := m.CreateMany(rs); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "partitions/s")
		})
	}
}
