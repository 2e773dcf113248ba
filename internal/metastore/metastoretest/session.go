package metastoretest

import (
	"testing"

	"github.com/samsa-kafka/samsa/internal/metastore"
)

func newSession(t *testing.T, s metastore.Store) metastore.Session {
	t.Helper()
	sess, err := s.NewSession(ctxFor(t), SessionTTL)
	if err != nil {
		t.Fatalf("new session: %v", err)
	}
	t.Cleanup(func() { sess.Close() })
	if sess.ID() == 0 {
		t.Fatal("session id 0")
	}
	return sess
}

func putBound(t *testing.T, s metastore.Store, key string, sess metastore.Session) int64 {
	t.Helper()
	res, err := s.Txn(ctxFor(t), []metastore.Cmp{{Key: key, Version: 0}},
		[]metastore.Op{metastore.PutBound(key, []byte("bound"), sess.ID())})
	if err != nil || !res.Succeeded {
		t.Fatalf("put %q bound to %d: %+v %v", key, sess.ID(), res, err)
	}
	return res.Revision
}

func testSessionClose(t *testing.T, s metastore.Store) {
	sess := newSession(t, s)
	other := newSession(t, s)
	if sess.ID() == other.ID() {
		t.Fatal("two sessions share an id")
	}
	putBound(t, s, "/eph/1", sess)
	putBound(t, s, "/eph/2", sess)
	putBound(t, s, "/eph/other", other)
	put(t, s, "/plain", "p")
	kv, _ := mustGet(t, s, "/eph/1")
	if kv.Session != sess.ID() {
		t.Fatalf("bound key reports session %d, want %d", kv.Session, sess.ID())
	}
	select {
	case <-sess.Done():
		t.Fatal("Done closed on a live session")
	default:
	}
	w := s.WatchPrefix(watchCtx(t), "/eph/", 0)
	if err := sess.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	waitDone(t, sess)
	for _, k := range []string{"/eph/1", "/eph/2"} {
		if _, ok := mustGet(t, s, k); ok {
			t.Fatalf("%s survived its session's Close", k)
		}
	}
	for _, k := range []string{"/eph/other", "/plain"} {
		if _, ok := mustGet(t, s, k); !ok {
			t.Fatalf("%s vanished with another session", k)
		}
	}
	evs := nextEvents(t, w, 2)
	for _, ev := range evs {
		if ev.Type != metastore.EventDelete || ev.KV.Version != evs[0].KV.Version {
			t.Fatalf("session end events: %+v (want deletes at one revision)", evs)
		}
	}
	if err := sess.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
}

func testSessionExpire(t *testing.T, s metastore.Store, expire ExpireFunc) {
	sess := newSession(t, s)
	putBound(t, s, "/eph/a", sess)
	put(t, s, "/plain", "p")
	expire(t, s, sess)
	waitDone(t, sess)
	if _, ok := mustGet(t, s, "/eph/a"); ok {
		t.Fatal("key survived its session's expiry")
	}
	if _, ok := mustGet(t, s, "/plain"); !ok {
		t.Fatal("unbound key vanished with a session")
	}
}

func testPutBoundEndedSession(t *testing.T, s metastore.Store) {
	sess := newSession(t, s)
	id := sess.ID()
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	waitDone(t, sess)
	res, err := s.Txn(ctxFor(t), nil, []metastore.Op{metastore.PutBound("/eph/late", []byte("x"), id)})
	if !isErr(err, metastore.ErrSessionExpired) {
		t.Fatalf("put bound to an ended session: %+v, err %v, want ErrSessionExpired", res, err)
	}
	if _, ok := mustGet(t, s, "/eph/late"); ok {
		t.Fatal("key bound to an ended session exists")
	}
}
