package record

import (
	"fmt"
	"testing"

	"github.com/samsa-kafka/samsa/internal/record/recordtest"
)

// BenchmarkCheckProduced: the checks of a produced batch of 200 records of
// 100 bytes with a key, by codec, for a topic with Kafka's defaults and
// for a compacted topic with timestamp bounds (one walk either way).
func BenchmarkCheckProduced(b *testing.B) {
	const now = 1_000_000
	recs := make([]recordtest.Rec, 200)
	for i := range recs {
		recs[i] = recordtest.Rec{Key: fmt.Appendf(nil, "key-%d", i), Value: fmt.Appendf(nil, "%0100d", i)}
	}
	compactBounded := noRules
	compactBounded.Keys, compactBounded.NowMs, compactBounded.Bounds = true, now, TimestampBounds{3_600_000, 3_600_000}
	for _, codec := range []int8{recordtest.None, recordtest.Lz4} {
		batch := recordtest.Batch(now, codec, recs...)
		for _, c := range []struct {
			name  string
			rules ProduceRules
		}{{"defaults", noRules}, {"compact+bounds", compactBounded}} {
			b.Run(fmt.Sprintf("codec=%d/%s", codec, c.name), func(b *testing.B) {
				b.SetBytes(int64(len(batch)))
				b.ReportAllocs()
				for b.Loop() {
					h, err := ReadProduced(batch, 1<<20)
					if err != nil {
						b.Fatal(err)
					}
					if _, _, _, err := CheckProduced(batch, h, c.rules); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
