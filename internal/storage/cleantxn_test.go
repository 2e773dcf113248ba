package storage

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
	"strings"
	"testing"

	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/samsa-kafka/samsa/internal/record/recordtest"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Batches as producers and transaction markers write them, and a pass of
// the cleaner over batches in memory (the map, then the filter, as
// cleanlog.go runs them over segments).

// recKV is one record for the builders: key=value, "-" a tombstone.
type recKV struct{ k, v string }

func (r recKV) rec() recordtest.Rec {
	if r.v == "-" {
		return recordtest.Rec{Key: []byte(r.k)}
	}
	return recordtest.Rec{Key: []byte(r.k), Value: []byte(r.v)}
}

// withProducer stamps attributes, producer id, epoch and base sequence on
// a batch built by recordtest and recomputes its CRC.
func withProducer(b []byte, attrs int16, pid int64, epoch int16, seq int32) []byte {
	be := binary.BigEndian
	be.PutUint16(b[21:], uint16(int16(be.Uint16(b[21:]))|attrs))
	be.PutUint64(b[43:], uint64(pid))
	be.PutUint16(b[51:], uint16(epoch))
	be.PutUint32(b[53:], uint32(seq))
	be.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// txnDataBatch is a transactional producer's batch.
func txnDataBatch(ts int64, codec int8, pid int64, epoch int16, seq int32, recs ...recKV) []byte {
	rs := make([]recordtest.Rec, len(recs))
	for i, r := range recs {
		rs[i] = r.rec()
	}
	return withProducer(recordtest.Batch(ts, codec, rs...), 0x10, pid, epoch, seq)
}

// plainData is a non-transactional batch.
func plainData(ts int64, recs ...recKV) []byte {
	rs := make([]recordtest.Rec, len(recs))
	for i, r := range recs {
		rs[i] = r.rec()
	}
	return recordtest.Batch(ts, recordtest.None, rs...)
}

// txnMarker is a COMMIT or ABORT marker as a partition leader writes it:
// a control batch of the producer with one record, key ControlRecordKey,
// value EndTxnMarker.
func txnMarker(ts int64, pid int64, epoch int16, commit bool) []byte {
	key := kmsg.ControlRecordKey{Type: kmsg.ControlRecordKeyTypeAbort}
	if commit {
		key.Type = kmsg.ControlRecordKeyTypeCommit
	}
	val := kmsg.EndTxnMarker{CoordinatorEpoch: 3}
	b := recordtest.Batch(ts, recordtest.None, recordtest.Rec{Key: key.AppendTo(nil), Value: val.AppendTo(nil)})
	return withProducer(b, 0x30, pid, epoch, -1)
}

// memLog assigns offsets to batches as a log appends them.
func memLog(batches ...[]byte) [][]byte {
	next := int64(0)
	for _, b := range batches {
		record.SetBaseOffset(b, next)
		h, _ := record.ReadHeader(b)
		next = h.LastOffset() + 1
	}
	return batches
}

// memPass runs one cleaning pass over batches (the whole log dirty) at
// nowMs with delete.retention.ms 100: the map without aborted data and
// markers, then each batch filtered. It returns what the pass keeps and
// the refs of the aborted transactions kept for the .txnindex.
func memPass(t *testing.T, batches [][]byte, aborts []txnAbort, liveLast map[int64]int64, markerEpoch map[int64]int16, nowMs int64) ([][]byte, []int) {
	t.Helper()
	c := newCleaner(1<<16, 0, 0.9, nil)
	cfg := DefaultLogConfig()
	cfg.DeleteRetentionMs = 100
	job := &cleanJob{cfg: cfg, liveLast: liveLast, markerEpoch: markerEpoch}
	txns := newCleanTxns(aborts)
	for _, b := range batches {
		h, _ := record.ReadHeader(b)
		if full, err := c.mapBatch(txns, h, b, 0); full || err != nil {
			t.Fatalf("map: %v %v", full, err)
		}
	}
	c.txns = newCleanTxns(aborts)
	var out [][]byte
	for _, b := range batches {
		h, _ := record.ReadHeader(b)
		o, err := c.filterBatch(nil, job, h, b, nowMs)
		if err != nil {
			t.Fatal(err)
		}
		if len(o) > 0 {
			oh, err := record.ReadHeader(o)
			if err != nil || oh.Size() != len(o) || !record.CheckCRC(o) || oh.BaseOffset != h.BaseOffset || oh.LastOffset() != h.LastOffset() {
				t.Fatalf("cleaned batch at %d: %+v %v", h.BaseOffset, oh, err)
			}
			if err := record.Records(o, func(record.Record) bool { return true }); err != nil {
				t.Fatalf("cleaned batch at %d: %v", h.BaseOffset, err)
			}
			out = append(out, o)
		}
	}
	return out, c.keptAborts
}

// describeBatches renders batches: "<base> <what>", what being COMMIT, ABORT or
// marker for a control batch, else [p<id>] (txn) and key=value records;
// "empty" a batch without records, h=<ms> a delete horizon.
func describeBatches(batches [][]byte) []string {
	var out []string
	for _, b := range batches {
		h, _ := record.ReadHeader(b)
		var recs []record.Record
		record.Records(b, func(r record.Record) bool { recs = append(recs, r); return true })
		var parts []string
		switch {
		case h.Control():
			parts = append(parts, [...]string{"ABORT", "COMMIT", "marker", "marker?"}[markerKindOf(recs)])
		default:
			if h.ProducerID >= 0 {
				parts = append(parts, fmt.Sprintf("p%d", h.ProducerID))
			}
			if h.Transactional() {
				parts = append(parts, "txn")
			}
			for _, r := range recs {
				v := string(r.Value)
				if r.Value == nil {
					v = "-"
				}
				parts = append(parts, string(r.Key)+"="+v)
			}
		}
		if len(recs) == 0 && !h.Control() {
			parts = append(parts, "empty")
		}
		if hz, ok := h.DeleteHorizon(); ok {
			parts = append(parts, fmt.Sprintf("h=%d", hz))
		}
		out = append(out, fmt.Sprintf("%d %s", h.BaseOffset, strings.Join(parts, " ")))
	}
	return out
}

// TestCleanTxnPasses runs successive passes over logs written by
// transactional producers: per pass, the time, the aborted transactions
// the .txnindex holds (refs into the scenario's list; a pass rewrites it
// to those kept), and what the log holds after it.
func TestCleanTxnPasses(t *testing.T) {
	type pass struct {
		nowMs int64
		want  []string
	}
	const p1, p2 = 1, 2
	for _, tc := range []struct {
		name        string
		log         [][]byte
		aborts      []txnAbort
		liveLast    map[int64]int64
		markerEpoch map[int64]int16
		passes      []pass
	}{{
		name: "aborted data goes at once, its marker after the horizon of the next pass",
		log: memLog(txnDataBatch(10, recordtest.None, p1, 0, 0, recKV{"a", "1"}, recKV{"b", "1"}), txnDataBatch(11, recordtest.Gzip, p1, 0, 2, recKV{"c", "1"}),
			txnMarker(12, p1, 0, false), plainData(13, recKV{"d", "1"})),
		aborts: []txnAbort{{p1, 0, 3, 0}},
		passes: []pass{
			{1000, []string{"3 ABORT", "4 d=1"}},
			{1000, []string{"3 ABORT h=1100", "4 d=1"}},
			{1099, []string{"3 ABORT h=1100", "4 d=1"}},
			{1100, []string{"4 d=1"}},
		},
	}, {
		name: "committed data superseded: the marker stays a pass, then waits for its horizon",
		log:  memLog(txnDataBatch(10, recordtest.None, p2, 0, 0, recKV{"a", "1"}), txnMarker(11, p2, 0, true), plainData(12, recKV{"a", "2"})),
		passes: []pass{
			{1000, []string{"1 COMMIT", "2 a=2"}},
			{2000, []string{"1 COMMIT h=2100", "2 a=2"}},
			{2100, []string{"2 a=2"}},
		},
	}, {
		name: "aborted record of a key does not supersede a committed one",
		log: memLog(txnDataBatch(10, recordtest.None, p2, 0, 0, recKV{"a", "committed"}), txnDataBatch(11, recordtest.Lz4, p1, 0, 0, recKV{"a", "aborted"}, recKV{"b", "aborted"}),
			txnMarker(12, p1, 0, false), txnMarker(13, p2, 0, true)),
		aborts: []txnAbort{{p1, 1, 3, 0}},
		passes: []pass{
			{1000, []string{"0 p2 txn a=committed", "3 ABORT", "4 COMMIT"}},
			{1000, []string{"0 p2 txn a=committed", "3 ABORT h=1100", "4 COMMIT"}},
			{1100, []string{"0 p2 txn a=committed", "4 COMMIT"}},
		},
	}, {
		name: "a producer's aborted transaction, then its committed one",
		log: memLog(txnDataBatch(10, recordtest.Zstd, p1, 0, 0, recKV{"a", "1"}), txnMarker(11, p1, 0, false),
			txnDataBatch(12, recordtest.Zstd, p1, 0, 1, recKV{"a", "2"}, recKV{"b", "2"}), txnMarker(13, p1, 0, true)),
		aborts: []txnAbort{{p1, 0, 1, 0}},
		passes: []pass{
			{1000, []string{"1 ABORT", "2 p1 txn a=2 b=2", "4 COMMIT"}},
			{1000, []string{"1 ABORT h=1100", "2 p1 txn a=2 b=2", "4 COMMIT"}},
			{5000, []string{"2 p1 txn a=2 b=2", "4 COMMIT"}},
		},
	}, {
		name: "a tombstone in a committed transaction: its marker goes after the tombstone",
		log: memLog(plainData(10, recKV{"a", "1"}), txnDataBatch(11, recordtest.None, p1, 0, 0, recKV{"a", "-"}), txnMarker(12, p1, 0, true),
			plainData(13, recKV{"s", "1"})),
		passes: []pass{
			{1000, []string{"1 p1 txn a=- h=1100", "2 COMMIT", "3 s=1"}},
			{1100, []string{"2 COMMIT", "3 s=1"}},
			{1100, []string{"2 COMMIT h=1200", "3 s=1"}},
			{1200, []string{"3 s=1"}},
		},
	}, {
		name:     "the producer's newest batch stays empty, and so does its aborted transaction",
		log:      memLog(txnDataBatch(10, recordtest.None, p1, 0, 0, recKV{"a", "1"}), txnMarker(11, p1, 0, false)),
		aborts:   []txnAbort{{p1, 0, 1, 0}},
		liveLast: map[int64]int64{p1: 0},
		passes: []pass{
			{1000, []string{"0 p1 txn empty", "1 ABORT"}},
			{9000, []string{"0 p1 txn empty", "1 ABORT"}},
		},
	}, {
		name:     "a marker that is its producer's newest stays, emptied after its horizon",
		log:      memLog(plainData(10, recKV{"a", "1"}), txnMarker(11, p1, 0, true)),
		liveLast: map[int64]int64{p1: 1},
		passes: []pass{
			{1000, []string{"0 a=1", "1 COMMIT h=1100"}},
			{1100, []string{"0 a=1", "1 marker"}},
			{1100, []string{"0 a=1", "1 marker"}},
		},
	}, {
		name: "a producer with no batch remembered (its epoch bumped by a marker) keeps its markers of that epoch",
		log: memLog(plainData(10, recKV{"a", "1"}), txnMarker(11, p1, 0, false), txnMarker(12, p1, 1, false),
			txnMarker(13, p2, 0, true)),
		aborts:      []txnAbort{{p1, 1, 1, 0}, {p1, 2, 2, 1}},
		markerEpoch: map[int64]int16{p1: 1, p2: 1},
		passes: []pass{
			{1000, []string{"0 a=1", "1 ABORT h=1100", "2 ABORT h=1100", "3 COMMIT h=1100"}},
			{1100, []string{"0 a=1", "2 marker"}},
		},
	}, {
		name:   "an aborted transaction with no data here, its index entry listed twice",
		log:    memLog(plainData(10, recKV{"a", "1"}), txnMarker(11, p1, 0, false), plainData(12, recKV{"a", "2"})),
		aborts: []txnAbort{{p1, 1, 1, 0}, {p1, 1, 1, 1}},
		passes: []pass{
			{1000, []string{"1 ABORT h=1100", "2 a=2"}},
			{1100, []string{"2 a=2"}},
		},
	}, {
		name: "interleaved producers and plain data",
		log: memLog(txnDataBatch(10, recordtest.None, p1, 0, 0, recKV{"a", "p1"}), plainData(11, recKV{"a", "plain"}),
			txnDataBatch(12, recordtest.Snappy, p2, 0, 0, recKV{"b", "p2"}, recKV{"c", "p2"}), txnDataBatch(13, recordtest.None, p1, 0, 1, recKV{"c", "p1"}),
			txnMarker(14, p2, 0, true), txnMarker(15, p1, 0, false), plainData(16, recKV{"b", "plain"})),
		aborts: []txnAbort{{p1, 0, 6, 0}},
		passes: []pass{
			{1000, []string{"1 a=plain", "2 p2 txn c=p2", "5 COMMIT", "6 ABORT", "7 b=plain"}},
			{1000, []string{"1 a=plain", "2 p2 txn c=p2", "5 COMMIT", "6 ABORT h=1100", "7 b=plain"}},
			{1100, []string{"1 a=plain", "2 p2 txn c=p2", "5 COMMIT", "7 b=plain"}},
		},
	}, {
		name:   "an index entry whose marker is gone does not abort its producer's later transaction",
		log:    memLog(plainData(10, recKV{"a", "1"}), txnDataBatch(11, recordtest.None, p1, 1, 0, recKV{"b", "1"}), txnMarker(12, p1, 1, true)),
		aborts: []txnAbort{{p1, 0, 0, 0}},
		passes: []pass{
			{1000, []string{"0 a=1", "1 p1 txn b=1", "2 COMMIT"}},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			batches, aborts := tc.log, tc.aborts
			for i, p := range tc.passes {
				out, kept := memPass(t, batches, aborts, tc.liveLast, tc.markerEpoch, p.nowMs)
				if got := describeBatches(out); !slices.Equal(got, p.want) {
					t.Fatalf("pass %d at %d:\n got %q\nwant %q", i+1, p.nowMs, got, p.want)
				}
				var next []txnAbort
				for _, ref := range kept {
					next = append(next, aborts[ref])
				}
				batches, aborts = out, next
			}
		})
	}
}

func TestBatchFate(t *testing.T) {
	for _, tc := range []struct {
		name                                    string
		control, discardable, empty, hasHorizon bool
		horizon                                 int64
		producersLast                           bool
		want                                    batchFate
	}{
		{"data", false, false, false, false, 0, false, fateFilter},
		{"aborted data", false, true, false, false, 0, false, fateDrop},
		{"aborted data, producer's newest", false, true, false, false, 0, true, fateEmpty},
		{"marker, data may remain", true, false, false, false, 0, false, fateKeep},
		{"marker, no data, no horizon", true, true, false, false, 0, false, fateHorizon},
		{"marker, no data, no horizon, producer's newest", true, true, false, false, 0, true, fateHorizon},
		{"marker before its horizon", true, true, false, true, 101, false, fateKeep},
		{"marker at its horizon", true, true, false, true, 100, false, fateDrop},
		{"marker at its horizon, producer's newest", true, true, false, true, 100, true, fateEmpty},
		{"empty marker", true, true, true, false, 0, false, fateDrop},
		{"empty marker, producer's newest", true, true, true, false, 0, true, fateEmpty},
	} {
		if got := batchFateOf(tc.control, tc.discardable, tc.empty, tc.horizon, tc.hasHorizon, tc.producersLast, 100); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}
