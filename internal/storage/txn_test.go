package storage

import (
	"errors"
	"slices"
	"testing"

	"github.com/samsa-kafka/samsa/internal/record"
)

// txnEv is one step of a transaction script: a data batch of producer pid
// at off (transactional or not), or a marker (commit or abort) at off.
type txnEv struct {
	pid    int64
	off    int64
	txn    bool
	marker int8 // 0 data, 1 commit, 2 abort
}

func dataEv(pid, off int64) txnEv    { return txnEv{pid: pid, off: off} }
func txnDataEv(pid, off int64) txnEv { return txnEv{pid: pid, off: off, txn: true} }
func commitEv(pid, off int64) txnEv  { return txnEv{pid: pid, off: off, marker: 1} }
func abortEv(pid, off int64) txnEv   { return txnEv{pid: pid, off: off, marker: 2} }

// runTxnScript applies evs to a fresh state as the log does, returning it
// and the index entries made for aborts.
func runTxnScript(evs []txnEv) (*producerStates, []abortedTxn) {
	s := newProducerStates()
	var idx []abortedTxn
	seq := map[int64]int32{}
	for _, ev := range evs {
		if ev.marker == 0 {
			h := record.Header{ProducerID: ev.pid, BaseOffset: ev.off, BaseSequence: seq[ev.pid], NumRecords: 1}
			if ev.txn {
				h.Attributes = 0x10
			}
			seq[ev.pid]++
			s.update(&h)
			continue
		}
		t, completed := s.endTxn(record.Marker{ProducerID: ev.pid, Commit: ev.marker == 1}, ev.off)
		if completed && t.aborted {
			idx = append(idx, abortedTxn{producerID: t.producerID, firstOffset: t.first, lastOffset: t.last,
				lastStableOffset: s.indexLSO(t)})
		}
	}
	return s, idx
}

func TestLastStableOffsetRules(t *testing.T) {
	cases := []struct {
		name         string
		evs          []txnEv
		logStart, hw int64
		lso          int64
		aborted      []abortedTxn
	}{
		{"no producer", nil, 0, 10, 10, nil},
		{"idempotent data opens nothing", []txnEv{dataEv(1, 0), dataEv(1, 1)}, 0, 2, 2, nil},
		{"open transaction below the hw", []txnEv{dataEv(2, 0), txnDataEv(1, 5), txnDataEv(1, 6)}, 0, 10, 5, nil},
		{"open transaction above the hw", []txnEv{txnDataEv(1, 5)}, 0, 3, 3, nil},
		{"committed, marker at the hw (not replicated)", []txnEv{txnDataEv(1, 5), commitEv(1, 8)}, 0, 8, 5, nil},
		{"committed, marker below the hw", []txnEv{txnDataEv(1, 5), commitEv(1, 8)}, 0, 9, 9, nil},
		{"oldest of two open", []txnEv{txnDataEv(1, 5), txnDataEv(2, 7)}, 0, 20, 5, nil},
		{"abort with another open", []txnEv{txnDataEv(1, 5), txnDataEv(2, 7), abortEv(1, 9)}, 0, 20, 7,
			[]abortedTxn{{producerID: 1, firstOffset: 5, lastOffset: 9, lastStableOffset: 7}}},
		{"abort alone", []txnEv{txnDataEv(1, 5), txnDataEv(1, 6), abortEv(1, 9)}, 0, 20, 20,
			[]abortedTxn{{producerID: 1, firstOffset: 5, lastOffset: 9, lastStableOffset: 10}}},
		{"abort without a transaction (not indexed)", []txnEv{abortEv(1, 4)}, 0, 5, 5, nil},
		{"abort without a transaction, another open", []txnEv{txnDataEv(2, 3), abortEv(1, 4)}, 0, 5, 3, nil},
		{"abort not replicated, other open later", []txnEv{txnDataEv(1, 5), txnDataEv(2, 7), abortEv(1, 9)}, 0, 9, 5,
			[]abortedTxn{{producerID: 1, firstOffset: 5, lastOffset: 9, lastStableOffset: 7}}},
		{"next transaction of the same producer", []txnEv{txnDataEv(1, 5), commitEv(1, 6), txnDataEv(1, 7)}, 0, 20, 7, nil},
		{"open transaction below the log start", []txnEv{txnDataEv(1, 5)}, 12, 20, 12, nil},
	}
	for _, c := range cases {
		s, idx := runTxnScript(c.evs)
		if got := lastStableOffset(s, c.logStart, c.hw); got != c.lso {
			t.Errorf("%s: LSO %d, want %d", c.name, got, c.lso)
		}
		if !slices.Equal(idx, c.aborted) {
			t.Errorf("%s: index %+v, want %+v", c.name, idx, c.aborted)
		}
		// Pruning what the hw passed changes nothing.
		s.pruneReplicated(c.hw)
		if got := lastStableOffset(s, c.logStart, c.hw); got != c.lso {
			t.Errorf("%s: after pruning: LSO %d, want %d", c.name, got, c.lso)
		}
	}
	if got := lastStableOffset(nil, 3, 7); got != 7 {
		t.Errorf("nil state: LSO %d, want the hw", got)
	}
}

func TestMarkerRules(t *testing.T) {
	s := newProducerStates()
	h := record.Header{ProducerID: 1, ProducerEpoch: 3, NumRecords: 1, Attributes: 0x10}
	s.update(&h)
	s.endTxn(record.Marker{ProducerID: 1, ProducerEpoch: 3, CoordinatorEpoch: 5}, 1)
	cases := []struct {
		name string
		m    record.Marker
		want error
	}{
		{"older producer epoch", record.Marker{ProducerID: 1, ProducerEpoch: 2, CoordinatorEpoch: 5}, ErrInvalidProducerEpoch},
		{"older coordinator epoch", record.Marker{ProducerID: 1, ProducerEpoch: 3, CoordinatorEpoch: 4}, ErrCoordinatorFenced},
		{"same epochs", record.Marker{ProducerID: 1, ProducerEpoch: 3, CoordinatorEpoch: 5}, nil},
		{"newer epochs", record.Marker{ProducerID: 1, ProducerEpoch: 4, CoordinatorEpoch: 6}, nil},
		{"unknown producer", record.Marker{ProducerID: 2, ProducerEpoch: 0, CoordinatorEpoch: 0}, nil},
	}
	for _, c := range cases {
		if err := s.checkMarker(c.m); !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	var none *producerStates
	if err := none.checkMarker(record.Marker{ProducerID: 1}); err != nil {
		t.Errorf("no state: %v", err)
	}
	// A marker with a newer epoch is adopted and forgets the batches.
	s.endTxn(record.Marker{ProducerID: 1, ProducerEpoch: 6, CoordinatorEpoch: 7}, 2)
	if e := s.producers[1]; e.epoch != 6 || e.coordinatorEpoch != 7 || e.n != 0 {
		t.Errorf("after a newer marker: %+v", e)
	}
}

func TestAbortedTxnsCollect(t *testing.T) {
	x := txnIndex{
		{producerID: 1, firstOffset: 0, lastOffset: 4, lastStableOffset: 5},
		{producerID: 2, firstOffset: 3, lastOffset: 10, lastStableOffset: 8}, // 3 was open until 8
		{producerID: 3, firstOffset: 8, lastOffset: 12, lastStableOffset: 13},
		{producerID: 4, firstOffset: 20, lastOffset: 25, lastStableOffset: 26},
	}
	ids := func(as []abortedTxn) []int64 {
		var out []int64
		for _, a := range as {
			out = append(out, a.producerID)
		}
		return out
	}
	cases := []struct {
		from, to int64
		want     []int64
	}{
		{0, 100, []int64{1, 2, 3, 4}},
		{0, 3, []int64{1}},    // 1's lso 5 >= 3: complete
		{5, 9, []int64{2, 3}}, // 1's marker before 5; 3's lso 13 >= 9 stops
		{5, 8, []int64{2}},    // 3 starts at 8; stops there (lso 13)
		{11, 20, []int64{3}},  // 4 starts at 20; 3's lso 13 < 20, 4's 26 stops
		{13, 30, []int64{4}},
		{26, 30, nil},
	}
	for _, c := range cases {
		if got := ids(x.collect(c.from, c.to)); !slices.Equal(got, c.want) {
			t.Errorf("[%d, %d): %v, want %v", c.from, c.to, got, c.want)
		}
	}
}

func TestTxnIndexFormat(t *testing.T) {
	a := abortedTxn{producerID: 7, firstOffset: 100, lastOffset: 120, lastStableOffset: 121}
	b := appendTxnEntry(nil, a)
	want := []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 100, 0, 0, 0, 0, 0, 0, 0, 120, 0, 0, 0, 0, 0, 0, 0, 121}
	if !slices.Equal(b, want) {
		t.Fatalf("entry %v, want Kafka's %v", b, want)
	}
	got, err := decodeTxnIndex(append(b, b...), 9)
	a.file = 9
	if err != nil || len(got) != 2 || got[0] != a || got[1] != a {
		t.Fatalf("decode: %+v, %v", got, err)
	}
	for name, bad := range map[string][]byte{"torn": b[:20], "version": append([]byte{0, 1}, b[2:]...)} {
		if _, err := decodeTxnIndex(bad, 0); !errors.Is(err, ErrCorruptTxnIndex) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// Kafka's appendDataBatch: while its transaction is open a producer may
// only write transactional batches.
func TestNonTransactionalBatchInOpenTxn(t *testing.T) {
	s := newProducerStates()
	txn := record.Header{ProducerID: 1, NumRecords: 1, Attributes: 0x10}
	s.update(&txn)
	plain := record.Header{ProducerID: 1, BaseSequence: 1, NumRecords: 1}
	if _, _, err := s.checkBatch(&plain); !errors.Is(err, ErrInvalidTxnState) {
		t.Fatalf("plain batch in an open transaction: %v", err)
	}
	more := record.Header{ProducerID: 1, BaseSequence: 1, NumRecords: 1, Attributes: 0x10}
	if _, _, err := s.checkBatch(&more); err != nil {
		t.Fatalf("transactional batch in an open transaction: %v", err)
	}
	s.endTxn(record.Marker{ProducerID: 1, Commit: true}, 1)
	if _, _, err := s.checkBatch(&plain); err != nil {
		t.Fatalf("plain batch after the marker: %v", err)
	}
}
