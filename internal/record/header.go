package record

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// HeaderSize is the size of a v2 batch header, including baseOffset and
// batchLength.
const HeaderSize = 61

// Byte offsets of the v2 header fields.
const (
	offBaseOffset      = 0
	offBatchLength     = 8
	offLeaderEpoch     = 12
	offMagic           = 16
	offCRC             = 17
	offAttributes      = 21
	offLastOffsetDelta = 23
	offFirstTimestamp  = 27
	offMaxTimestamp    = 35
	offProducerID      = 43
	offProducerEpoch   = 51
	offBaseSequence    = 53
	offNumRecords      = 57

	// lengthOverhead is the bytes before and including batchLength: the
	// batch is lengthOverhead+BatchLength bytes long.
	lengthOverhead = 12
	// minBatchLength is the smallest plausible BatchLength: a header with
	// no records.
	minBatchLength = HeaderSize - lengthOverhead
)

// Attribute bits.
const (
	attrCompressionMask = 0x07
	attrLogAppendTime   = 0x08
	attrTransactional   = 0x10
	attrControl         = 0x20
	// attrDeleteHorizon: FirstTimestamp holds the delete horizon set by
	// the log cleaner (KIP-534); record timestamps stay relative to it.
	attrDeleteHorizon = 0x40
)

// Compression codecs as stored in the attribute bits.
const (
	CompressionNone   int8 = 0
	CompressionGzip   int8 = 1
	CompressionSnappy int8 = 2
	CompressionLz4    int8 = 3
	CompressionZstd   int8 = 4
)

// Sentinel errors; callers map them to Kafka error codes.
var (
	// ErrCorrupt maps to CORRUPT_MESSAGE: truncated batch, bad length, bad CRC.
	ErrCorrupt = errors.New("record: corrupt message")
	// ErrInvalidRecord maps to INVALID_RECORD: well-framed batch whose
	// records are inconsistent.
	ErrInvalidRecord = errors.New("record: invalid record")
	// ErrUnsupportedMagic maps to UNSUPPORTED_FOR_MESSAGE_FORMAT.
	ErrUnsupportedMagic = errors.New("record: unsupported message format (magic)")
	// ErrTooLarge maps to MESSAGE_TOO_LARGE.
	ErrTooLarge = errors.New("record: message too large")
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Header is the fixed 61-byte header of a v2 record batch.
type Header struct {
	BaseOffset           int64
	BatchLength          int32
	PartitionLeaderEpoch int32
	Magic                int8
	CRC                  uint32
	Attributes           int16
	LastOffsetDelta      int32
	FirstTimestamp       int64
	MaxTimestamp         int64
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	NumRecords           int32
}

// Size is the number of bytes of the whole batch.
func (h Header) Size() int { return lengthOverhead + int(h.BatchLength) }

// LastOffset is the offset of the last record of the batch.
func (h Header) LastOffset() int64 { return h.BaseOffset + int64(h.LastOffsetDelta) }

// Compression is the codec id: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd.
func (h Header) Compression() int8 { return int8(h.Attributes & attrCompressionMask) }

// LogAppendTime reports whether the timestamp type is LogAppendTime.
func (h Header) LogAppendTime() bool { return h.Attributes&attrLogAppendTime != 0 }

// Transactional reports whether the batch belongs to a transaction.
func (h Header) Transactional() bool { return h.Attributes&attrTransactional != 0 }

// Control reports whether the batch holds control records (txn markers).
func (h Header) Control() bool { return h.Attributes&attrControl != 0 }

// DeleteHorizon returns the time after which the log cleaner may drop the
// batch's tombstones, set when it first cleaned the batch (KIP-534).
func (h Header) DeleteHorizon() (int64, bool) {
	if h.Attributes&attrDeleteHorizon == 0 {
		return 0, false
	}
	return h.FirstTimestamp, true
}

// ReadHeader parses the batch header at b[0:]. It returns ErrCorrupt if b is
// shorter than HeaderSize or BatchLength is implausible (smaller than an empty
// batch). It does not check the magic byte, the CRC, or that b holds the
// whole batch.
func ReadHeader(b []byte) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, fmt.Errorf("%w: %d bytes, short of a batch header", ErrCorrupt, len(b))
	}
	be := binary.BigEndian
	h := Header{
		BaseOffset:           int64(be.Uint64(b[offBaseOffset:])),
		BatchLength:          int32(be.Uint32(b[offBatchLength:])),
		PartitionLeaderEpoch: int32(be.Uint32(b[offLeaderEpoch:])),
		Magic:                int8(b[offMagic]),
		CRC:                  be.Uint32(b[offCRC:]),
		Attributes:           int16(be.Uint16(b[offAttributes:])),
		LastOffsetDelta:      int32(be.Uint32(b[offLastOffsetDelta:])),
		FirstTimestamp:       int64(be.Uint64(b[offFirstTimestamp:])),
		MaxTimestamp:         int64(be.Uint64(b[offMaxTimestamp:])),
		ProducerID:           int64(be.Uint64(b[offProducerID:])),
		ProducerEpoch:        int16(be.Uint16(b[offProducerEpoch:])),
		BaseSequence:         int32(be.Uint32(b[offBaseSequence:])),
		NumRecords:           int32(be.Uint32(b[offNumRecords:])),
	}
	if h.BatchLength < minBatchLength {
		return h, fmt.Errorf("%w: batch length %d", ErrCorrupt, h.BatchLength)
	}
	return h, nil
}

// CheckCRC reports whether the CRC-32C stored in the batch matches the bytes
// from the attributes field to the end of the batch. batch must hold exactly
// one whole batch; shorter input reports false.
func CheckCRC(batch []byte) bool {
	if len(batch) < HeaderSize {
		return false
	}
	want := binary.BigEndian.Uint32(batch[offCRC:])
	return crc32.Checksum(batch[offAttributes:], castagnoli) == want
}

// SetBaseOffset rewrites the base offset; it is not covered by the CRC.
// Input shorter than a header is left alone.
func SetBaseOffset(batch []byte, base int64) {
	if len(batch) >= HeaderSize {
		binary.BigEndian.PutUint64(batch[offBaseOffset:], uint64(base))
	}
}

// SetPartitionLeaderEpoch rewrites the partition leader epoch; it is not
// covered by the CRC. Input shorter than a header is left alone.
func SetPartitionLeaderEpoch(batch []byte, epoch int32) {
	if len(batch) >= HeaderSize {
		binary.BigEndian.PutUint32(batch[offLeaderEpoch:], uint32(epoch))
	}
}

// SetLogAppendTime sets the LogAppendTime timestamp type and MaxTimestamp=ts,
// then recomputes the CRC over the batch. batch must hold exactly one batch.
// Input shorter than a header is left alone.
func SetLogAppendTime(batch []byte, ts int64) {
	if len(batch) < HeaderSize {
		return
	}
	be := binary.BigEndian
	attrs := be.Uint16(batch[offAttributes:]) | attrLogAppendTime
	be.PutUint16(batch[offAttributes:], attrs)
	be.PutUint64(batch[offMaxTimestamp:], uint64(ts))
	be.PutUint32(batch[offCRC:], crc32.Checksum(batch[offAttributes:], castagnoli))
}

// SetCRC recomputes and stores the CRC of batch (exactly one whole batch).
func SetCRC(batch []byte) {
	if len(batch) >= HeaderSize {
		binary.BigEndian.PutUint32(batch[offCRC:], crc32.Checksum(batch[offAttributes:], castagnoli))
	}
}
