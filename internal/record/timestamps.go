package record

import (
	"fmt"
	"math"
)

// noTimestamp is the timestamp of a record that has none (Kafka's
// RecordBatch.NO_TIMESTAMP).
const noTimestamp = -1

// TimestampBounds are a topic's limits on produced CreateTime timestamps
// (message.timestamp.before.max.ms and message.timestamp.after.max.ms):
// a record may be at most Before ms older and After ms newer than the
// broker's clock. math.MaxInt64 is no limit.
type TimestampBounds struct {
	Before, After int64
}

// Unbounded reports whether the bounds let every timestamp through.
func (b TimestampBounds) Unbounded() bool {
	return b.Before == math.MaxInt64 && b.After == math.MaxInt64
}

// RecordError is one record a produced batch was refused for: its index in
// the batch and why (a ProduceResponse record error, KIP-467).
type RecordError struct {
	Index   int32
	Message string
}

// CheckTimestamps applies Kafka's LogValidator timestamp rules to a
// produced batch that Validate accepted (h its header): on a CreateTime
// topic every record with a timestamp must lie within bounds around nowMs;
// and a batch that says LogAppendTime is refused on any topic, that type
// being the broker's to set. It returns the records refused, with Kafka's
// messages (the LogAppendTime one names the record by its offset where
// Kafka's prints the whole record); nil when the batch passes. A CreateTime batch on a
// LogAppendTime topic or with no bounds is not read; otherwise the records
// are walked again, a compressed batch decompressed again.
func CheckTimestamps(batch []byte, h Header, createTime bool, nowMs int64, b TimestampBounds) ([]RecordError, error) {
	if !h.LogAppendTime() && (!createTime || b.Unbounded()) {
		return nil, nil
	}
	data, err := payload(h, batch[HeaderSize:h.Size()])
	if err != nil {
		return nil, err
	}
	lo, hi := satAdd(nowMs, -b.Before), satAdd(nowMs, b.After)
	var errs []RecordError
	err = walk(h, data, func(r *rawRecord) bool {
		ts := h.FirstTimestamp + r.timestampDelta
		switch {
		case createTime && ts != noTimestamp && (ts < lo || ts > hi):
			errs = append(errs, RecordError{r.offsetDelta, fmt.Sprintf(
				"Timestamp %d of message with offset %d is out of range. The timestamp should be within [%d, %d]",
				ts, h.BaseOffset+int64(r.offsetDelta), lo, hi)})
		case h.LogAppendTime():
			errs = append(errs, RecordError{r.offsetDelta, fmt.Sprintf(
				"Invalid timestamp type in message with offset %d. Producer should not set timestamp type to LogAppendTime.",
				h.BaseOffset+int64(r.offsetDelta))})
		}
		return true
	}, false)
	if err != nil {
		return nil, err
	}
	return errs, nil
}

// satAdd is a+d saturated at the int64 bounds (d may be ±math.MaxInt64).
func satAdd(a, d int64) int64 {
	switch {
	case d > 0 && a > math.MaxInt64-d:
		return math.MaxInt64
	case d < 0 && a < math.MinInt64-d:
		return math.MinInt64
	}
	return a + d
}
