package storage

import (
	"errors"
	"math"
	"testing"

	"github.com/samsa-kafka/samsa/internal/record"
)

// pb is an appended batch of producer 7 in a rules table: epoch, base
// sequence, records, base offset.
type pb struct {
	epoch int16
	seq   int32
	n     int32
	base  int64
}

func (b pb) header() record.Header {
	return record.Header{ProducerID: 7, ProducerEpoch: b.epoch, BaseSequence: b.seq, LastOffsetDelta: b.n - 1,
		NumRecords: b.n, BaseOffset: b.base, MaxTimestamp: 1000 + b.base, BatchLength: 100}
}

// fiveBatches are seqs 0..9 in five batches of two at offsets 100, 110, ...
var fiveBatches = []pb{{0, 0, 2, 100}, {0, 2, 2, 110}, {0, 4, 2, 120}, {0, 6, 2, 130}, {0, 8, 2, 140}}

func TestProducerRules(t *testing.T) {
	sixBatches := append([]pb{{0, 0, 2, 90}}, fiveBatches...)
	sixBatches[1].seq, sixBatches[2].seq, sixBatches[3].seq, sixBatches[4].seq, sixBatches[5].seq = 2, 4, 6, 8, 10
	cases := []struct {
		name    string
		before  []pb
		batch   pb
		err     error
		dupBase int64 // the original's first offset if a duplicate, else -1
	}{
		{"unknown producer at sequence 0", nil, pb{0, 0, 1, 0}, nil, -1},
		{"unknown producer at sequence 7 (KIP-360)", nil, pb{3, 7, 1, 0}, nil, -1},
		{"next sequence", fiveBatches, pb{0, 10, 3, 0}, nil, -1},
		{"retry of the last batch", fiveBatches, pb{0, 8, 2, 0}, nil, 140},
		{"retry of the oldest of five", fiveBatches, pb{0, 0, 2, 0}, nil, 100},
		{"retry of a middle batch", fiveBatches, pb{0, 4, 2, 0}, nil, 120},
		{"retry of a sixth-last batch, forgotten", sixBatches, pb{0, 0, 2, 0}, ErrOutOfOrderSequence, -1},
		{"same first sequence, other length", fiveBatches, pb{0, 8, 3, 0}, ErrOutOfOrderSequence, -1},
		{"gap", fiveBatches, pb{0, 11, 1, 0}, ErrOutOfOrderSequence, -1},
		{"sequence going back", fiveBatches, pb{0, 9, 1, 0}, ErrOutOfOrderSequence, -1},
		{"older epoch", []pb{{2, 0, 1, 0}}, pb{1, 1, 1, 0}, ErrInvalidProducerEpoch, -1},
		{"older epoch, retry-looking", []pb{{1, 0, 1, 0}, {2, 0, 1, 1}}, pb{1, 0, 1, 0}, ErrInvalidProducerEpoch, -1},
		{"newer epoch at 0", fiveBatches, pb{1, 0, 1, 0}, nil, -1},
		{"newer epoch not at 0", fiveBatches, pb{1, 10, 1, 0}, ErrOutOfOrderSequence, -1},
		{"wrap after 2^31-1", []pb{{0, math.MaxInt32 - 1, 2, 0}}, pb{0, 0, 1, 0}, nil, -1},
		{"no wrap before 2^31-1", []pb{{0, math.MaxInt32 - 2, 2, 0}}, pb{0, 0, 1, 0}, ErrOutOfOrderSequence, -1},
		{"batch across the wrap, then next", []pb{{0, math.MaxInt32 - 1, 4, 0}}, pb{0, 2, 1, 0}, nil, -1},
		{"retry of a batch across the wrap", []pb{{0, math.MaxInt32 - 1, 4, 50}}, pb{0, math.MaxInt32 - 1, 4, 0}, nil, 50},
		{"negative epoch", nil, pb{-1, 0, 1, 0}, ErrInvalidProducerBatch, -1},
		{"negative sequence", fiveBatches, pb{0, -1, 1, 0}, ErrInvalidProducerBatch, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newProducerStates()
			for _, b := range c.before {
				h := b.header()
				s.update(&h)
			}
			h := c.batch.header()
			dup, isDup, err := s.checkBatch(&h)
			if !errors.Is(err, c.err) || (err == nil) != (c.err == nil) {
				t.Fatalf("err = %v, want %v", err, c.err)
			}
			if isDup != (c.dupBase >= 0) || isDup && dup.firstOffset() != c.dupBase {
				t.Fatalf("dup = %v %+v, want first offset %d", isDup, dup, c.dupBase)
			}
		})
	}
}

func TestProducerBatchShape(t *testing.T) {
	for _, h := range []record.Header{
		{ProducerID: 1, ProducerEpoch: 0, BaseSequence: 0, LastOffsetDelta: 2, NumRecords: 2},
		{ProducerID: 1, ProducerEpoch: 0, BaseSequence: 0, LastOffsetDelta: 0, NumRecords: 0},
		{ProducerID: 1, ProducerEpoch: 0, BaseSequence: 0, LastOffsetDelta: -1, NumRecords: 0},
	} {
		_, _, err := (*producerStates)(nil).checkBatch(&h)
		if !errors.Is(err, ErrInvalidProducerBatch) || !errors.Is(err, record.ErrInvalidRecord) {
			t.Errorf("%+v: err = %v, want an invalid record", h, err)
		}
	}
}

func TestProducerUpdate(t *testing.T) {
	s := newProducerStates()
	for _, b := range append(append([]pb{}, fiveBatches...), pb{0, 10, 1, 150}) {
		h := b.header()
		s.update(&h)
	}
	e := s.producers[7]
	if e.n != producerBatches || e.lastSeq() != 10 || e.batches[e.head].lastOffset != 111 {
		t.Fatalf("after six batches: %+v, want the last five", e)
	}
	h := pb{3, 0, 1, 160}.header()
	s.update(&h)
	if e.epoch != 3 || e.n != 1 || e.lastSeq() != 0 || e.lastTimestamp() != 1160 {
		t.Fatalf("after a new epoch: %+v, want its batch alone", e)
	}
	txn := pb{3, 1, 1, 170}.header()
	txn.Attributes = 0x10
	s.update(&txn)
	if e.txnFirstOffset != 170 {
		t.Fatalf("transactional batch: txn first offset %d, want 170", e.txnFirstOffset)
	}
	s.endTxn(record.Marker{ProducerID: 7, ProducerEpoch: 4, CoordinatorEpoch: 2, Commit: true}, 171)
	if e.txnFirstOffset != -1 || e.epoch != 4 || e.n != 0 || e.coordinatorEpoch != 2 || len(s.open) != 0 {
		t.Fatalf("after a marker of a newer epoch: %+v", e)
	}
	plain := record.Header{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	s.update(&plain)
	if len(s.producers) != 1 {
		t.Fatalf("a batch without producer id made an entry: %d producers", len(s.producers))
	}
}

func TestProducerExpire(t *testing.T) {
	cases := []struct {
		name    string
		lastTS  int64
		txn     bool
		now     int64
		expired bool
	}{
		{"idle exactly the expiration", 1000, false, 1000 + 500, true},
		{"idle less", 1000, false, 1000 + 499, false},
		{"open transaction", 1000, true, 1_000_000, false},
	}
	for _, c := range cases {
		s := newProducerStates()
		h := record.Header{ProducerID: 1, NumRecords: 1, MaxTimestamp: c.lastTS}
		if c.txn {
			h.Attributes = 0x10
		}
		s.update(&h)
		if n := s.expire(c.now, 500); (n == 1) != c.expired || (len(s.producers) == 0) != c.expired {
			t.Errorf("%s: expired %d, %d left; want expired %v", c.name, n, len(s.producers), c.expired)
		}
	}
}

func TestSequenceArithmetic(t *testing.T) {
	cases := []struct{ seq, by, inc int32 }{
		{0, 0, 0}, {5, 3, 8}, {math.MaxInt32, 0, math.MaxInt32}, {math.MaxInt32, 1, 0},
		{math.MaxInt32 - 1, 3, 1}, {math.MaxInt32 - 4, 4, math.MaxInt32},
	}
	for _, c := range cases {
		if got := incSeq(c.seq, c.by); got != c.inc {
			t.Errorf("incSeq(%d, %d) = %d, want %d", c.seq, c.by, got, c.inc)
		}
		if got := decSeq(c.inc, c.by); got != c.seq {
			t.Errorf("decSeq(%d, %d) = %d, want %d", c.inc, c.by, got, c.seq)
		}
	}
	if !inSequence(math.MaxInt32, 0) || !inSequence(-1, 0) || inSequence(3, 5) || inSequence(math.MaxInt32, 1) {
		t.Error("inSequence")
	}
}
