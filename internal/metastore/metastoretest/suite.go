package metastoretest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/metastore"
)

// Compactor is implemented by stores whose history can be compacted; Run
// tests ErrCompacted on them and skips that test otherwise.
type Compactor interface {
	Compact(rev int64) error
}

// NewStoreFunc returns a fresh, empty (or freshly chrooted) store; it
// registers its own cleanup.
type NewStoreFunc func(t *testing.T) metastore.Store

// ExpireFunc ends sess the way the backend's session expiry does (memstore:
// ExpireSession; etcd: revoking the lease from the server side).
type ExpireFunc func(t *testing.T, s metastore.Store, sess metastore.Session)

// wait bounds every loop that waits for the store; it is a safety net, not
// an assertion about speed.
const wait = 15 * time.Second

// SessionTTL is the session TTL the suite uses (etcd's minimum).
const SessionTTL = 2 * time.Second

// Options are the guarantees a backend gives beyond the common ground.
type Options struct {
	// CoalescedWatches: a watch may skip a key's intermediate values and
	// deliver a later value of the same key instead (ZooKeeper, whose
	// watchers read a znode again after a notification); it still
	// delivers every key's last state, in revision order.
	CoalescedWatches bool
}

// Run runs the conformance suite on a backend whose watches deliver every
// value (etcd, memstore).
func Run(t *testing.T, newStore NewStoreFunc, expire ExpireFunc) {
	RunWith(t, newStore, expire, Options{})
}

// RunWith runs the conformance suite with the backend's options.
func RunWith(t *testing.T, newStore NewStoreFunc, expire ExpireFunc, opts Options) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s metastore.Store)
	}{
		{"GetListVersions", testGetListVersions},
		{"ListPrefixBoundary", testListPrefixBoundary},
		{"CmpVersion", testCmpVersion},
		{"TxnAtomic", testTxnAtomic},
		{"TooManyOps", testTooManyOps},
		{"SessionClose", testSessionClose},
		{"SessionExpire", func(t *testing.T, s metastore.Store) { testSessionExpire(t, s, expire) }},
		{"PutBoundEndedSession", testPutBoundEndedSession},
		{"WatchKeyVsPrefix", testWatchKeyVsPrefix},
		{"WatchOrder", func(t *testing.T, s metastore.Store) { testWatchOrder(t, s, opts) }},
		{"WatchDelete", func(t *testing.T, s metastore.Store) { testWatchDelete(t, s, opts) }},
		{"WatchReplay", testWatchReplay},
		{"WatchCompacted", testWatchCompacted},
		{"WatchCancel", testWatchCancel},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, newStore(t))
		})
	}
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

func put(t *testing.T, s metastore.Store, key, val string) int64 {
	t.Helper()
	res, err := s.Txn(ctxFor(t), nil, []metastore.Op{metastore.Put(key, []byte(val))})
	if err != nil || !res.Succeeded {
		t.Fatalf("put %q: %+v, %v", key, res, err)
	}
	return res.Revision
}

func del(t *testing.T, s metastore.Store, key string) int64 {
	t.Helper()
	res, err := s.Txn(ctxFor(t), nil, []metastore.Op{metastore.Delete(key)})
	if err != nil || !res.Succeeded {
		t.Fatalf("delete %q: %+v, %v", key, res, err)
	}
	return res.Revision
}

func mustGet(t *testing.T, s metastore.Store, key string) (metastore.KV, bool) {
	t.Helper()
	kv, ok, err := s.Get(ctxFor(t), key)
	if err != nil {
		t.Fatalf("get %q: %v", key, err)
	}
	return kv, ok
}

// next receives the next response carrying events or an error, failing
// the test if the channel closes or nothing arrives in time.
func next(t *testing.T, ch <-chan metastore.WatchResponse) metastore.WatchResponse {
	t.Helper()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case r, ok := <-ch:
			if !ok {
				t.Fatal("watch channel closed")
			}
			if len(r.Events) > 0 || r.Err != nil {
				return r
			}
		case <-timer.C:
			t.Fatal("no watch response")
		}
	}
}

// nextEvents collects n events from ch, checking revisions never go down.
func nextEvents(t *testing.T, ch <-chan metastore.WatchResponse, n int) []metastore.Event {
	t.Helper()
	var out []metastore.Event
	var last int64
	for len(out) < n {
		r := next(t, ch)
		if r.Err != nil {
			t.Fatalf("watch error after %d events: %v", len(out), r.Err)
		}
		for _, ev := range r.Events {
			if ev.KV.Version < last {
				t.Fatalf("event %q at revision %d after revision %d", ev.KV.Key, ev.KV.Version, last)
			}
			last = ev.KV.Version
		}
		out = append(out, r.Events...)
	}
	if len(out) != n {
		t.Fatalf("got %d events, want %d", len(out), n)
	}
	return out
}

// waitClosed drains ch until it closes and returns the last error seen.
func waitClosed(t *testing.T, ch <-chan metastore.WatchResponse) error {
	t.Helper()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	var last error
	for {
		select {
		case r, ok := <-ch:
			if !ok {
				return last
			}
			if r.Err != nil {
				last = r.Err
			}
		case <-timer.C:
			t.Fatal("watch channel did not close")
		}
	}
}

func waitDone(t *testing.T, sess metastore.Session) {
	t.Helper()
	select {
	case <-sess.Done():
	case <-time.After(wait):
		t.Fatal("session Done did not close")
	}
}

func watchCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx
}

func keyN(prefix string, i int) string { return fmt.Sprintf("%s%05d", prefix, i) }

func isErr(err, target error) bool { return errors.Is(err, target) }
