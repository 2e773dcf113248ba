package metadata

import (
	"context"
	"errors"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/samsa-kafka/samsa/internal/metastore"
	"github.com/samsa-kafka/samsa/internal/metastore/memstore"
)

func TestProducerIDBlockJSON(t *testing.T) {
	// Kafka's ProducerIdBlockZNode.generateProducerIdBlockJson, byte for byte.
	got := string(EncodeProducerIDBlock(ProducerIDBlock{Broker: 35, First: 4000, Last: 4999}))
	if want := `{"version":1,"broker":35,"block_start":"4000","block_end":"4999"}`; got != want {
		t.Fatalf("encoded %s, want %s", got, want)
	}
	for _, tc := range []struct {
		doc  string
		want ProducerIDBlock
		bad  bool
	}{
		{doc: `{"version":1,"broker":2,"block_start":"0","block_end":"999"}`, want: ProducerIDBlock{2, 0, 999}},
		{doc: `{"block_end":"1999","broker":0,"block_start":"1000","version":1}`, want: ProducerIDBlock{0, 1000, 1999}},
		{doc: `{"version":1,"broker":2,"block_start":0,"block_end":999}`, bad: true}, // Kafka writes strings
		{doc: `{"version":1,"broker":2,"block_start":"1000","block_end":"999"}`, bad: true},
		{doc: `{"version":1,"broker":2,"block_start":"-1","block_end":"999"}`, bad: true},
		{doc: `not json`, bad: true},
	} {
		b, err := DecodeProducerIDBlock([]byte(tc.doc))
		if tc.bad != (err != nil) || (!tc.bad && b != tc.want) {
			t.Errorf("decode %s: %+v, %v", tc.doc, b, err)
		}
	}
}

func TestNextProducerIDBlock(t *testing.T) {
	for _, tc := range []struct {
		name   string
		latest ProducerIDBlock
		found  bool
		want   ProducerIDBlock
		err    error
	}{
		{name: "first", want: ProducerIDBlock{7, 0, 999}},
		{name: "after", latest: ProducerIDBlock{1, 0, 999}, found: true, want: ProducerIDBlock{7, 1000, 1999}},
		// A block of another size (written by something else) is followed
		// from its end.
		{name: "odd size", latest: ProducerIDBlock{1, 10, 14}, found: true, want: ProducerIDBlock{7, 15, 1014}},
		{name: "last block", latest: ProducerIDBlock{1, 0, math.MaxInt64 - ProducerIDBlockSize},
			found: true, want: ProducerIDBlock{7, math.MaxInt64 - ProducerIDBlockSize + 1, math.MaxInt64}},
		{name: "exhausted", latest: ProducerIDBlock{1, 0, math.MaxInt64 - ProducerIDBlockSize + 1},
			found: true, err: ErrProducerIDsExhausted},
	} {
		got, err := NextProducerIDBlock(tc.latest, tc.found, 7)
		if !errors.Is(err, tc.err) || (tc.err == nil && got != tc.want) {
			t.Errorf("%s: %+v, %v; want %+v, %v", tc.name, got, err, tc.want, tc.err)
		}
	}
}

// racingStore lets another broker's claim land between a claim's read and
// its write, the first n times.
type racingStore struct {
	metastore.Store
	other *Client
	n     int
	txns  int
}

func (s *racingStore) Txn(ctx context.Context, cmps []metastore.Cmp, ops []metastore.Op) (metastore.TxnResult, error) {
	s.txns++
	if s.n > 0 {
		s.n--
		if _, err := s.other.ClaimProducerIDBlock(ctx, 9); err != nil {
			return metastore.TxnResult{}, err
		}
	}
	return s.Store.Txn(ctx, cmps, ops)
}

func TestClaimProducerIDBlockRetriesOnConflict(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New()
	defer mem.Close()
	rs := &racingStore{Store: mem, other: New(mem), n: 2}
	c := New(rs)
	b, err := c.ClaimProducerIDBlock(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Broker 9 took 0-999 and 1000-1999 under our feet; we got the third.
	if want := (ProducerIDBlock{1, 2000, 2999}); b != want || rs.txns != 3 {
		t.Fatalf("claimed %+v after %d writes, want %+v after 3", b, rs.txns, want)
	}
	latest, found, err := c.LatestProducerIDBlock(ctx)
	if err != nil || !found || latest != b {
		t.Fatalf("latest %+v %v %v, want %+v", latest, found, err, b)
	}
}

func TestClaimProducerIDBlockFailsWithStore(t *testing.T) {
	mem := memstore.New()
	c := New(mem)
	mem.Close()
	if _, err := c.ClaimProducerIDBlock(context.Background(), 1); !errors.Is(err, metastore.ErrClosed) {
		t.Fatalf("claim on a closed store: %v", err)
	}
	mem = memstore.New()
	defer mem.Close()
	mem.Txn(context.Background(), nil, []metastore.Op{metastore.Put(ProducerIDBlockKey, []byte("garbage"))})
	if _, err := New(mem).ClaimProducerIDBlock(context.Background(), 1); err == nil {
		t.Fatal("claim after an unreadable block succeeded")
	}
}

// Many brokers claiming at once on one store get disjoint blocks that,
// together, cover the ids from 0 without a gap.
func TestConcurrentClaimsDisjoint(t *testing.T) {
	mem := memstore.New()
	defer mem.Close()
	const brokers, claims = 8, 25
	var mu sync.Mutex
	var got []ProducerIDBlock
	var wg sync.WaitGroup
	for id := range int32(brokers) {
		wg.Go(func() {
			c := New(mem.NewClient())
			for range claims {
				b, err := c.ClaimProducerIDBlock(context.Background(), id)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				got = append(got, b)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	slices.SortFunc(got, func(a, b ProducerIDBlock) int { return int(a.First - b.First) })
	if len(got) != brokers*claims {
		t.Fatalf("%d blocks, want %d", len(got), brokers*claims)
	}
	for i, b := range got {
		if b.First != int64(i)*ProducerIDBlockSize || b.Size() != ProducerIDBlockSize {
			t.Fatalf("block %d is %+v: overlap or gap", i, b)
		}
	}
}
