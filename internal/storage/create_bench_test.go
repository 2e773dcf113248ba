package storage

import (
	"testing"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// BenchmarkCreatePartitions creates b.N partitions in a fresh manager, every
// fsync on, and reports partitions/s: one Create call each, or one
// CreateMany of all of them. Creation is lazy (nothing is written), so
// Materialize measures where the cost went: the first append to each of
// b.N created partitions (directory, partition.metadata, segment, fsyncs).
// Run with -benchtime=20000x.
func BenchmarkCreatePartitions(b *testing.B) {
	cfg := DefaultLogConfig()
	reqs := func(n int) []CreateRequest {
		out := make([]CreateRequest, n)
		for i := range out {
			out[i] = CreateRequest{kafka.TopicPartition{Topic: "bench", Partition: int32(i)}, topic, cfg}
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
	b.Run("CreateMany", func(b *testing.B) {
		m := openManager(b, b.TempDir())
		defer m.Close()
		rs := reqs(b.N)
		b.ResetTimer()
		if _, err := m.CreateMany(rs); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "partitions/s")
	})
	b.Run("Materialize", func(b *testing.B) {
		m := openManager(b, b.TempDir())
		defer m.Close()
		logs, err := m.CreateMany(reqs(b.N))
		if err != nil {
			b.Fatal(err)
		}
		rec, hdrs := batch(1, "v", 1)
		b.ResetTimer()
		for _, l := range logs {
			if _, err := l.AppendAsFollower(append([]byte(nil), rec...), hdrs); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "partitions/s")
	})
}
