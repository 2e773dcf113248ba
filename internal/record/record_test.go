package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/samsa-kafka/samsa/internal/record/recordtest"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func sampleRecs() []recordtest.Rec {
	return []recordtest.Rec{
		{Key: []byte("k0"), Value: []byte("v0")},
		{Key: nil, Value: []byte{}, TimestampDelta: 5},
		{Key: []byte("k2"), Value: nil, TimestampDelta: 3, Headers: []kmsg.Header{{Key: "h", Value: []byte("hv")}, {Key: "n", Value: nil}}},
	}
}

func TestReadHeader(t *testing.T) {
	b := recordtest.Batch(1000, recordtest.None, sampleRecs()...)
	SetBaseOffset(b, 42)
	SetPartitionLeaderEpoch(b, 7)
	h, err := ReadHeader(b)
	if err != nil {
		t.Fatal(err)
	}
	if h.BaseOffset != 42 || h.PartitionLeaderEpoch != 7 || h.Magic != 2 || h.NumRecords != 3 ||
		h.LastOffset() != 44 || h.FirstTimestamp != 1000 || h.MaxTimestamp != 1005 || h.Size() != len(b) ||
		h.ProducerID != -1 || h.Compression() != 0 || h.LogAppendTime() || h.Control() || h.Transactional() {
		t.Fatalf("header %+v", h)
	}
	if !CheckCRC(b) {
		t.Fatal("offset and epoch rewrites must not break the CRC")
	}
	if _, err := ReadHeader(b[:HeaderSize-1]); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("short header: %v", err)
	}
	bad := bytes.Clone(b)
	binary.BigEndian.PutUint32(bad[8:], 10)
	if _, err := ReadHeader(bad); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("implausible length: %v", err)
	}
}

func TestValidate(t *testing.T) {
	good := recordtest.Batch(1000, recordtest.None, sampleRecs()...)
	two := append(bytes.Clone(good), recordtest.Values(2000, "a", "b")...)
	mutate := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	resum := func(b []byte) []byte { SetCRC(b); return b }
	tests := []struct {
		name    string
		in      []byte
		max     int
		want    error
		batches int
	}{
		{"one batch", good, 1 << 20, nil, 1},
		{"two batches", two, 1 << 20, nil, 2},
		{"empty", nil, 1 << 20, ErrCorrupt, 0},
		{"truncated", good[:len(good)-1], 1 << 20, ErrCorrupt, 0},
		{"truncated header", good[:30], 1 << 20, ErrCorrupt, 0},
		{"second truncated", two[:len(two)-3], 1 << 20, ErrCorrupt, 0},
		{"flipped payload byte", mutate(func(b []byte) []byte { b[len(b)-2] ^= 1; return b }), 1 << 20, ErrCorrupt, 0},
		{"flipped attribute byte", mutate(func(b []byte) []byte { b[22] ^= 0x40; return b }), 1 << 20, ErrCorrupt, 0},
		{"magic 1", mutate(func(b []byte) []byte { b[16] = 1; return b }), 1 << 20, ErrUnsupportedMagic, 0},
		{"too large", good, len(good) - 1, ErrTooLarge, 0},
		{"count mismatch", mutate(func(b []byte) []byte { binary.BigEndian.PutUint32(b[57:], 2); return resum(b) }), 1 << 20, ErrInvalidRecord, 0},
		{"zero records", mutate(func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[57:], 0)
			binary.BigEndian.PutUint32(b[23:], 0xffffffff)
			return resum(b)
		}), 1 << 20, ErrInvalidRecord, 0},
		{"delta and count agree, records do not", mutate(func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[57:], 2)
			binary.BigEndian.PutUint32(b[23:], 1)
			return resum(b)
		}), 1 << 20, ErrInvalidRecord, 0},
		{"two records", recordtest.Batch(0, recordtest.None, recordtest.Rec{Value: []byte("x")}, recordtest.Rec{Value: []byte("y")}), 1 << 20, nil, 1},
		{"corrupt record length", mutate(func(b []byte) []byte { b[HeaderSize] = 0x7f; return resum(b) }), 1 << 20, ErrInvalidRecord, 0},
		{"garbage codec", mutate(func(b []byte) []byte { b[22] |= 1; return resum(b) }), 1 << 20, ErrInvalidRecord, 0},
		{"unknown codec", mutate(func(b []byte) []byte { b[22] |= 7; return resum(b) }), 1 << 20, ErrInvalidRecord, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hdrs, err := Validate(tc.in, tc.max)
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if len(hdrs) != tc.batches {
				t.Fatalf("%d headers, want %d", len(hdrs), tc.batches)
			}
		})
	}
}

func TestValidateOffsetDeltaOrder(t *testing.T) {
	// Two one-byte-value records with offset deltas swapped: same length,
	// so only the order check can catch it.
	recs := []kmsg.Record{{OffsetDelta: 1, Value: []byte("a")}, {OffsetDelta: 0, Value: []byte("b")}}
	var body []byte
	for _, r := range recs {
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		body = r.AppendTo(body)
	}
	rb := kmsg.RecordBatch{Magic: 2, LastOffsetDelta: 1, NumRecords: 2, Records: body, Length: int32(49 + len(body))}
	b := rb.AppendTo(nil)
	SetCRC(b)
	if _, err := Validate(b, 1<<20); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("err = %v", err)
	}
}

func TestRecordsAllCodecs(t *testing.T) {
	codecs := []int8{recordtest.None, recordtest.Gzip, recordtest.Snappy, recordtest.SnappyXerial, recordtest.Lz4, recordtest.Zstd}
	for _, c := range codecs {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			b := recordtest.Batch(1000, c, sampleRecs()...)
			SetBaseOffset(b, 100)
			hdrs, err := Validate(b, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if want := c % 100; hdrs[0].Compression() != want && !(c == recordtest.SnappyXerial && hdrs[0].Compression() == 2) {
				t.Fatalf("codec %d", hdrs[0].Compression())
			}
			var got []Record
			if err := Records(b, func(r Record) bool { got = append(got, r); return true }); err != nil {
				t.Fatal(err)
			}
			checkSample(t, got)
		})
	}
}

func checkSample(t *testing.T, got []Record) {
	t.Helper()
	if len(got) != 3 {
		t.Fatalf("%d records", len(got))
	}
	want := []Record{
		{Offset: 100, Timestamp: 1000, Key: []byte("k0"), Value: []byte("v0")},
		{Offset: 101, Timestamp: 1005, Key: nil, Value: []byte{}},
		{Offset: 102, Timestamp: 1003, Key: []byte("k2"), Value: nil, Headers: []RecordHeader{{"h", []byte("hv")}, {"n", nil}}},
	}
	for i, w := range want {
		g := got[i]
		if g.Offset != w.Offset || g.Timestamp != w.Timestamp || !bytes.Equal(g.Key, w.Key) || !bytes.Equal(g.Value, w.Value) ||
			(g.Key == nil) != (w.Key == nil) || (g.Value == nil) != (w.Value == nil) || len(g.Headers) != len(w.Headers) {
			t.Fatalf("record %d = %+v, want %+v", i, g, w)
		}
		for j, h := range w.Headers {
			if g.Headers[j].Key != h.Key || !bytes.Equal(g.Headers[j].Value, h.Value) || (g.Headers[j].Value == nil) != (h.Value == nil) {
				t.Fatalf("record %d header %d = %+v", i, j, g.Headers[j])
			}
		}
	}
}

func TestRecordsStopsEarly(t *testing.T) {
	b := recordtest.Values(0, "a", "b", "c")
	n := 0
	if err := Records(b, func(Record) bool { n++; return n < 2 }); err != nil || n != 2 {
		t.Fatalf("n=%d err=%v", n, err)
	}
}

func TestSetLogAppendTime(t *testing.T) {
	for _, c := range []int8{recordtest.None, recordtest.Zstd} {
		b := recordtest.Batch(1000, c, sampleRecs()...)
		SetLogAppendTime(b, 99999)
		if !CheckCRC(b) {
			t.Fatal("CRC invalid after LogAppendTime rewrite")
		}
		hdrs, err := Validate(b, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if !hdrs[0].LogAppendTime() || hdrs[0].MaxTimestamp != 99999 || hdrs[0].Compression() != c {
			t.Fatalf("header %+v", hdrs[0])
		}
		err = Records(b, func(r Record) bool {
			if r.Timestamp != 99999 {
				t.Errorf("record timestamp %d, want the append time", r.Timestamp)
			}
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestSettersIgnoreShortInput(t *testing.T) {
	short := make([]byte, 10)
	SetBaseOffset(short, 1)
	SetPartitionLeaderEpoch(short, 1)
	SetLogAppendTime(short, 1)
	SetCRC(short)
	if !bytes.Equal(short, make([]byte, 10)) || CheckCRC(short) {
		t.Fatal("short input modified or accepted")
	}
}
