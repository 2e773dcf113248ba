package producerid

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/metastore"
	"github.com/samsa-kafka/samsa/internal/metastore/embedetcd"
	"github.com/samsa-kafka/samsa/internal/metastore/etcdstore"
	"github.com/samsa-kafka/samsa/internal/metastore/memstore"
)

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// startManager runs a Manager for broker on s until the test ends or the
// returned stop is called.
func startManager(t *testing.T, s metastore.Store, broker int32) (*Manager, func()) {
	t.Helper()
	m := New(Config{Broker: broker, Meta: metadata.New(s), Logger: testLogger(t)})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); m.Run(ctx) }()
	stop := func() { cancel(); <-done }
	t.Cleanup(stop)
	return m, stop
}

func next(t *testing.T, m *Manager) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id, err := m.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// forEachStore runs f against the in-memory store and against embedded
// etcd (one server, a chroot per subtest). newClient is a new client of
// the subtest's store, as another broker process would have.
func forEachStore(t *testing.T, f func(t *testing.T, newClient func() metastore.Store)) {
	t.Run("memstore", func(t *testing.T) {
		mem := memstore.New()
		t.Cleanup(func() { mem.Close() })
		f(t, func() metastore.Store {
			c := mem.NewClient()
			t.Cleanup(func() { c.Close() })
			return c
		})
	})
	t.Run("etcd", func(t *testing.T) {
		srv, err := embedetcd.StartLocal(t.TempDir(), testLogger(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Close)
		f(t, func() metastore.Store {
			s, err := etcdstore.Connect(srv.Endpoints(), "/samsa", 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		})
	})
}

// One broker hands out 0, 1, 2, ... across blocks.
func TestSequence(t *testing.T) {
	forEachStore(t, func(t *testing.T, newClient func() metastore.Store) {
		m, _ := startManager(t, newClient(), 1)
		for want := range int64(2500) {
			if id := next(t, m); id != want {
				t.Fatalf("id %d, want %d", id, want)
			}
		}
	})
}

// Brokers issuing at once, each from several goroutines, never issue an id
// twice; a restarted broker issues none it issued before; every issued id
// is Issued for every broker, and the first id past the last block is not.
func TestBrokersIssueDistinctIDs(t *testing.T) {
	forEachStore(t, func(t *testing.T, newClient func() metastore.Store) {
		const brokers, callers, each = 3, 3, 700
		seen := map[int64]int32{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		ms := make([]*Manager, brokers)
		stops := make([]func(), brokers)
		for b := range int32(brokers) {
			ms[b], stops[b] = startManager(t, newClient(), b)
		}
		for b := range int32(brokers) {
			for range callers {
				wg.Go(func() {
					for range each {
						id, err := ms[b].Next(context.Background())
						if err != nil {
							t.Error(err)
							return
						}
						mu.Lock()
						if other, dup := seen[id]; dup {
							t.Errorf("id %d issued by broker %d and broker %d", id, other, b)
						}
						seen[id] = b
						mu.Unlock()
					}
				})
			}
		}
		wg.Wait()
		if len(seen) != brokers*callers*each {
			t.Fatalf("%d distinct ids, want %d", len(seen), brokers*callers*each)
		}
		highest := int64(-1)
		for id := range seen {
			highest = max(highest, id)
		}

		stops[0]()
		restarted, stopRestarted := startManager(t, newClient(), 0)
		if id := next(t, restarted); id <= highest {
			t.Fatalf("restarted broker issued %d, at or below the highest id issued before (%d)", id, highest)
		}
		// No claim may land after the latest block is read below.
		for _, stop := range append(stops, stopRestarted) {
			stop()
		}

		fresh := New(Config{Broker: 9, Meta: metadata.New(newClient())}) // never claimed, never ran
		for id := range seen {
			if !fresh.Issued(id) {
				t.Fatalf("Issued(%d) false for an issued id", id)
			}
		}
		latest, _, err := metadata.New(newClient()).LatestProducerIDBlock(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if fresh.Issued(latest.Last+1) || fresh.Issued(-1) || !fresh.Issued(latest.Last) {
			t.Fatalf("Issued around the latest block %+v wrong", latest)
		}
	})
}

// gatedStore blocks writes while closed; entered gets a value for each
// write that blocks.
type gatedStore struct {
	metastore.Store
	closed  atomic.Bool
	open    chan struct{}
	entered chan struct{}
}

func (g *gatedStore) Txn(ctx context.Context, cmps []metastore.Cmp, ops []metastore.Op) (metastore.TxnResult, error) {
	if g.closed.Load() {
		g.entered <- struct{}{}
		select {
		case <-g.open:
		case <-ctx.Done():
			return metastore.TxnResult{}, ctx.Err()
		}
	}
	return g.Store.Txn(ctx, cmps, ops)
}

// While the next block's claim hangs in the store, the ids left in the
// current block are handed out without waiting; only when they are gone
// does Next wait for the claim.
func TestNextWaitsOnlyWithoutBlock(t *testing.T) {
	mem := memstore.New()
	defer mem.Close()
	g := &gatedStore{Store: mem, open: make(chan struct{}), entered: make(chan struct{}, 10)}
	m, _ := startManager(t, g, 1)
	if id := next(t, m); id != 0 {
		t.Fatalf("first id %d", id)
	}
	g.closed.Store(true)
	for want := int64(1); want < metadata.ProducerIDBlockSize; want++ {
		if id := next(t, m); id != want {
			t.Fatalf("id %d, want %d", id, want)
		}
	}
	// The prefetch, asked for at the 900th id, is the one claim hanging.
	select {
	case <-g.entered:
	case <-time.After(30 * time.Second):
		t.Fatal("no claim of the next block reached the store")
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Next(cancelled); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next with the block used up and the claim hanging: %v", err)
	}
	if n := len(g.entered); n != 0 {
		t.Fatalf("%d more claims hung in the store, want only the prefetch", n)
	}
	close(g.open)
	if id := next(t, m); id != metadata.ProducerIDBlockSize {
		t.Fatalf("first id of the second block %d", id)
	}
}

// With the store gone, Next fails fast with ErrNoBlock (the handler
// answers a retriable code) and Issued says true for ids it cannot check.
func TestStoreUnreachable(t *testing.T) {
	mem := memstore.New()
	mem.Close()
	m, stop := startManager(t, mem, 1)
	for range 2 { // waiting for the first claim, then from its error
		if _, err := m.Next(context.Background()); !errors.Is(err, ErrNoBlock) || !errors.Is(err, metastore.ErrClosed) {
			t.Fatalf("Next on a closed store: %v", err)
		}
	}
	if !m.Issued(5) || m.Issued(-1) {
		t.Fatal("Issued on a closed store: want true for 5 (unknown), false for -1")
	}
	stop()
	if _, err := m.Next(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Next after Run ended: %v", err)
	}
}

// countingStore counts reads.
type countingStore struct {
	metastore.Store
	gets atomic.Int32
}

func (c *countingStore) Get(ctx context.Context, key string) (metastore.KV, bool, error) {
	c.gets.Add(1)
	return c.Store.Get(ctx, key)
}

// Issued reads the store only for ids above the highest block end it knows.
func TestIssuedReadsOnlyAboveKnown(t *testing.T) {
	mem := memstore.New()
	defer mem.Close()
	other, _ := startManager(t, mem.NewClient(), 2)
	id := next(t, other)
	cs := &countingStore{Store: mem}
	m := New(Config{Broker: 1, Meta: metadata.New(cs), RefreshInterval: time.Millisecond})
	for i, tc := range []struct {
		id    int64
		want  bool
		reads int32
	}{
		{id, true, 1},     // read: unknown so far
		{id + 1, true, 1}, // below the block end just read
		{metadata.ProducerIDBlockSize - 1, true, 1},
		{metadata.ProducerIDBlockSize, false, 2}, // above: read again
		{-1, false, 2},
	} {
		if got := m.Issued(tc.id); got != tc.want || cs.gets.Load() != tc.reads {
			t.Fatalf("case %d: Issued(%d) = %v after %d reads, want %v after %d", i, tc.id, got, cs.gets.Load(), tc.want, tc.reads)
		}
	}
}

func Example() {
	mem := memstore.New()
	defer mem.Close()
	m := New(Config{Broker: 1, Meta: metadata.New(mem)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go m.Run(ctx)
	id, _ := m.Next(ctx)
	fmt.Println(id, m.Issued(id), m.Issued(metadata.ProducerIDBlockSize))
	// Output: 0 true false
}
