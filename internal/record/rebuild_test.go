package record_test

import (
	"bytes"
	"testing"

	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/samsa-kafka/samsa/internal/record/recordtest"
)

// TestRebuildKeepsOffsetsAndCodec thins a batch of each codec to its 2nd
// and 4th records, with and without a delete horizon and to nothing, and
// reads it back.
func TestRebuildKeepsOffsetsAndCodec(t *testing.T) {
	for _, codec := range []int8{recordtest.None, recordtest.Gzip, recordtest.Snappy, recordtest.Lz4, recordtest.Zstd} {
		b := recordtest.Batch(1000, codec,
			recordtest.Rec{Key: []byte("a"), Value: []byte("1")},
			recordtest.Rec{Key: []byte("b"), Value: []byte("2"), TimestampDelta: 5},
			recordtest.Rec{Key: []byte("a"), Value: []byte("3"), TimestampDelta: 7},
			recordtest.Rec{Key: []byte("c"), Value: nil, TimestampDelta: 9})
		record.SetBaseOffset(b, 100)
		h, err := record.ReadHeader(b)
		if err != nil {
			t.Fatal(err)
		}
		var all []record.Record
		if err := record.Records(b, func(r record.Record) bool { all = append(all, r); return true }); err != nil {
			t.Fatal(err)
		}
		for _, horizon := range []int64{-1, 5000} {
			out, err := record.Rebuild(nil, h, []record.Record{all[1], all[3]}, horizon)
			if err != nil {
				t.Fatal(err)
			}
			if !record.CheckCRC(out) {
				t.Fatalf("codec %d: bad CRC", codec)
			}
			nh, _ := record.ReadHeader(out)
			if nh.BaseOffset != 100 || nh.LastOffset() != 103 || nh.NumRecords != 2 || nh.Compression() != codec {
				t.Fatalf("codec %d: header %+v", codec, nh)
			}
			if hz, ok := nh.DeleteHorizon(); ok != (horizon >= 0) || (ok && hz != horizon) {
				t.Fatalf("codec %d: horizon %d %v", codec, hz, ok)
			}
			var got []record.Record
			if err := record.Records(out, func(r record.Record) bool { got = append(got, r); return true }); err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 || got[0].Offset != 101 || got[1].Offset != 103 || got[0].Timestamp != 1005 ||
				got[1].Timestamp != 1009 || !bytes.Equal(got[0].Value, []byte("2")) || got[1].Value != nil {
				t.Fatalf("codec %d: records %+v", codec, got)
			}
		}
		empty, err := record.Rebuild(nil, h, nil, -1)
		if err != nil {
			t.Fatal(err)
		}
		eh, _ := record.ReadHeader(empty)
		if len(empty) != record.HeaderSize || eh.NumRecords != 0 || eh.LastOffset() != 103 || !record.CheckCRC(empty) {
			t.Fatalf("codec %d: empty batch %+v", codec, eh)
		}
		if err := record.Records(empty, func(record.Record) bool { t.Fatal("record in empty batch"); return true }); err != nil {
			t.Fatal(err)
		}
	}
}
