package record

// Transaction markers (KIP-98): a control batch (attributes transactional
// and control) of one record whose key is a kmsg.ControlRecordKey (version
// 0, type 0 ABORT or 1 COMMIT) and whose value is a kmsg.EndTxnMarker
// (version 0, the coordinator epoch), stamped with the producer's id and
// epoch and base sequence -1, as Kafka's MemoryRecords.withEndTransactionMarker.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Marker is a transaction marker: the end of a producer's transaction on a
// partition.
type Marker struct {
	ProducerID       int64
	ProducerEpoch    int16
	CoordinatorEpoch int32
	Commit           bool // COMMIT, else ABORT
}

// BuildMarker encodes m as one control batch with base offset 0 and
// timestamp ts (the append assigns the offset and leader epoch).
func BuildMarker(m Marker, ts int64) []byte {
	typ := kmsg.ControlRecordKeyTypeAbort
	if m.Commit {
		typ = kmsg.ControlRecordKeyTypeCommit
	}
	key := (&kmsg.ControlRecordKey{Version: 0, Type: typ}).AppendTo(nil)
	val := (&kmsg.EndTxnMarker{Version: 0, CoordinatorEpoch: m.CoordinatorEpoch}).AppendTo(nil)
	rec := kmsg.Record{Key: key, Value: val}
	rec.Length = int32(len(rec.AppendTo(nil)) - 1) // a zero length is one varint byte
	body := rec.AppendTo(nil)
	b := kmsg.RecordBatch{
		PartitionLeaderEpoch: -1, Magic: 2, Attributes: attrTransactional | attrControl,
		FirstTimestamp: ts, MaxTimestamp: ts, ProducerID: m.ProducerID, ProducerEpoch: m.ProducerEpoch,
		FirstSequence: -1, NumRecords: 1, Records: body,
	}
	b.Length = int32(HeaderSize - lengthOverhead + len(body))
	out := b.AppendTo(nil)
	SetCRC(out)
	return out
}

// ParseMarker decodes the transaction marker of a whole control batch.
// ok is false for a control batch that is not a transaction marker: a
// control type other than ABORT and COMMIT, which a reader skips (Kafka's
// ControlRecordType.UNKNOWN), or no record (the cleaner emptied it, as
// Kafka's ProducerAppendInfo skips). A batch that is not a control batch,
// or whose record does not parse, is ErrInvalidRecord.
func ParseMarker(batch []byte) (m Marker, ok bool, err error) {
	h, err := ReadHeader(batch)
	if err != nil {
		return Marker{}, false, err
	}
	if !h.Control() {
		return Marker{}, false, fmt.Errorf("%w: batch at %d is not a control batch", ErrInvalidRecord, h.BaseOffset)
	}
	m = Marker{ProducerID: h.ProducerID, ProducerEpoch: h.ProducerEpoch}
	n := 0
	var perr error
	err = Records(batch, func(r Record) bool {
		n++
		m, ok, perr = parseMarkerRecord(m, r)
		return false
	})
	switch {
	case err != nil:
		return Marker{}, false, err
	case perr != nil:
		return Marker{}, false, perr
	case n == 0:
		return Marker{}, false, nil
	}
	return m, ok, nil
}

// parseMarkerRecord reads the key and value of a control record into m.
func parseMarkerRecord(m Marker, r Record) (Marker, bool, error) {
	var key kmsg.ControlRecordKey
	if len(r.Key) < 4 {
		return m, false, fmt.Errorf("%w: control record key of %d bytes", ErrInvalidRecord, len(r.Key))
	}
	if err := key.ReadFrom(r.Key); err != nil {
		return m, false, fmt.Errorf("%w: control record key: %v", ErrInvalidRecord, err)
	}
	switch key.Type {
	case kmsg.ControlRecordKeyTypeAbort, kmsg.ControlRecordKeyTypeCommit:
	default:
		return m, false, nil
	}
	m.Commit = key.Type == kmsg.ControlRecordKeyTypeCommit
	var val kmsg.EndTxnMarker
	if len(r.Value) < 6 {
		return m, false, fmt.Errorf("%w: transaction marker value of %d bytes", ErrInvalidRecord, len(r.Value))
	}
	if err := val.ReadFrom(r.Value); err != nil {
		return m, false, fmt.Errorf("%w: transaction marker value: %v", ErrInvalidRecord, err)
	}
	m.CoordinatorEpoch = val.CoordinatorEpoch
	return m, true, nil
}
