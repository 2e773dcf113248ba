package wire

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// BenchmarkConnFetchRoundTrip: a follower's fetch round trip on loopback,
// answered with size bytes of records (the peer's encoding done once).
func BenchmarkConnFetchRoundTrip(b *testing.B) {
	for _, size := range []int{4 << 10, 72 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			resp := kmsg.NewPtrFetchResponse()
			resp.SetVersion(12)
			tp := kmsg.NewFetchResponseTopic()
			pp := kmsg.NewFetchResponseTopicPartition()
			pp.RecordBatches = make([]byte, size)
			tp.Partitions = append(tp.Partitions, pp)
			resp.Topics = append(resp.Topics, tp)
			var frame []byte
			p := startPeer(b, func(hdr RequestHeader, _ kmsg.Request) (kmsg.Response, []byte) {
				if frame == nil {
					frame = AppendResponse(nil, hdr, resp)
				}
				binary.BigEndian.PutUint32(frame[4:], uint32(hdr.CorrelationID)) // all that changes
				return nil, frame
			})
			c := dialPeer(b, context.Background(), p)
			req := kmsg.NewPtrFetchRequest()
			req.SetVersion(12)
			got := kmsg.NewPtrFetchResponse()
			b.SetBytes(int64(size))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if err := c.RoundTrip(req, got, 5*time.Second); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
