package record

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Record is one record of a batch, with absolute offset and timestamp.
// Key, Value and header values alias the batch (or its decompressed copy);
// a nil Key or Value means null, an empty non-nil one means empty.
type Record struct {
	Offset, Timestamp int64
	Key, Value        []byte
	Headers           []RecordHeader
}

// RecordHeader is one record header.
type RecordHeader struct {
	Key   string
	Value []byte
}

// Records iterates over the records of one whole batch, decompressing it
// when needed, and calls fn for each until fn returns false. With
// LogAppendTime every record's timestamp is the batch MaxTimestamp, as Kafka
// defines it. It checks framing but not the CRC. Batches rewritten by log
// compaction are accepted: offset deltas may have gaps (increasing, at most
// LastOffsetDelta) and an empty batch has no records.
func Records(batch []byte, fn func(Record) bool) error {
	h, err := ReadHeader(batch)
	if err != nil {
		return err
	}
	if h.Magic != 2 {
		return fmt.Errorf("%w: magic %d", ErrUnsupportedMagic, h.Magic)
	}
	if h.Size() > len(batch) {
		return fmt.Errorf("%w: batch of %d bytes truncated to %d", ErrCorrupt, h.Size(), len(batch))
	}
	data, err := payload(h, batch[HeaderSize:h.Size()])
	if err != nil {
		return err
	}
	return walkStored(h, data, func(r *rawRecord) bool { return fn(recordOf(h, r)) }, true)
}

// recordOf is r of the batch h as a Record (its headers collected).
func recordOf(h Header, r *rawRecord) Record {
	rec := Record{
		Offset:    h.BaseOffset + int64(r.offsetDelta),
		Timestamp: h.FirstTimestamp + r.timestampDelta,
		Key:       r.key,
		Value:     r.value,
		Headers:   r.headers,
	}
	if h.LogAppendTime() {
		rec.Timestamp = h.MaxTimestamp
	}
	return rec
}

// payload returns the record bytes of the batch, decompressed if needed.
func payload(h Header, body []byte) ([]byte, error) {
	if h.Compression() == CompressionNone {
		return body, nil
	}
	return decompress(h.Compression(), body)
}

// rawRecord is a record as stored: deltas relative to the batch header.
type rawRecord struct {
	timestampDelta int64
	offsetDelta    int32
	key, value     []byte
	headers        []RecordHeader
}

// walk parses exactly h.NumRecords records from data, checking that offset
// deltas run 0..n-1 in order and that no bytes are left over. fn may be nil;
// collectHeaders controls whether header slices are built.
func walk(h Header, data []byte, fn func(*rawRecord) bool, collectHeaders bool) error {
	if h.NumRecords <= 0 || int64(h.NumRecords) != int64(h.LastOffsetDelta)+1 {
		return fmt.Errorf("%w: %d records but last offset delta %d", ErrInvalidRecord, h.NumRecords, h.LastOffsetDelta)
	}
	var r rawRecord
	for i := int32(0); i < h.NumRecords; i++ {
		n, err := parseRecord(data, &r, collectHeaders)
		if err != nil {
			return fmt.Errorf("record %d: %w", i, err)
		}
		if r.offsetDelta != i {
			return fmt.Errorf("%w: record %d has offset delta %d", ErrInvalidRecord, i, r.offsetDelta)
		}
		data = data[n:]
		if fn != nil && !fn(&r) {
			return nil
		}
	}
	if len(data) != 0 {
		return fmt.Errorf("%w: %d bytes after the last record", ErrInvalidRecord, len(data))
	}
	return nil
}

// walkStored is walk for batches read back from a log, which compaction may
// have thinned: 0..LastOffsetDelta+1 records with increasing offset deltas
// within [0, LastOffsetDelta].
func walkStored(h Header, data []byte, fn func(*rawRecord) bool, collectHeaders bool) error {
	if h.NumRecords < 0 || int64(h.NumRecords) > int64(h.LastOffsetDelta)+1 {
		return fmt.Errorf("%w: %d records but last offset delta %d", ErrInvalidRecord, h.NumRecords, h.LastOffsetDelta)
	}
	var r rawRecord
	prev := int32(-1)
	for i := int32(0); i < h.NumRecords; i++ {
		n, err := parseRecord(data, &r, collectHeaders)
		if err != nil {
			return fmt.Errorf("record %d: %w", i, err)
		}
		if r.offsetDelta <= prev || r.offsetDelta > h.LastOffsetDelta {
			return fmt.Errorf("%w: record %d has offset delta %d", ErrInvalidRecord, i, r.offsetDelta)
		}
		prev = r.offsetDelta
		data = data[n:]
		if fn != nil && !fn(&r) {
			return nil
		}
	}
	if len(data) != 0 {
		return fmt.Errorf("%w: %d bytes after the last record", ErrInvalidRecord, len(data))
	}
	return nil
}

// parseRecord parses one record at the start of b and returns its total size.
func parseRecord(b []byte, r *rawRecord, collectHeaders bool) (int, error) {
	length, n := binary.Varint(b)
	if n <= 0 || length < 0 || length > math.MaxInt32 {
		return 0, fmt.Errorf("%w: bad record length", ErrInvalidRecord)
	}
	if int64(len(b)-n) < length {
		return 0, fmt.Errorf("%w: record length %d exceeds batch", ErrInvalidRecord, length)
	}
	total := n + int(length)
	p := parser{b: b[n:total], ok: true}
	p.skip(1) // attributes, unused in v2
	r.timestampDelta = p.varlong()
	r.offsetDelta = p.varint()
	r.key = p.bytes(true)
	r.value = p.bytes(true)
	nh := p.varint()
	if nh < 0 {
		p.fail()
	}
	r.headers = r.headers[:0]
	if collectHeaders {
		r.headers = nil
	}
	for j := int32(0); j < nh && p.ok; j++ {
		k := p.bytes(false)
		v := p.bytes(true)
		if collectHeaders && p.ok {
			r.headers = append(r.headers, RecordHeader{Key: string(k), Value: v})
		}
	}
	if !p.ok {
		return 0, fmt.Errorf("%w: malformed record body", ErrInvalidRecord)
	}
	if len(p.b) != 0 {
		return 0, fmt.Errorf("%w: %d bytes left in record", ErrInvalidRecord, len(p.b))
	}
	return total, nil
}

// parser reads varint-framed fields; after the first failure ok is false
// and every read returns zero values.
type parser struct {
	b  []byte
	ok bool
}

func (p *parser) fail() { p.ok, p.b = false, nil }

func (p *parser) skip(n int) {
	if !p.ok {
		return
	}
	if len(p.b) < n {
		p.fail()
		return
	}
	p.b = p.b[n:]
}

func (p *parser) varlong() int64 {
	if !p.ok {
		return 0
	}
	v, n := binary.Varint(p.b)
	if n <= 0 {
		p.fail()
		return 0
	}
	p.b = p.b[n:]
	return v
}

func (p *parser) varint() int32 {
	v := p.varlong()
	if v < math.MinInt32 || v > math.MaxInt32 {
		p.fail()
		return 0
	}
	return int32(v)
}

// bytes reads a varint length and that many bytes; -1 means null (nil) when
// nullable.
func (p *parser) bytes(nullable bool) []byte {
	l := p.varint()
	if !p.ok {
		return nil
	}
	if l == -1 && nullable {
		return nil
	}
	if l < 0 || int(l) > len(p.b) {
		p.fail()
		return nil
	}
	v := p.b[:l:l]
	p.b = p.b[l:]
	return v
}
