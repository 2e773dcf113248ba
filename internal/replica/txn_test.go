package replica

import (
	"errors"
	"testing"

	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/samsa-kafka/samsa/internal/record/recordtest"
	"github.com/samsa-kafka/samsa/internal/storage"
)

// produceTxn appends one transactional batch of producer pid (epoch 0).
func produceTxn(t *testing.T, p *Partition, pid int64, seq int32) storage.AppendInfo {
	t.Helper()
	b := recordtest.Idempotent(recordtest.Values(1000, "t"), pid, 0, seq)
	b[22] |= 0x10 // transactional
	record.SetCRC(b)
	hdrs, err := record.Validate(b, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	info, err := p.AppendAsLeader(b, hdrs, t0, -1)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// The LSO follows the HW: an open transaction holds it, its marker frees it
// only once the followers have it.
func TestLSOMovesWithHW(t *testing.T) {
	c := newCluster(t)
	p := c.lead(t, testConfig(1), []int32{1, 2}, []int32{1, 2})
	mustProduce(t, p, 2, 1) // 0..1
	produceTxn(t, p, 7, 0)  // 2
	mustProduce(t, p, 1, 1) // 3
	if !p.HasOpenTxn(7) {
		t.Fatal("transaction not open")
	}
	fetch(t, p, 2, 4, at(1))
	if hw, lso := p.HighWatermark(), p.LastStableOffset(); hw != 4 || lso != 2 {
		t.Fatalf("HW %d LSO %d, want 4 and 2 (transaction open at 2)", hw, lso)
	}
	res, hw, lso, err := p.ReadCommitted(0, 1<<20, storage.MinOneBatch)
	if err != nil || hw != 4 || lso != 2 {
		t.Fatalf("read committed: hw %d lso %d %v", hw, lso, err)
	}
	if h, _ := record.ReadHeader(res.Records); h.LastOffset() != 1 || h.Size() != len(res.Records) {
		t.Fatalf("read committed returned past the LSO: %d bytes", len(res.Records))
	}
	w := NewWaiter()
	p.AddWaiter(w)
	defer p.RemoveWaiter(w)
	info, err := p.AppendTxnMarker(7, 0, 1, false)
	if err != nil || info.FirstOffset != 4 {
		t.Fatalf("marker: %+v %v", info, err)
	}
	if lso := p.LastStableOffset(); lso != 2 {
		t.Fatalf("LSO %d before the follower has the marker, want 2", lso)
	}
	if done, _ := p.Acked(info.LastOffset + 1); done {
		t.Fatal("marker acked before the follower has it")
	}
	fetch(t, p, 2, 5, at(2))
	if lso := p.LastStableOffset(); lso != 5 {
		t.Fatalf("LSO %d after the HW passed the marker, want 5", lso)
	}
	if done, err := p.Acked(info.LastOffset + 1); !done || err != nil {
		t.Fatalf("marker not acked: %v", err)
	}
	if !woken(w) {
		t.Fatal("waiter not woken")
	}
	if got := p.AbortedTxns(0, 5); len(got) != 1 || got[0] != (storage.AbortedTxn{ProducerID: 7, FirstOffset: 2}) {
		t.Fatalf("aborted %+v", got)
	}
	if _, err := p.AppendTxnMarker(7, 0, 0, true); !errors.Is(err, storage.ErrCoordinatorFenced) {
		t.Fatalf("older coordinator epoch: %v", err)
	}
}

func TestTxnMarkerRefusedOffLeader(t *testing.T) {
	c := newCluster(t)
	p := c.lead(t, testConfig(2), []int32{1, 2}, []int32{1})
	if _, err := p.AppendTxnMarker(7, 0, 0, true); !errors.Is(err, ErrNotEnoughReplicas) {
		t.Fatalf("ISR below min.insync.replicas: %v", err)
	}
	if _, err := c.Become(testTP, [16]byte{1}, testConfig(1), State{Role: Follower, Leader: 2, LeaderEpoch: 4, PartitionEpoch: 2, Replicas: []int32{1, 2}, ISR: []int32{1, 2}}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.AppendTxnMarker(7, 0, 0, true); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("follower: %v", err)
	}
	if _, _, _, err := p.ReadCommitted(0, 1<<20, storage.MinOneBatch); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("follower read: %v", err)
	}
}
