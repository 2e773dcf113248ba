package metacache

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// createRequests are the UpdateMetadata requests of creating topics ×
// parts partitions (RF 3 on brokers 0–2) batch topics at a time.
func createRequests(topics, parts, batch int) []*kmsg.UpdateMetadataRequest {
	var out []*kmsg.UpdateMetadataRequest
	for start := 0; start < topics; start += batch {
		var ps []part
		for t := start; t < min(start+batch, topics); t++ {
			for p := range parts {
				l := int32((t + p) % 3)
				ps = append(ps, part{fmt.Sprintf("bench-%d", t), byte(t), int32(p), l, 0, []int32{l, (l + 1) % 3, (l + 2) % 3}})
			}
		}
		out = append(out, updateMetadata(1, -1, []int32{0, 1, 2}, ps...))
	}
	return out
}

// BenchmarkUpdateMetadataApply: a new cache takes the UpdateMetadata of
// creating 100 topics × 1000 partitions, in requests of 25 topics; then
// (apply+topic) each topic is looked up once, as the next Fetch or
// Metadata request does.
func BenchmarkUpdateMetadataApply(b *testing.B) {
	reqs := createRequests(100, 1000, 25)
	for _, lookup := range []bool{false, true} {
		name := "apply"
		if lookup {
			name = "apply+topic"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c := New(0)
				for _, req := range reqs {
					if code := c.ApplyUpdateMetadata(req); code != 0 {
						b.Fatal(code)
					}
					if !lookup {
						continue
					}
					for _, ts := range req.TopicStates {
						if t, ok := c.Topic(ts.Topic); !ok || len(t.Partitions) != len(ts.PartitionStates) {
							b.Fatalf("topic %s: %d partitions", ts.Topic, len(t.Partitions))
						}
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*100_000), "ns/partition")
		})
	}
}
