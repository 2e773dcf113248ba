package record

import "github.com/twmb/franz-go/pkg/kmsg"

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
