package record

// A produced batch, checked as Kafka's broker checks it: ReadProduced reads
// the frame (exactly one whole v2 batch within max.message.bytes, its CRC)
// without reading a record, so the caller can refuse the batch by its
// header first (control, transactional, producer id), as Kafka's
// KafkaApis does before its LogValidator; CheckProduced is the
// LogValidator: one walk over the records, decompressing once, that checks
// their framing, a compacted topic's keys, the topic's timestamp rules, and
// re-encodes them with the topic's compression.type when it is not the
// producer's.

import (
	"fmt"
	"math"
)

// ReadProduced checks the frame of a Produce payload for one partition
// and returns its batch's header: exactly one batch (Kafka's "exactly one
// record batch per partition", ErrInvalidRecord), magic 2
// (ErrUnsupportedMagic), whole (ErrCorrupt), at most maxBatchBytes
// (ErrTooLarge), its CRC (ErrCorrupt). The records are not read:
// CheckProduced does that.
func ReadProduced(records []byte, maxBatchBytes int) (Header, error) {
	if len(records) == 0 {
		return Header{}, fmt.Errorf("%w: empty record set", ErrCorrupt)
	}
	// v0 and v1 message sets keep the magic byte at the same position.
	if len(records) > offMagic && records[offMagic] != 2 {
		return Header{}, fmt.Errorf("%w: magic %d", ErrUnsupportedMagic, int8(records[offMagic]))
	}
	h, err := ReadHeader(records)
	if err != nil {
		return h, err
	}
	switch {
	case h.Size() > len(records):
		return h, fmt.Errorf("%w: batch of %d bytes truncated to %d", ErrCorrupt, h.Size(), len(records))
	case h.Size() < len(records):
		return h, fmt.Errorf("%w: a produce request may hold exactly one record batch per partition, this one has %d bytes after the first", ErrInvalidRecord, len(records)-h.Size())
	case h.Size() > maxBatchBytes:
		return h, fmt.Errorf("%w: batch of %d bytes, limit %d", ErrTooLarge, h.Size(), maxBatchBytes)
	case !CheckCRC(records):
		return h, fmt.Errorf("%w: CRC mismatch", ErrCorrupt)
	}
	return h, nil
}

// ProduceRules are a topic's rules for the records of a produced batch.
type ProduceRules struct {
	// CreateTime: message.timestamp.type is CreateTime, and every record
	// with a timestamp must lie within Bounds around NowMs.
	CreateTime bool
	NowMs      int64
	Bounds     TimestampBounds
	// Keys: cleanup.policy holds compact, and every record needs a key.
	Keys bool
	// Codec is compression.type's codec, or -1 to keep the producer's.
	Codec int8
	// MaxBatchBytes is max.message.bytes, which a re-encoded batch must
	// also keep.
	MaxBatchBytes int
}

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

// ErrNoKey is a record without a key produced to a compacted topic
// (INVALID_RECORD).
var ErrNoKey = fmt.Errorf("%w: a compacted topic's record must have a key", ErrInvalidRecord)

// noTimestamp is the timestamp of a record that has none (Kafka's
// RecordBatch.NO_TIMESTAMP).
const noTimestamp = -1

// CheckProduced walks the records of batch (h, as ReadProduced returned it)
// once, decompressing it once, and applies r in Kafka's LogValidator order:
//   - every record well framed, NumRecords == LastOffsetDelta+1 > 0, offset
//     deltas 0..n-1 (ErrInvalidRecord);
//   - on a compacted topic, every record has a key (ErrNoKey, at the first
//     that has none);
//   - on a CreateTime topic every record with a timestamp lies within the
//     bounds, and a batch that says LogAppendTime is refused on any topic,
//     that type being the broker's to set: the records refused come back in
//     refused, with Kafka's messages, and nothing else is done;
//   - with a Codec that is not the batch's, the records re-encoded with it,
//     as Kafka's broker does for a topic whose compression.type is not the
//     producer's (offsets, timestamps, producer id, epoch, base sequence
//     and the transactional flag kept), within MaxBatchBytes (ErrTooLarge).
//
// It returns the batch to append and its header: batch and h themselves
// unless re-encoded.
func CheckProduced(batch []byte, h Header, r ProduceRules) (out []byte, oh Header, refused []RecordError, err error) {
	data, err := payload(h, batch[HeaderSize:h.Size()])
	if err != nil {
		return nil, h, nil, err
	}
	checkTS := h.LogAppendTime() || (r.CreateTime && !r.Bounds.Unbounded())
	lo, hi := satAdd(r.NowMs, -r.Bounds.Before), satAdd(r.NowMs, r.Bounds.After)
	recode := r.Codec >= 0 && r.Codec != h.Compression()
	if !r.Keys && !checkTS && !recode { // Kafka's defaults: the framing alone
		if err := walk(h, data, nil, false); err != nil {
			return nil, h, nil, err
		}
		return batch[:h.Size()], h, nil, nil
	}
	var recs []Record
	if recode {
		recs = make([]Record, 0, h.NumRecords)
	}
	var keyless bool
	err = walk(h, data, func(rr *rawRecord) bool {
		if r.Keys && rr.key == nil {
			keyless = true
			return false
		}
		if checkTS {
			if e, bad := timestampError(h, rr, r.CreateTime, lo, hi); bad {
				refused = append(refused, e)
			}
		}
		if recode {
			recs = append(recs, recordOf(h, rr))
		}
		return true
	}, recode)
	switch {
	case err != nil:
		return nil, h, nil, err
	case keyless:
		return nil, h, nil, ErrNoKey
	case len(refused) > 0:
		return nil, h, refused, nil
	case !recode:
		return batch[:h.Size()], h, nil, nil
	}
	h.Attributes = h.Attributes&^attrCompressionMask | int16(r.Codec)
	if out, err = Rebuild(nil, h, recs, -1); err != nil {
		return nil, h, nil, err
	}
	if oh, err = ReadHeader(out); err != nil {
		return nil, h, nil, err
	}
	if oh.Size() > r.MaxBatchBytes {
		return nil, oh, nil, fmt.Errorf("%w: batch of %d bytes once recompressed, limit %d", ErrTooLarge, oh.Size(), r.MaxBatchBytes)
	}
	return out, oh, nil, nil
}

// timestampError is Kafka's LogValidator timestamp rule for one record.
func timestampError(h Header, rr *rawRecord, createTime bool, lo, hi int64) (RecordError, bool) {
	ts := h.FirstTimestamp + rr.timestampDelta
	switch {
	case createTime && ts != noTimestamp && (ts < lo || ts > hi):
		return RecordError{rr.offsetDelta, fmt.Sprintf(
			"Timestamp %d of message with offset %d is out of range. The timestamp should be within [%d, %d]",
			ts, h.BaseOffset+int64(rr.offsetDelta), lo, hi)}, true
	case h.LogAppendTime():
		return RecordError{rr.offsetDelta, fmt.Sprintf(
			"Invalid timestamp type in message with offset %d. Producer should not set timestamp type to LogAppendTime.",
			h.BaseOffset+int64(rr.offsetDelta))}, true
	}
	return RecordError{}, false
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
