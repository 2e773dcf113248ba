package memstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/metastore"
	"github.com/samsa-kafka/samsa/internal/metastore/memstore"
	"github.com/samsa-kafka/samsa/internal/metastore/metastoretest"
)

func expire(t *testing.T, s metastore.Store, sess metastore.Session) {
	if u, ok := s.(interface{ Unwrap() metastore.Store }); ok {
		s = u.Unwrap()
	}
	if !s.(*memstore.Store).ExpireSession(sess.ID()) {
		t.Fatalf("session %d not alive", sess.ID())
	}
}

func TestConformance(t *testing.T) {
	metastoretest.Run(t, func(t *testing.T) metastore.Store {
		s := memstore.New()
		t.Cleanup(func() { s.Close() })
		return s
	}, expire)
}

func TestConformanceChroot(t *testing.T) {
	metastoretest.Run(t, func(t *testing.T) metastore.Store {
		s := memstore.New()
		t.Cleanup(func() { s.Close() })
		// Noise outside the chroot must stay invisible.
		s.Txn(context.Background(), nil, []metastore.Op{metastore.Put("/controller", nil), metastore.Put("/samsa2/r/1", nil)})
		return metastore.WithPrefix(s, "/samsa")
	}, expire)
}

func TestClientCloseEndsOnlyItsSessions(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	defer s.Close()
	a, b := s.NewClient(), s.NewClient()
	sa, _ := a.NewSession(ctx, 2*time.Second)
	sb, _ := b.NewSession(ctx, 2*time.Second)
	if _, err := a.Txn(ctx, nil, []metastore.Op{metastore.PutBound("/a", nil, sa.ID()), metastore.PutBound("/b", nil, sb.ID())}); err != nil {
		t.Fatal(err)
	}
	wa := a.WatchPrefix(ctx, "/", 0)
	a.Close()
	<-sa.Done()
	if r := <-wa; !errors.Is(r.Err, metastore.ErrClosed) {
		t.Fatalf("watch of closed client: %+v", r)
	}
	if _, ok := <-wa; ok {
		t.Fatal("watch channel open after client close")
	}
	if _, _, err := a.Get(ctx, "/b"); !errors.Is(err, metastore.ErrClosed) {
		t.Fatalf("get on closed client: %v", err)
	}
	if _, ok, _ := b.Get(ctx, "/a"); ok {
		t.Fatal("key of closed client's session survived")
	}
	if _, ok, _ := b.Get(ctx, "/b"); !ok {
		t.Fatal("other client's session key vanished")
	}
	select {
	case <-sb.Done():
		t.Fatal("other client's session ended")
	default:
	}
}

func TestHistory(t *testing.T) {
	ctx := context.Background()
	s := memstore.New(memstore.WithMaxTxnOps(3))
	defer s.Close()
	start := s.Revision()
	tests := []struct {
		name    string
		cmps    []metastore.Cmp
		ops     []metastore.Op
		ok      bool
		err     error
		revGrow bool
	}{
		{"put", nil, []metastore.Op{metastore.Put("/a", []byte("1"))}, true, nil, true},
		{"failing cmp", []metastore.Cmp{{Key: "/a", Version: 0}}, []metastore.Op{metastore.Put("/a", nil)}, false, nil, false},
		{"delete absent", nil, []metastore.Op{metastore.Delete("/zz")}, true, nil, false},
		{"duplicate key", nil, []metastore.Op{metastore.Put("/b", nil), metastore.Delete("/b")}, false, memstore.ErrDuplicateKey, false},
		{"too many", nil, []metastore.Op{metastore.Put("/1", nil), metastore.Put("/2", nil), metastore.Put("/3", nil), metastore.Put("/4", nil)}, false, metastore.ErrTooManyOps, false},
		{"bad op", nil, []metastore.Op{{Type: 9, Key: "/x"}}, false, nil, false},
		{"two puts", nil, []metastore.Op{metastore.Put("/b", nil), metastore.Delete("/a")}, true, nil, true},
	}
	for _, tc := range tests {
		before := s.Revision()
		res, err := s.Txn(ctx, tc.cmps, tc.ops)
		if tc.name == "bad op" {
			if err == nil {
				t.Fatalf("%s: no error", tc.name)
			}
		} else if !errors.Is(err, tc.err) || (err == nil && res.Succeeded != tc.ok) {
			t.Fatalf("%s: %+v, %v", tc.name, res, err)
		}
		if grew := s.Revision() > before; grew != tc.revGrow {
			t.Fatalf("%s: revision %d -> %d", tc.name, before, s.Revision())
		}
	}
	ch := s.Changes(start)
	if len(ch) != 3 || ch[0].KV.Key != "/a" || ch[1].KV.Key != "/b" || ch[2].Type != metastore.EventDelete || ch[1].KV.Version != ch[2].KV.Version {
		t.Fatalf("changes: %+v", ch)
	}
	if err := s.Compact(s.Revision()); err != nil {
		t.Fatal(err)
	}
	if got := s.Changes(0); len(got) != 0 {
		t.Fatalf("changes after compaction: %+v", got)
	}
	if err := s.Compact(s.Revision() + 1); err == nil {
		t.Fatal("compaction into the future accepted")
	}
}

func TestStoreClose(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	sess, _ := s.NewSession(ctx, time.Second)
	w := s.WatchKey(ctx, "/k", 0)
	s.Close()
	<-sess.Done()
	if r := <-w; !errors.Is(r.Err, metastore.ErrClosed) {
		t.Fatalf("watch after close: %+v", r)
	}
	if _, err := s.Txn(ctx, nil, []metastore.Op{metastore.Put("/k", nil)}); !errors.Is(err, metastore.ErrClosed) {
		t.Fatalf("txn after close: %v", err)
	}
	if _, err := s.NewSession(ctx, time.Second); !errors.Is(err, metastore.ErrClosed) {
		t.Fatalf("session after close: %v", err)
	}
	if r := <-s.WatchPrefix(ctx, "/", 0); !errors.Is(r.Err, metastore.ErrClosed) {
		t.Fatalf("watch on closed store: %+v", r)
	}
}
