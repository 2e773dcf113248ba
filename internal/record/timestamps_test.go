package record

import (
	"encoding/binary"
	"hash/crc32"
	"math"
	"strings"
	"testing"

	"github.com/samsa-kafka/samsa/internal/record/recordtest"
)

// TestCheckTimestamps: records older than Before or newer than After
// around the broker's clock are refused on a CreateTime topic, each with
// its index and Kafka's message, compressed or not; a record without a
// timestamp (-1) and a LogAppendTime topic pass; unbounded limits read
// nothing; a batch that says LogAppendTime is refused on any topic.
func TestCheckTimestamps(t *testing.T) {
	const now = 1_000_000
	bounds := TimestampBounds{Before: 1000, After: 100}
	// First timestamp now-1000: deltas -1 (too old), 0 (the lower bound),
	// 1100 (the upper bound), 1101 (too new).
	recs := []recordtest.Rec{{TimestampDelta: -1}, {}, {TimestampDelta: 1100}, {TimestampDelta: 1101}}
	for _, codec := range []int8{recordtest.None, recordtest.Zstd, recordtest.Lz4} {
		b := recordtest.Batch(now-1000, codec, recs...)
		h := mustHeader(t, b)
		errs, err := CheckTimestamps(b, h, true, now, bounds)
		if err != nil {
			t.Fatal(err)
		}
		if len(errs) != 2 || errs[0].Index != 0 || errs[1].Index != 3 {
			t.Fatalf("codec %d: refused %+v, want records 0 and 3", codec, errs)
		}
		want := "Timestamp 998999 of message with offset 0 is out of range. The timestamp should be within [999000, 1000100]"
		if errs[0].Message != want {
			t.Fatalf("message %q, want %q", errs[0].Message, want)
		}
		if errs, err := CheckTimestamps(b, h, false, now, bounds); err != nil || errs != nil {
			t.Fatalf("LogAppendTime topic: %+v %v", errs, err)
		}
		if errs, err := CheckTimestamps(b, h, true, now, TimestampBounds{math.MaxInt64, math.MaxInt64}); err != nil || errs != nil {
			t.Fatalf("unbounded: %+v %v", errs, err)
		}
		// Bounds of Long.MAX on one side only: no overflow at the other.
		if errs, _ := CheckTimestamps(b, h, true, now, TimestampBounds{math.MaxInt64, 100}); len(errs) != 1 || errs[0].Index != 3 {
			t.Fatalf("after only: %+v", errs)
		}
		if errs, _ := CheckTimestamps(b, h, true, now, TimestampBounds{1000, math.MaxInt64}); len(errs) != 1 || errs[0].Index != 0 {
			t.Fatalf("before only: %+v", errs)
		}
	}

	// A record without a timestamp passes.
	b := recordtest.Batch(noTimestamp, recordtest.None, recordtest.Rec{})
	if errs, err := CheckTimestamps(b, mustHeader(t, b), true, now, bounds); err != nil || errs != nil {
		t.Fatalf("no timestamp: %+v %v", errs, err)
	}

	// A producer's batch that says LogAppendTime, on either kind of topic.
	b = recordtest.Batch(now, recordtest.None, recordtest.Rec{}, recordtest.Rec{})
	binary.BigEndian.PutUint16(b[offAttributes:], binary.BigEndian.Uint16(b[offAttributes:])|attrLogAppendTime)
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	for _, createTime := range []bool{true, false} {
		errs, err := CheckTimestamps(b, mustHeader(t, b), createTime, now, TimestampBounds{math.MaxInt64, math.MaxInt64})
		if err != nil || len(errs) != 2 || !strings.Contains(errs[1].Message, "should not set timestamp type to LogAppendTime") {
			t.Fatalf("createTime %v: %+v %v", createTime, errs, err)
		}
	}
}

func mustHeader(t *testing.T, b []byte) Header {
	t.Helper()
	hs, err := Validate(b, len(b))
	if err != nil {
		t.Fatal(err)
	}
	return hs[0]
}
