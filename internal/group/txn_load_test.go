package group

import (
	"testing"

	"github.com/samsa-kafka/samsa/internal/record"
)

// txnLog builds a partition's log as the broker writes it: plain batches
// (record.Build), transactional batches of a producer (TxnBatch) and
// transaction markers (record.BuildMarker).
type txnLog struct {
	t *testing.T
	l *memLog
}

func (x txnLog) plain(recs ...record.KV) {
	if _, err := x.l.put(0, record.Build(t0.UnixMilli(), recs)); err != nil {
		x.t.Fatal(err)
	}
}

func (x txnLog) txn(producer int64, recs ...record.KV) {
	if _, err := x.l.put(0, TxnBatch(t0.UnixMilli(), producer, 0, recs)); err != nil {
		x.t.Fatal(err)
	}
}

func off(group string, p int32, o int64) record.KV {
	return OffsetRecord(group, TP{"t", p}, &Offset{Offset: o, LeaderEpoch: -1, CommitTime: t0})
}

func tomb(group string, p int32) record.KV { return OffsetRecord(group, TP{"t", p}, nil) }

// Loading a partition with transactional batches and markers interleaved
// with plain commits (Kafka's loadGroupsAndOffsets): a transaction's
// offsets wait for their producer's marker, a COMMIT applies each unless a
// later plain commit is in the log, an ABORT drops them, a plain tombstone
// drops pending ones, and transactions without a marker stay pending after
// the load, until CompleteTxn.
func TestLoadTxnOffsets(t *testing.T) {
	now := t0
	l := newMemLog()
	x := txnLog{t, l}
	x.plain(off("a", 0, 1))
	x.txn(1, off("a", 0, 10), off("a", 1, 11), off("b", 0, 12))
	x.txn(2, off("a", 2, 20))
	x.plain(off("a", 1, 5)) // later than producer 1's write of a/1: wins
	l.marker(0, 1, true)
	l.marker(0, 2, false)
	x.txn(3, off("a", 3, 30))
	x.txn(1, off("a", 0, 40)) // producer 1's next transaction, open
	x.txn(4, off("b", 1, 50))
	x.plain(tomb("b", 1)) // OffsetDelete while producer 4's commit pended
	l.marker(0, 4, true)
	x.txn(5, off("c", 0, 7)) // a group known only by its open transaction
	x.plain(GroupRecord(NewGroup("b", &Config{}, nil, now), nil, now, false))

	c := newTestCoordinator(l, &now)
	c.BecomeLeader(0, 1)
	waitLoaded(t, c)
	checkOffsets(t, c, "a", map[int32]wantOffset{0: {10, true}, 1: {5, false}, 2: {-1, false}, 3: {-1, true}})
	checkOffsets(t, c, "b", map[int32]wantOffset{0: {12, false}, 1: {-1, false}})
	checkOffsets(t, c, "c", map[int32]wantOffset{0: {-1, true}})
	if d, _ := c.Describe("c"); d.State != Empty {
		t.Fatalf("group c: %v, want Empty", d.State)
	}

	c.CompleteTxn(0, 3, true)
	c.CompleteTxn(0, 1, false)
	c.CompleteTxn(0, 5, true)
	checkOffsets(t, c, "a", map[int32]wantOffset{0: {10, false}, 3: {30, false}})
	checkOffsets(t, c, "c", map[int32]wantOffset{0: {7, false}})

	// The same log, loaded again after the markers were written: the same
	// state without CompleteTxn.
	l.marker(0, 3, true)
	l.marker(0, 1, false)
	l.marker(0, 5, true)
	c2 := newTestCoordinator(l, &now)
	c2.BecomeLeader(0, 1)
	waitLoaded(t, c2)
	checkOffsets(t, c2, "a", map[int32]wantOffset{0: {10, false}, 1: {5, false}, 2: {-1, false}, 3: {30, false}})
	checkOffsets(t, c2, "c", map[int32]wantOffset{0: {7, false}})
}

// A marker CompleteTxn is told of while the partition loads is applied
// after the load: the load may have read the log before the marker.
func TestCompleteTxnWhileLoading(t *testing.T) {
	now := t0
	l := newMemLog()
	txnLog{t, l}.txn(1, off("g", 0, 5))
	txnLog{t, l}.txn(2, off("g", 1, 6))
	l.loadGate = make(chan struct{})
	c := newTestCoordinator(l, &now)
	c.BecomeLeader(0, 1)
	c.CompleteTxn(0, 1, true)
	c.CompleteTxn(0, 2, false)
	close(l.loadGate)
	waitLoaded(t, c)
	checkOffsets(t, c, "g", map[int32]wantOffset{0: {5, false}, 1: {-1, false}})
}

// A control batch that is not a transaction marker (an unknown control
// type) is skipped; the records around it load.
func TestLoadSkipsOtherControlBatches(t *testing.T) {
	now := t0
	l := newMemLog()
	x := txnLog{t, l}
	x.txn(1, off("g", 0, 5))
	other := record.BuildMarker(record.Marker{ProducerID: 1, Commit: true}, 0)
	// The key's type (record: length, attributes, timestamp and offset
	// deltas, key length, then version and type, two bytes each): 5.
	if k := other[record.HeaderSize+5:]; k[0] != 0 || k[1] != 0 || k[2] != 0 || k[3] != 1 {
		t.Fatalf("marker key %v", k[:4])
	}
	other[record.HeaderSize+8] = 5
	record.SetCRC(other)
	if _, err := l.put(0, other); err != nil {
		t.Fatal(err)
	}
	x.plain(off("g", 1, 9))
	c := newTestCoordinator(l, &now)
	c.BecomeLeader(0, 1)
	waitLoaded(t, c)
	checkOffsets(t, c, "g", map[int32]wantOffset{0: {-1, true}, 1: {9, false}})
}
