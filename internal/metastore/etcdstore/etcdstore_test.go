package etcdstore_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/samsa-kafka/samsa/internal/metastore"
	"github.com/samsa-kafka/samsa/internal/metastore/embedetcd"
	"github.com/samsa-kafka/samsa/internal/metastore/etcdstore"
	"github.com/samsa-kafka/samsa/internal/metastore/metastoretest"
)

func startServer(t *testing.T) *embedetcd.Server {
	t.Helper()
	srv, err := embedetcd.StartLocal(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// connect returns a store; its cleanup (registered after the server's)
// runs before the server closes.
func connect(t *testing.T, srv *embedetcd.Server, chroot string) metastore.Store {
	t.Helper()
	s, err := etcdstore.Connect(srv.Endpoints(), chroot, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func raw(s metastore.Store) *etcdstore.Store {
	if u, ok := s.(interface{ Unwrap() metastore.Store }); ok {
		s = u.Unwrap()
	}
	return s.(*etcdstore.Store)
}

// expire revokes the lease the way the server does when it expires.
func expire(t *testing.T, s metastore.Store, sess metastore.Session) {
	if _, err := raw(s).Client().Revoke(context.Background(), clientv3.LeaseID(sess.ID())); err != nil {
		t.Fatalf("revoke: %v", err)
	}
}

func TestConformance(t *testing.T) {
	metastoretest.Run(t, func(t *testing.T) metastore.Store {
		return connect(t, startServer(t), "")
	}, expire)
}

func TestConformanceChroot(t *testing.T) {
	srv := startServer(t)
	var n atomic.Int64
	metastoretest.Run(t, func(t *testing.T) metastore.Store {
		chroot := fmt.Sprintf("/cluster%d", n.Add(1))
		// Noise just outside the chroot must stay invisible.
		noise := connect(t, srv, chroot+"0")
		if _, err := noise.Txn(context.Background(), nil, []metastore.Op{metastore.Put("/r/1", nil), metastore.Put("/controller", nil)}); err != nil {
			t.Fatal(err)
		}
		return connect(t, srv, chroot)
	}, expire)
}

func TestSessionKeysVanishWhenKeepAliveStops(t *testing.T) {
	srv := startServer(t)
	ctx := context.Background()
	owner := connect(t, srv, "/c")
	observer := connect(t, srv, "/c")
	sess, err := owner.NewSession(ctx, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Txn(ctx, nil, []metastore.Op{metastore.PutBound("/brokers/ids/1", []byte("b"), sess.ID())}); err != nil {
		t.Fatal(err)
	}
	w := observer.WatchKey(ctx, "/brokers/ids/1", 0)
	// Abrupt loss: the client goes away without revoking its lease.
	owner.Close()
	select {
	case <-sess.Done():
	case <-time.After(15 * time.Second):
		t.Fatal("session Done open after its client closed")
	}
	if _, ok, _ := observer.Get(ctx, "/brokers/ids/1"); !ok {
		t.Fatal("key vanished before its lease expired (it should outlive the client by the TTL)")
	}
	deadline := time.After(30 * time.Second)
	for {
		select {
		case r := <-w:
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			if len(r.Events) == 1 && r.Events[0].Type == metastore.EventDelete && r.Events[0].KV.Key == "/brokers/ids/1" {
				if _, ok, _ := observer.Get(ctx, "/brokers/ids/1"); ok {
					t.Fatal("key still readable after its delete event")
				}
				return
			}
		case <-deadline:
			t.Fatal("bound key never vanished after its lease's keep-alives stopped")
		}
	}
}

func TestListPages(t *testing.T) {
	srv := startServer(t)
	s := connect(t, srv, "/big")
	ctx := context.Background()
	const n = 25000 // more than two pages
	val := make([]byte, 100)
	for i := 0; i < n; {
		var ops []metastore.Op
		for ; i < n && len(ops) < s.MaxTxnOps(); i++ {
			ops = append(ops, metastore.Put(fmt.Sprintf("/p/%06d", i), val))
		}
		if _, err := s.Txn(ctx, nil, ops); err != nil {
			t.Fatal(err)
		}
	}
	kvs, rev, err := s.List(ctx, "/p/")
	if err != nil {
		t.Fatal(err)
	}
	if len(kvs) != n || rev == 0 {
		t.Fatalf("listed %d keys at %d, want %d", len(kvs), rev, n)
	}
	for i, kv := range kvs {
		if want := fmt.Sprintf("/p/%06d", i); kv.Key != want {
			t.Fatalf("key %d: %q, want %q", i, kv.Key, want)
		}
	}
}

func TestClosedStore(t *testing.T) {
	srv := startServer(t)
	s := connect(t, srv, "")
	s.Close()
	if _, _, err := s.Get(context.Background(), "/k"); !errors.Is(err, metastore.ErrClosed) {
		t.Fatalf("get on closed store: %v", err)
	}
	if r := <-s.WatchKey(context.Background(), "/k", 0); !errors.Is(r.Err, metastore.ErrClosed) {
		t.Fatalf("watch on closed store: %+v", r)
	}
}

func TestParseConnect(t *testing.T) {
	tests := []struct {
		in        string
		endpoints []string
		chroot    string
		bad       bool
	}{
		{in: "127.0.0.1:2379", endpoints: []string{"127.0.0.1:2379"}},
		{in: "a:1,b:2,c:3/samsa", endpoints: []string{"a:1", "b:2", "c:3"}, chroot: "/samsa"},
		{in: "a:1/samsa/prod/", endpoints: []string{"a:1"}, chroot: "/samsa/prod"},
		{in: "a:1/", endpoints: []string{"a:1"}},
		{in: "http://a:1,http://b:2/x", endpoints: []string{"http://a:1", "http://b:2"}, chroot: "/x"},
		{in: " [::1]:2379 ", endpoints: []string{"[::1]:2379"}},
		{in: "", bad: true},
		{in: "a", bad: true},
		{in: "a:1,,b:2", bad: true},
		{in: "/chroot", bad: true},
	}
	for _, tc := range tests {
		eps, chroot, err := etcdstore.ParseConnect(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("ParseConnect(%q) = %v %q, want error", tc.in, eps, chroot)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(eps, tc.endpoints) || chroot != tc.chroot {
			t.Errorf("ParseConnect(%q) = %v %q %v, want %v %q", tc.in, eps, chroot, err, tc.endpoints, tc.chroot)
		}
	}
}
