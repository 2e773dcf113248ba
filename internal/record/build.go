package record

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Rebuild appends to dst one v2 batch holding recs, a subset of the records
// of the stored batch h in offset order: what the log cleaner writes. The
// batch keeps h's base offset and last offset delta (so offsets, gaps and
// the producer's sequence range are unchanged), partition leader epoch,
// producer id, epoch and base sequence, timestamp type, transactional and
// control flags, and is compressed with h's codec. With horizon >= 0 the
// batch carries that delete horizon (KIP-534: attribute 0x40, FirstTimestamp
// = horizon, record timestamps relative to it). With no records it is
// Kafka's empty batch: a bare header, uncompressed, both timestamps h's
// MaxTimestamp.
func Rebuild(dst []byte, h Header, recs []Record, horizon int64) ([]byte, error) {
	attrs := h.Attributes &^ attrDeleteHorizon
	base, maxTS := h.MaxTimestamp, h.MaxTimestamp
	if len(recs) > 0 {
		base = recs[0].Timestamp
		if !h.LogAppendTime() {
			maxTS = recs[0].Timestamp
			for _, r := range recs {
				maxTS = max(maxTS, r.Timestamp)
			}
		}
	}
	if horizon >= 0 {
		base = horizon
		attrs |= attrDeleteHorizon
	}
	start := len(dst)
	dst = append(dst, make([]byte, HeaderSize)...)
	for _, r := range recs {
		delta := r.Offset - h.BaseOffset
		if delta < 0 || delta > int64(h.LastOffsetDelta) {
			return dst[:start], fmt.Errorf("%w: offset %d outside the batch at %d", ErrInvalidRecord, r.Offset, h.BaseOffset)
		}
		dst = appendRecord(dst, r, base, int32(delta))
	}
	if len(recs) == 0 {
		attrs &^= attrCompressionMask
	} else if h.Compression() != CompressionNone {
		body, err := compress(h.Compression(), dst[start+HeaderSize:])
		if err != nil {
			return dst[:start], err
		}
		dst = append(dst[:start+HeaderSize], body...)
	}
	b := dst[start:]
	be := binary.BigEndian
	be.PutUint64(b[offBaseOffset:], uint64(h.BaseOffset))
	be.PutUint32(b[offBatchLength:], uint32(len(b)-lengthOverhead))
	be.PutUint32(b[offLeaderEpoch:], uint32(h.PartitionLeaderEpoch))
	b[offMagic] = 2
	be.PutUint16(b[offAttributes:], uint16(attrs))
	be.PutUint32(b[offLastOffsetDelta:], uint32(h.LastOffsetDelta))
	be.PutUint64(b[offFirstTimestamp:], uint64(base))
	be.PutUint64(b[offMaxTimestamp:], uint64(maxTS))
	be.PutUint64(b[offProducerID:], uint64(h.ProducerID))
	be.PutUint16(b[offProducerEpoch:], uint16(h.ProducerEpoch))
	be.PutUint32(b[offBaseSequence:], uint32(h.BaseSequence))
	be.PutUint32(b[offNumRecords:], uint32(len(recs)))
	be.PutUint32(b[offCRC:], crc32.Checksum(b[offAttributes:], castagnoli))
	return dst, nil
}

// appendRecord encodes one record (v2 framing) with timestamp and offset
// deltas relative to base and the batch's base offset.
func appendRecord(dst []byte, r Record, base int64, offsetDelta int32) []byte {
	n := 1 + varintLen(r.Timestamp-base) + varintLen(int64(offsetDelta)) + bytesLen(r.Key) + bytesLen(r.Value) +
		varintLen(int64(len(r.Headers)))
	for _, hd := range r.Headers {
		n += varintLen(int64(len(hd.Key))) + len(hd.Key) + bytesLen(hd.Value)
	}
	dst = binary.AppendVarint(dst, int64(n))
	dst = append(dst, 0) // attributes
	dst = binary.AppendVarint(dst, r.Timestamp-base)
	dst = binary.AppendVarint(dst, int64(offsetDelta))
	dst = appendBytes(dst, r.Key)
	dst = appendBytes(dst, r.Value)
	dst = binary.AppendVarint(dst, int64(len(r.Headers)))
	for _, hd := range r.Headers {
		dst = binary.AppendVarint(dst, int64(len(hd.Key)))
		dst = append(dst, hd.Key...)
		dst = appendBytes(dst, hd.Value)
	}
	return dst
}

// appendBytes appends a varint length (-1 for nil) and v.
func appendBytes(dst, v []byte) []byte {
	if v == nil {
		return binary.AppendVarint(dst, -1)
	}
	dst = binary.AppendVarint(dst, int64(len(v)))
	return append(dst, v...)
}

func bytesLen(v []byte) int {
	if v == nil {
		return 1
	}
	return varintLen(int64(len(v))) + len(v)
}

func varintLen(v int64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutVarint(b[:], v)
}

// KV is one record to build: a nil Value is a tombstone.
type KV struct{ Key, Value []byte }

// Build encodes recs as one uncompressed v2 batch with base offset 0 and
// every record at timestamp ts, with franz-go's kmsg types, for the
// broker's own writes (the group coordinator's __consumer_offsets records).
func Build(ts int64, recs []KV) []byte {
	var body []byte
	for i, r := range recs {
		rec := kmsg.Record{OffsetDelta: int32(i), Key: r.Key, Value: r.Value}
		rec.Length = int32(len(rec.AppendTo(nil)) - 1) // a zero length is one varint byte
		body = rec.AppendTo(body)
	}
	b := kmsg.RecordBatch{
		PartitionLeaderEpoch: -1, Magic: 2, LastOffsetDelta: int32(len(recs) - 1),
		FirstTimestamp: ts, MaxTimestamp: ts, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		NumRecords: int32(len(recs)), Records: body,
	}
	b.Length = int32(HeaderSize - lengthOverhead + len(body))
	out := b.AppendTo(nil)
	SetCRC(out)
	return out
}
