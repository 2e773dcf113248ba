package record

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"strings"
	"testing"

	"github.com/samsa-kafka/samsa/internal/record/recordtest"
)

// noRules are the rules of a topic with Kafka's defaults: CreateTime with
// no bounds, delete policy, the producer's codec.
var noRules = ProduceRules{CreateTime: true, Bounds: TimestampBounds{math.MaxInt64, math.MaxInt64}, Codec: -1, MaxBatchBytes: 1 << 20}

// TestReadProduced: the frame of one partition's payload: exactly one
// whole batch of magic 2 within the limit and with its CRC; the records
// are not read.
func TestReadProduced(t *testing.T) {
	good := recordtest.Batch(1000, recordtest.Gzip, sampleRecs()...)
	if h, err := ReadProduced(good, len(good)); err != nil || h.NumRecords != 3 || h.Compression() != CompressionGzip {
		t.Fatalf("good batch: %+v %v", h, err)
	}
	badCRC := append([]byte(nil), good...)
	badCRC[len(badCRC)-1] ^= 1
	magic1 := append([]byte(nil), good...)
	magic1[offMagic] = 1
	for _, c := range []struct {
		name string
		in   []byte
		max  int
		want error
	}{
		{"empty", nil, 1 << 20, ErrCorrupt},
		{"two batches", append(append([]byte(nil), good...), good...), 1 << 20, ErrInvalidRecord},
		{"truncated", good[:len(good)-1], 1 << 20, ErrCorrupt},
		{"too large", good, len(good) - 1, ErrTooLarge},
		{"crc", badCRC, 1 << 20, ErrCorrupt},
		{"magic 1", magic1, 1 << 20, ErrUnsupportedMagic},
	} {
		if _, err := ReadProduced(c.in, c.max); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	// The records are CheckProduced's: a record's bad framing passes here.
	bad := recordtest.Batch(1000, recordtest.None, sampleRecs()...)
	bad[HeaderSize] = 0x7f // the first record's length, now past the batch
	SetCRC(bad)
	h, err := ReadProduced(bad, 1<<20)
	if err != nil {
		t.Fatalf("ReadProduced read the records: %v", err)
	}
	if _, _, _, err := CheckProduced(bad, h, noRules); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("CheckProduced on a bad record: %v", err)
	}
}

// TestCheckProducedTimestamps: records older than Before or newer than
// After around the broker's clock are refused on a CreateTime topic, each
// with its index and Kafka's message, compressed or not; a record without
// a timestamp (-1) and a LogAppendTime topic pass; a batch that says
// LogAppendTime is refused on any topic.
func TestCheckProducedTimestamps(t *testing.T) {
	const now = 1_000_000
	rules := func(createTime bool, before, after int64) ProduceRules {
		r := noRules
		r.CreateTime, r.NowMs, r.Bounds = createTime, now, TimestampBounds{before, after}
		return r
	}
	// First timestamp now-1000: deltas -1 (too old), 0 (the lower bound),
	// 1100 (the upper bound), 1101 (too new).
	recs := []recordtest.Rec{{TimestampDelta: -1}, {}, {TimestampDelta: 1100}, {TimestampDelta: 1101}}
	for _, codec := range []int8{recordtest.None, recordtest.Zstd, recordtest.Lz4} {
		b := recordtest.Batch(now-1000, codec, recs...)
		h := mustHeader(t, b)
		out, _, errs, err := CheckProduced(b, h, rules(true, 1000, 100))
		if err != nil || out != nil {
			t.Fatalf("codec %d: %v, batch %v", codec, err, out != nil)
		}
		if len(errs) != 2 || errs[0].Index != 0 || errs[1].Index != 3 {
			t.Fatalf("codec %d: refused %+v, want records 0 and 3", codec, errs)
		}
		want := "Timestamp 998999 of message with offset 0 is out of range. The timestamp should be within [999000, 1000100]"
		if errs[0].Message != want {
			t.Fatalf("message %q, want %q", errs[0].Message, want)
		}
		for _, c := range []struct {
			name string
			r    ProduceRules
			want []int32
		}{
			{"LogAppendTime topic", rules(false, 1000, 100), nil},
			{"unbounded", rules(true, math.MaxInt64, math.MaxInt64), nil},
			// Long.MAX on one side only: no overflow at the other.
			{"after only", rules(true, math.MaxInt64, 100), []int32{3}},
			{"before only", rules(true, 1000, math.MaxInt64), []int32{0}},
		} {
			out, _, errs, err := CheckProduced(b, h, c.r)
			var got []int32
			for _, e := range errs {
				got = append(got, e.Index)
			}
			if err != nil || fmt.Sprint(got) != fmt.Sprint(c.want) || (len(c.want) == 0) != (out != nil) {
				t.Fatalf("codec %d, %s: refused %v %v, want %v", codec, c.name, got, err, c.want)
			}
		}
	}

	// A record without a timestamp passes.
	b := recordtest.Batch(noTimestamp, recordtest.None, recordtest.Rec{})
	if _, _, errs, err := CheckProduced(b, mustHeader(t, b), rules(true, 1000, 100)); err != nil || errs != nil {
		t.Fatalf("no timestamp: %+v %v", errs, err)
	}

	// A producer's batch that says LogAppendTime, on either kind of topic.
	b = recordtest.Batch(now, recordtest.None, recordtest.Rec{}, recordtest.Rec{})
	binary.BigEndian.PutUint16(b[offAttributes:], binary.BigEndian.Uint16(b[offAttributes:])|attrLogAppendTime)
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	for _, createTime := range []bool{true, false} {
		_, _, errs, err := CheckProduced(b, mustHeader(t, b), rules(createTime, math.MaxInt64, math.MaxInt64))
		if err != nil || len(errs) != 2 || !strings.Contains(errs[1].Message, "should not set timestamp type to LogAppendTime") {
			t.Fatalf("createTime %v: %+v %v", createTime, errs, err)
		}
	}
}

// TestCheckProducedKeys: on a compacted topic a record without a key
// refuses the batch (ErrNoKey, an ErrInvalidRecord), compressed or not,
// before its timestamps are looked at; an empty key is a key; a delete
// topic takes keyless records.
func TestCheckProducedKeys(t *testing.T) {
	compacted := noRules
	compacted.Keys = true
	for _, codec := range []int8{recordtest.None, recordtest.Gzip, recordtest.Snappy} {
		b := recordtest.Batch(1000, codec, sampleRecs()...) // its second record has no key
		h := mustHeader(t, b)
		if _, _, _, err := CheckProduced(b, h, compacted); !errors.Is(err, ErrNoKey) || !errors.Is(err, ErrInvalidRecord) {
			t.Fatalf("codec %d: keyless record on a compacted topic: %v", codec, err)
		}
		bounded := compacted
		bounded.NowMs, bounded.Bounds = 1<<40, TimestampBounds{1, 1} // every record out of bounds
		if _, _, errs, err := CheckProduced(b, h, bounded); !errors.Is(err, ErrNoKey) || errs != nil {
			t.Fatalf("codec %d: keys are checked before timestamps: %v %+v", codec, err, errs)
		}
		if out, _, _, err := CheckProduced(b, h, noRules); err != nil || len(out) != len(b) {
			t.Fatalf("codec %d: keyless record on a delete topic: %v", codec, err)
		}
		keyed := recordtest.Batch(1000, codec, recordtest.Rec{Key: []byte("k")}, recordtest.Rec{Key: []byte{}})
		if _, _, _, err := CheckProduced(keyed, mustHeader(t, keyed), compacted); err != nil {
			t.Fatalf("codec %d: keyed records on a compacted topic: %v", codec, err)
		}
	}
}

// TestCheckProducedRecompress: with a topic codec that is not the batch's,
// the batch comes back re-encoded with it, and back to none: it validates,
// holds the same records (offsets, timestamps, keys, values, headers) and
// keeps the producer id, epoch, base sequence and transactional flag. A
// batch already in the topic's codec comes back as it was; a re-encoded
// batch over the limit is ErrTooLarge.
func TestCheckProducedRecompress(t *testing.T) {
	for _, from := range []int8{recordtest.None, recordtest.Gzip, recordtest.Zstd} {
		src := recordtest.Idempotent(recordtest.Batch(5000, from, sampleRecs()...), 77, 3, 40)
		h := mustHeader(t, src)
		h.Attributes |= attrTransactional // as the header a transactional producer's batch would carry
		want := dump(t, src)
		for _, to := range []int8{CompressionNone, CompressionGzip, CompressionSnappy, CompressionLz4, CompressionZstd} {
			r := noRules
			r.Codec = to
			out, nh, _, err := CheckProduced(src, h, r)
			if err != nil {
				t.Fatalf("%d to %d: %v", from, to, err)
			}
			if to == from {
				if &out[0] != &src[0] || nh != h {
					t.Fatalf("%d to %d: re-encoded", from, to)
				}
				continue
			}
			vh := mustHeader(t, out)
			if vh != nh || nh.Compression() != to || nh.ProducerID != 77 || nh.ProducerEpoch != 3 || nh.BaseSequence != 40 ||
				!nh.Transactional() || nh.LastOffsetDelta != h.LastOffsetDelta || nh.MaxTimestamp != h.MaxTimestamp {
				t.Fatalf("%d to %d: header %+v (validated %+v), from %+v", from, to, nh, vh, h)
			}
			if got := dump(t, out); got != want {
				t.Fatalf("%d to %d: records\n%s\nwant\n%s", from, to, got, want)
			}
			r.MaxBatchBytes = nh.Size() - 1
			if _, _, _, err := CheckProduced(src, h, r); !errors.Is(err, ErrTooLarge) {
				t.Fatalf("%d to %d: over the limit once re-encoded: %v", from, to, err)
			}
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

func dump(t *testing.T, batch []byte) string {
	t.Helper()
	s := ""
	if err := Records(batch, func(r Record) bool { s += fmt.Sprintf("%+v\n", r); return true }); err != nil {
		t.Fatal(err)
	}
	return s
}
