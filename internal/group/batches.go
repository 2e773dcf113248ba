package group

// The record batches of __consumer_offsets as the coordinator writes and
// loads them: plain batches (OffsetCommit, group metadata), transactional
// batches of a producer (TxnOffsetCommit: attributes transactional,
// producer id and epoch, as Kafka's storeOffsets builds them with
// MemoryRecords.builder), and the transaction markers (control batches)
// partition leaders append to end a producer's transaction.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-kafka/samsa/internal/record"
)

// attrTransactional is the transactional bit of a v2 batch's attributes.
const attrTransactional = 0x10

// Batch is what a load needs of a batch's header: the producer and
// whether its records are transactional; for a transaction marker
// (Control) the records are not given and Commit tells COMMIT from ABORT.
type Batch struct {
	ProducerID    int64
	Transactional bool
	Control       bool
	Commit        bool
}

// LoadFunc receives a partition's records in order: a data batch's
// records one by one, a transaction marker once (offset is its own, key
// and value nil).
type LoadFunc func(b Batch, offset int64, key, value []byte)

// TxnBatch encodes recs as one uncompressed transactional v2 batch of the
// producer, base offset 0, base sequence 0 (the log sets the sequence it
// needs), every record at timestamp ts.
func TxnBatch(ts int64, producerID int64, producerEpoch int16, recs []record.KV) []byte {
	var body []byte
	for i, r := range recs {
		rec := kmsg.Record{OffsetDelta: int32(i), Key: r.Key, Value: r.Value}
		rec.Length = int32(len(rec.AppendTo(nil)) - 1) // a zero length is one varint byte
		body = rec.AppendTo(body)
	}
	b := kmsg.RecordBatch{
		PartitionLeaderEpoch: -1, Magic: 2, Attributes: attrTransactional, LastOffsetDelta: int32(len(recs) - 1),
		FirstTimestamp: ts, MaxTimestamp: ts, ProducerID: producerID, ProducerEpoch: producerEpoch,
		NumRecords: int32(len(recs)), Records: body,
	}
	b.Length = int32(record.HeaderSize - 12 + len(body)) // 12: base offset and length
	out := b.AppendTo(nil)
	record.SetCRC(out)
	return out
}

// ReadBatches calls fn for the records of the whole batches in b (a
// transaction marker once; other control batches are skipped, as Kafka's
// loader skips an unknown control type, and so one that does not parse) and returns the offset after the
// last whole batch (0 if none). A torn batch at the end is left for the
// next read.
func ReadBatches(b []byte, fn LoadFunc) (int64, error) {
	var next int64
	for len(b) > 0 {
		h, err := record.ReadHeader(b)
		if err != nil || h.Size() > len(b) {
			break
		}
		batch := b[:h.Size()]
		info := Batch{ProducerID: h.ProducerID, Transactional: h.Transactional(), Control: h.Control()}
		if h.Control() {
			// A control batch that does not parse is skipped as one of
			// an unknown type: the records around it still load.
			if m, ok, err := record.ParseMarker(batch); err == nil && ok {
				info.Commit = m.Commit
				fn(info, h.BaseOffset, nil, nil)
			}
		} else {
			err = record.Records(batch, func(r record.Record) bool {
				fn(info, r.Offset, r.Key, r.Value)
				return true
			})
			if err != nil {
				return next, err
			}
		}
		next = h.LastOffset() + 1
		b = b[h.Size():]
	}
	return next, nil
}
