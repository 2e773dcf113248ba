package api

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-kafka/samsa/internal/record/recordtest"
	"github.com/samsa-kafka/samsa/internal/replica"
)

// TestProduceKeylessToCompactedTopic: INVALID_RECORD for that partition
// with Kafka's message, nothing appended (LogValidator's rule).
func TestProduceKeylessToCompactedTopic(t *testing.T) {
	x := newHarness(t)
	p := x.lead("c", 1, []int32{1}, []int32{1}, 1)
	configure(p, func(c *replica.Config) { c.Log.Compact, c.Log.NoDelete = true, true })
	r := x.produceOne("c", 1, 1000, recordtest.Values(1000, "no key"))
	want := "Compacted topic cannot accept message without key in topic partition c-0."
	if r.ErrorCode != kerr.InvalidRecord.Code || r.ErrorMessage == nil || *r.ErrorMessage != want || p.LogEndOffset() != 0 {
		t.Fatalf("keyless produce to a compacted topic: %+v (%q), LEO %d", r, *r.ErrorMessage, p.LogEndOffset())
	}
	keyed := recordtest.Batch(1000, recordtest.None, recordtest.Rec{Key: []byte("k"), Value: []byte("v")})
	if r := x.produceOne("c", 1, 1000, keyed); r.ErrorCode != 0 {
		t.Fatalf("keyed produce: %+v", r)
	}
}

// TestProduceLargerThanSegment: a batch larger than segment.bytes is
// RECORD_LIST_TOO_LARGE, as Kafka's RecordBatchTooLargeException.
func TestProduceLargerThanSegment(t *testing.T) {
	x := newHarness(t)
	p := x.lead("s", 1, []int32{1}, []int32{1}, 1)
	configure(p, func(c *replica.Config) { c.Log.SegmentBytes = 100 })
	vals := []string{"0123456789012345678901234567890123456789", "0123456789012345678901234567890123456789"}
	if r := x.produceOne("s", 1, 1000, recordtest.Values(1000, vals...)); r.ErrorCode != kerr.RecordListTooLarge.Code {
		t.Fatalf("batch over segment.bytes: %+v", r)
	}
}
