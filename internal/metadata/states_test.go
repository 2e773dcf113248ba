package metadata

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/metastore"
	"github.com/samsa-kafka/samsa/internal/metastore/memstore"
)

// pairedStore holds each Txn until a second one is in flight (or 2 s pass),
// and records the most Txns seen in flight at once.
type pairedStore struct {
	metastore.Store
	inFlight, peak atomic.Int32
	once           sync.Once
	two            chan struct{}
}

func (s *pairedStore) Txn(ctx context.Context, cmps []metastore.Cmp, ops []metastore.Op) (metastore.TxnResult, error) {
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for p := s.peak.Load(); n > p && !s.peak.CompareAndSwap(p, n); p = s.peak.Load() {
	}
	if n >= 2 {
		s.once.Do(func() { close(s.two) })
	}
	select {
	case <-s.two:
	case <-time.After(2 * time.Second):
	}
	return s.Store.Txn(ctx, cmps, ops)
}

// fencedClient is a client of st with a fence written to mem, st's store.
func fencedClient(t *testing.T, st, mem metastore.Store) (*Client, Fence) {
	t.Helper()
	c := New(st)
	res, err := mem.Txn(context.Background(), nil, []metastore.Op{metastore.Put(ControllerEpochKey, []byte("1"))})
	if err != nil {
		t.Fatal(err)
	}
	return c, Fence{Epoch: 1, Version: res.Revision}
}

// A write larger than one transaction keeps several in flight, and each
// update still gets its own result: written, or a version conflict found
// by retrying its failed batch one by one.
func TestWriteStatesConcurrentBatches(t *testing.T) {
	mem := memstore.New(memstore.WithMaxTxnOps(9)) // 4 updates per batch
	ps := &pairedStore{Store: mem, two: make(chan struct{})}
	c, f := fencedClient(t, ps, mem)
	ctx := context.Background()
	// Partition 5 exists already: creating it conflicts.
	if _, err := mem.Txn(ctx, nil, []metastore.Op{metastore.Put(PartitionStateKey("t", 5), EncodeState(LeaderAndIsr{Leader: 9}))}); err != nil {
		t.Fatal(err)
	}
	var updates []StateUpdate
	for p := range int32(12) {
		updates = append(updates, StateUpdate{TP: TopicPartition{Topic: "t", Partition: p}, State: LeaderAndIsr{Leader: p, ISR: []int32{p}}})
	}
	results, err := c.WriteStates(ctx, f, updates)
	if err != nil {
		t.Fatal(err)
	}
	if ps.peak.Load() < 2 {
		t.Fatalf("at most %d transaction in flight", ps.peak.Load())
	}
	for p, r := range results {
		if want := p != 5; r.Written != want || r.Conflict == want || (r.Written && r.Version == 0) {
			t.Errorf("partition %d: %+v", p, r)
		}
		kv, _, _ := mem.Get(ctx, PartitionStateKey("t", int32(p)))
		s, _ := DecodeState(kv.Value)
		if p == 5 && s.Leader != 9 || p != 5 && (s.Leader != int32(p) || kv.Version != r.Version) {
			t.Errorf("partition %d stored %+v at %d, result %+v", p, s, kv.Version, r)
		}
	}
}

// A lost fence stops the write with ErrControllerMoved (an empty write
// touches nothing).
func TestWriteStatesLostFence(t *testing.T) {
	mem := memstore.New(memstore.WithMaxTxnOps(9))
	c, f := fencedClient(t, mem, mem)
	f.Version-- // someone else's epoch write
	if _, err := c.WriteStates(context.Background(), f, nil); err != nil {
		t.Fatalf("nothing to write, yet: %v", err)
	}
	var updates []StateUpdate
	for p := range int32(40) {
		updates = append(updates, StateUpdate{TP: TopicPartition{Topic: "t", Partition: p}})
	}
	if _, err := c.WriteStates(context.Background(), f, updates); !errors.Is(err, ErrControllerMoved) {
		t.Fatalf("err %v", err)
	}
	kvs, _, _ := mem.List(context.Background(), TopicsPrefix)
	if len(kvs) != 0 {
		t.Fatalf("%d states written without the fence", len(kvs))
	}
}
