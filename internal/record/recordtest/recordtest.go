// Package recordtest builds v2 record batches for tests, encoded with
// franz-go's kmsg types and compressed with the codecs Kafka clients use.
// It is for tests only.
package recordtest

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Codec ids as in the batch attributes.
const (
	None   int8 = 0
	Gzip   int8 = 1
	Snappy int8 = 2
	Lz4    int8 = 3
	Zstd   int8 = 4
	// SnappyXerial is Snappy framed as the Java client writes it.
	SnappyXerial int8 = 100
)

// Rec is one record to encode; TimestampDelta is relative to the batch's
// FirstTimestamp.
type Rec struct {
	Key, Value     []byte
	TimestampDelta int64
	Headers        []kmsg.Header
}

// Batch encodes recs as one v2 batch with base offset 0, first timestamp
// ts, and the given codec. It panics on codec errors (tests only).
func Batch(ts int64, codec int8, recs ...Rec) []byte {
	var body []byte
	maxTS := ts
	for i, r := range recs {
		rec := kmsg.Record{
			TimestampDelta64: r.TimestampDelta,
			OffsetDelta:      int32(i),
			Key:              r.Key,
			Value:            r.Value,
			Headers:          r.Headers,
		}
		body = appendRecord(body, rec)
		maxTS = max(maxTS, ts+r.TimestampDelta)
	}
	attrs := int16(codec)
	if codec == SnappyXerial {
		attrs = int16(Snappy)
	}
	body = compress(codec, body)
	b := kmsg.RecordBatch{
		PartitionLeaderEpoch: -1,
		Magic:                2,
		Attributes:           attrs,
		LastOffsetDelta:      int32(len(recs) - 1),
		FirstTimestamp:       ts,
		MaxTimestamp:         maxTS,
		ProducerID:           -1,
		ProducerEpoch:        -1,
		FirstSequence:        -1,
		NumRecords:           int32(len(recs)),
		Records:              body,
	}
	b.Length = int32(61 - 12 + len(body))
	out := b.AppendTo(nil)
	crc := crc32.Checksum(out[21:], crc32.MakeTable(crc32.Castagnoli))
	binary.BigEndian.PutUint32(out[17:], crc)
	return out
}

// Values is a shortcut: one uncompressed batch holding the given values,
// timestamps ts, ts+1, ...
func Values(ts int64, values ...string) []byte {
	recs := make([]Rec, len(values))
	for i, v := range values {
		recs[i] = Rec{Value: []byte(v), TimestampDelta: int64(i)}
	}
	return Batch(ts, None, recs...)
}

// appendRecord encodes rec with its varint length prefix.
func appendRecord(dst []byte, rec kmsg.Record) []byte {
	rec.Length = 0
	tmp := rec.AppendTo(nil)
	rec.Length = int32(len(tmp) - 1) // a zero length is one varint byte
	return rec.AppendTo(dst)
}

func compress(codec int8, body []byte) []byte {
	var buf bytes.Buffer
	switch codec {
	case None:
		return body
	case Gzip:
		w := gzip.NewWriter(&buf)
		must(w.Write(body))
		mustErr(w.Close())
	case Snappy:
		return s2.EncodeSnappy(nil, body)
	case SnappyXerial:
		buf.Write([]byte{130, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1})
		for len(body) > 0 {
			n := min(len(body), 32<<10)
			blk := s2.EncodeSnappy(nil, body[:n])
			buf.Write(binary.BigEndian.AppendUint32(nil, uint32(len(blk))))
			buf.Write(blk)
			body = body[n:]
		}
	case Lz4:
		w := lz4.NewWriter(&buf)
		must(w.Write(body))
		mustErr(w.Close())
	case Zstd:
		w, err := zstd.NewWriter(&buf)
		mustErr(err)
		must(w.Write(body))
		mustErr(w.Close())
	default:
		panic("recordtest: unknown codec")
	}
	return buf.Bytes()
}

func must(_ int, err error) { mustErr(err) }

func mustErr(err error) {
	if err != nil {
		panic(err)
	}
}

// Idempotent rewrites batch (one whole v2 batch) as a batch of producer id
// with epoch and base sequence seq, and recomputes its CRC.
func Idempotent(batch []byte, id int64, epoch int16, seq int32) []byte {
	be := binary.BigEndian
	be.PutUint64(batch[43:], uint64(id))
	be.PutUint16(batch[51:], uint16(epoch))
	be.PutUint32(batch[53:], uint32(seq))
	be.PutUint32(batch[17:], crc32.Checksum(batch[21:], crc32.MakeTable(crc32.Castagnoli)))
	return batch
}
