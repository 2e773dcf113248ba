package record

import (
	"fmt"
	"testing"

	"github.com/samsa-kafka/samsa/internal/record/recordtest"
)

// TestRecompress: a produced batch re-encoded with each codec, and back to
// none, validates, holds the same records (offsets, timestamps, keys,
// values, headers) and keeps the producer id, epoch, base sequence and
// transactional flag.
func TestRecompress(t *testing.T) {
	for _, from := range []int8{recordtest.None, recordtest.Gzip, recordtest.Zstd} {
		src := recordtest.Idempotent(recordtest.Batch(5000, from, sampleRecs()...), 77, 3, 40)
		h := mustHeader(t, src)
		h.Attributes |= attrTransactional // as the header a transactional producer's batch would carry
		want := dump(t, src)
		for _, to := range []int8{CompressionNone, CompressionGzip, CompressionSnappy, CompressionLz4, CompressionZstd} {
			out, nh, err := Recompress(src, h, to)
			if err != nil {
				t.Fatalf("%d to %d: %v", from, to, err)
			}
			vh := mustHeader(t, out)
			if vh != nh || nh.Compression() != to || nh.ProducerID != 77 || nh.ProducerEpoch != 3 || nh.BaseSequence != 40 ||
				!nh.Transactional() || nh.LastOffsetDelta != h.LastOffsetDelta || nh.MaxTimestamp != h.MaxTimestamp {
				t.Fatalf("%d to %d: header %+v (validated %+v), from %+v", from, to, nh, vh, h)
			}
			if got := dump(t, out); got != want {
				t.Fatalf("%d to %d: records\n%s\nwant\n%s", from, to, got, want)
			}
		}
	}
}

func dump(t *testing.T, batch []byte) string {
	t.Helper()
	s := ""
	if err := Records(batch, func(r Record) bool { s += fmt.Sprintf("%+v\n", r); return true }); err != nil {
		t.Fatal(err)
	}
	return s
}
