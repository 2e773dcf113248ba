package api

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/samsa-kafka/samsa/internal/record/recordtest"
	"github.com/samsa-kafka/samsa/internal/replica"
)

// TestProduceTimestampBounds: on a CreateTime topic with
// message.timestamp.before/after.max.ms, a batch holding a record older or
// newer than they allow is INVALID_TIMESTAMP with Kafka's message and a
// record error per refused record, and nothing is appended; one within
// them is appended; a LogAppendTime topic takes any timestamp.
func TestProduceTimestampBounds(t *testing.T) {
	x := newHarness(t)
	p := x.lead("ts", 1, []int32{1}, []int32{1}, 1)
	configure(p, func(c *replica.Config) {
		c.Log.Timestamps = record.TimestampBounds{Before: time.Hour.Milliseconds(), After: math.MaxInt64}
	})
	now := time.Now().UnixMilli()
	old := recordtest.Batch(now, recordtest.None, recordtest.Rec{Value: []byte("fresh")},
		recordtest.Rec{Value: []byte("a day old"), TimestampDelta: -24 * time.Hour.Milliseconds()})
	r := x.produceOne("ts", 1, 1000, old)
	if r.ErrorCode != kerr.InvalidTimestamp.Code || r.ErrorMessage == nil || len(r.ErrorRecords) != 1 ||
		r.ErrorRecords[0].RelativeOffset != 1 || !strings.Contains(*r.ErrorRecords[0].ErrorMessage, "is out of range") {
		t.Fatalf("a day-old record with an hour allowed: %+v", r)
	}
	if leo := p.LogEndOffset(); leo != 0 {
		t.Fatalf("LEO %d after a refused batch", leo)
	}
	if r := x.produceOne("ts", 1, 1000, recordtest.Batch(now, recordtest.Zstd, recordtest.Rec{Value: []byte("fresh")})); r.ErrorCode != 0 {
		t.Fatalf("a fresh record: %+v", r)
	}
	configure(p, func(c *replica.Config) { c.Log.LogAppendTime = true })
	if r := x.produceOne("ts", 1, 1000, old); r.ErrorCode != 0 {
		t.Fatalf("a day-old record on a LogAppendTime topic: %+v", r)
	}
}
