package metadata

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
// chunk still gets its own result: written, or a version conflict found by
// retrying its failed batch one by one.
func TestWriteChunksConcurrentBatches(t *testing.T) {
	mem := memstore.New(memstore.WithMaxTxnOps(9)) // 4 chunks per batch
	ps := &pairedStore{Store: mem, two: make(chan struct{})}
	c, f := fencedClient(t, ps, mem)
	ctx := context.Background()
	// Chunk 5 exists already: creating it conflicts.
	if _, err := mem.Txn(ctx, nil, []metastore.Op{metastore.Put(StateChunkKey("t", 5),
		EncodeStateChunk([]StateEntry{{Partition: 5 * StateChunkSize, State: LeaderAndIsr{Leader: 9}}}))}); err != nil {
		t.Fatal(err)
	}
	var writes []ChunkWrite
	for ch := range int32(12) {
		p := ch * StateChunkSize
		writes = append(writes, ChunkWrite{Topic: "t", Chunk: ch,
			Value: EncodeStateChunk([]StateEntry{{Partition: p, State: LeaderAndIsr{Leader: ch, ISR: []int32{ch}}}, {Partition: p + 1}})})
	}
	results, err := c.WriteChunks(ctx, f, writes)
	if err != nil {
		t.Fatal(err)
	}
	if ps.peak.Load() < 2 {
		t.Fatalf("at most %d transaction in flight", ps.peak.Load())
	}
	for ch, r := range results {
		if want := ch != 5; r.Written != want || r.Conflict == want || (r.Written && r.Version == 0) {
			t.Errorf("chunk %d: %+v", ch, r)
		}
		es, ver, _, _ := c.ReadChunk(ctx, "t", int32(ch))
		if ch == 5 && (len(es) != 1 || es[0].State.Leader != 9) || ch != 5 && (len(es) != 2 || es[0].State.Leader != int32(ch) || ver != r.Version) {
			t.Errorf("chunk %d stored %+v at %d, result %+v", ch, es, ver, r)
		}
	}
	// A write conditional on the version read succeeds; on an older one it
	// conflicts.
	w := writes[0]
	w.Version = results[0].Version
	if rs, err := c.WriteChunks(ctx, f, []ChunkWrite{w}); err != nil || !rs[0].Written {
		t.Fatalf("rewrite at the version read: %+v %v", rs, err)
	}
	if rs, err := c.WriteChunks(ctx, f, []ChunkWrite{w}); err != nil || !rs[0].Conflict {
		t.Fatalf("rewrite at a stale version: %+v %v", rs, err)
	}
}

// A lost fence stops the write with ErrControllerMoved (an empty write
// touches nothing).
func TestWriteChunksLostFence(t *testing.T) {
	mem := memstore.New(memstore.WithMaxTxnOps(9))
	c, f := fencedClient(t, mem, mem)
	f.Version-- // someone else's epoch write
	if _, err := c.WriteChunks(context.Background(), f, nil); err != nil {
		t.Fatalf("nothing to write, yet: %v", err)
	}
	var writes []ChunkWrite
	for ch := range int32(40) {
		writes = append(writes, ChunkWrite{Topic: "t", Chunk: ch, Value: EncodeStateChunk([]StateEntry{{Partition: ch * StateChunkSize}})})
	}
	if _, err := c.WriteChunks(context.Background(), f, writes); !errors.Is(err, ErrControllerMoved) {
		t.Fatalf("err %v", err)
	}
	kvs, _, _ := mem.List(context.Background(), TopicsPrefix)
	if len(kvs) != 0 {
		t.Fatalf("%d chunks written without the fence", len(kvs))
	}
}

// FencedWriteRevision splits a write larger than a transaction so that the
// last one applies the last ops, as many as fit (completeDeletion's
// assignment and marker deletions go together), and returns its revision.
func TestFencedWriteRevisionLastTransaction(t *testing.T) {
	mem := memstore.New(memstore.WithMaxTxnOps(4)) // 3 ops and the fence a transaction
	c, f := fencedClient(t, mem, mem)
	ctx := context.Background()
	var ops []metastore.Op
	for i := range 7 {
		ops = append(ops, metastore.Put(fmt.Sprintf("/k/%d", i), []byte("v")))
	}
	rev, err := c.FencedWriteRevision(ctx, f, ops)
	if err != nil {
		t.Fatal(err)
	}
	kvs, _, err := mem.List(ctx, "/k/")
	if err != nil || len(kvs) != 7 {
		t.Fatalf("%d keys written: %v", len(kvs), err)
	}
	revs := map[int64][]string{}
	for _, kv := range kvs {
		revs[kv.Version] = append(revs[kv.Version], kv.Key)
	}
	if last := revs[rev]; len(last) != 3 || !slices.Contains(last, "/k/6") || !slices.Contains(last, "/k/4") {
		t.Fatalf("the last transaction (revision %d) wrote %v, want /k/4../k/6", rev, last)
	}
	if len(revs) != 3 {
		t.Fatalf("written in %d transactions (%v), want 3", len(revs), revs)
	}
}
