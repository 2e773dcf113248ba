package zkstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/samsa-kafka/samsa/internal/metadata"
	"github.com/samsa-kafka/samsa/internal/metastore"
	"github.com/samsa-kafka/samsa/internal/metastore/metastoretest"
	"github.com/samsa-kafka/samsa/internal/metastore/zkstore/zktest"
)

// TestMain fails the run if watch or session goroutines outlive the tests.
func TestMain(m *testing.M) {
	before := runtime.NumGoroutine()
	code := m.Run()
	if code == 0 {
		deadline := time.Now().Add(10 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			buf := make([]byte, 1<<20)
			fmt.Fprintf(os.Stderr, "leaked %d goroutines:\n%s\n", n-before, buf[:runtime.Stack(buf, true)])
			code = 1
		}
	}
	os.Exit(code)
}

// connect returns a store; its cleanup (registered after the server's)
// runs before the server is killed.
func connect(t *testing.T, srvs []*zktest.Server, chroot string) *Store {
	t.Helper()
	servers, root, err := ParseConnect(zktest.Connect(srvs, chroot))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Connect(Config{Servers: servers, Chroot: root, SessionTimeout: 4 * time.Second, ConnectionTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// wipe deletes everything but ZooKeeper's own /zookeeper.
func wipe(t *testing.T, c *zk.Conn, path string) {
	t.Helper()
	kids, _, err := c.Children(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kids {
		p := child(path, k)
		if p == "/zookeeper" {
			continue
		}
		wipe(t, c, p)
		if err := c.Delete(p, -1); err != nil {
			t.Fatal(err)
		}
	}
}

func expireFunc(srvs []*zktest.Server) metastoretest.ExpireFunc {
	return func(t *testing.T, s metastore.Store, sess metastore.Session) {
		if err := zktest.ExpireSession(srvs[0].Addr, sess.(*session).conn); err != nil {
			t.Fatalf("expire session: %v", err)
		}
	}
}

var coalesced = metastoretest.Options{CoalescedWatches: true}

func TestConformance(t *testing.T) {
	srvs := zktest.StartEnsemble(t, 1)
	metastoretest.RunWith(t, func(t *testing.T) metastore.Store {
		s := connect(t, srvs, "")
		wipe(t, s.conn, "/")
		return s
	}, expireFunc(srvs), coalesced)
}

func TestConformanceChroot(t *testing.T) {
	srvs := zktest.StartEnsemble(t, 1)
	var n atomic.Int64
	metastoretest.RunWith(t, func(t *testing.T) metastore.Store {
		chroot := fmt.Sprintf("/samsa/cluster%d", n.Add(1))
		// Noise just outside the chroot must stay invisible.
		noise := connect(t, srvs, chroot+"0")
		if _, err := noise.Txn(context.Background(), nil, []metastore.Op{metastore.Put("/r/1", nil), metastore.Put("/controller", nil)}); err != nil {
			t.Fatal(err)
		}
		return connect(t, srvs, chroot)
	}, expireFunc(srvs), coalesced)
}

// TestStateChunksFit writes as many state chunks in one Txn as metadata's
// WriteChunks does with this store's limit, every number of every row at
// ten digits and five replicas in each ISR.
func TestStateChunksFit(t *testing.T) {
	s := connect(t, zktest.StartEnsemble(t, 1), "/fit")
	entries := make([]metadata.StateEntry, metadata.StateChunkSize)
	const big = 2_000_000_000
	for i := range entries {
		entries[i] = metadata.StateEntry{Partition: big + int32(i), State: metadata.LeaderAndIsr{
			Leader: big, LeaderEpoch: big, ISR: []int32{big, big + 1, big + 2, big + 3, big + 4}, ControllerEpoch: big, PartitionEpoch: big,
		}}
	}
	chunk := metadata.EncodeStateChunk(entries)
	per := (s.MaxTxnOps() - 1) / 2
	var cmps []metastore.Cmp
	var ops []metastore.Op
	for i := range per {
		key := metadata.StateChunkKey("t", int32(i))
		cmps = append(cmps, metastore.Cmp{Key: key})
		ops = append(ops, metastore.Put(key, chunk))
	}
	ops = append(ops, metastore.Put("/fence", nil))
	res, err := s.Txn(context.Background(), cmps, ops)
	if err != nil || !res.Succeeded {
		t.Fatalf("%d chunks of %d bytes: %+v %v", per, len(chunk), res, err)
	}
	// Far larger values are refused before reaching the server.
	huge := make([]byte, DefaultMaxBuffer/2)
	_, err = s.Txn(context.Background(), nil, []metastore.Op{metastore.Put("/a", huge), metastore.Put("/b", huge)})
	if !errors.Is(err, metastore.ErrTooManyOps) {
		t.Fatalf("txn over jute.maxbuffer: %v, want ErrTooManyOps", err)
	}
}

// TestKeysUnderKeys covers what etcd's flat keys allow and znodes need
// care for: a key with keys under it, deleted and put again, and implicit
// parents that are no keys and go away with their last key.
func TestKeysUnderKeys(t *testing.T) {
	s := connect(t, zktest.StartEnsemble(t, 1), "/kk")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	txn := func(ops ...metastore.Op) int64 {
		t.Helper()
		res, err := s.Txn(ctx, nil, ops)
		if err != nil || !res.Succeeded {
			t.Fatalf("txn: %+v %v", res, err)
		}
		return res.Revision
	}
	w := s.WatchPrefix(ctx, "/brokers/topics/", 0)
	expect := func(typ metastore.EventType, key string, rev int64) {
		t.Helper()
		r := <-w
		if r.Err != nil || len(r.Events) != 1 || r.Events[0].Type != typ || r.Events[0].KV.Key != key || r.Events[0].KV.Version != rev {
			t.Fatalf("watch: %+v, want %v of %s at %d", r, typ, key, rev)
		}
	}
	rs := txn(metastore.Put("/brokers/topics/t/states/0", []byte("s0")))
	expect(metastore.EventPut, "/brokers/topics/t/states/0", rs)
	rt := txn(metastore.Put("/brokers/topics/t", []byte("t")))
	expect(metastore.EventPut, "/brokers/topics/t", rt)
	kvs, _, err := s.List(ctx, "/brokers/")
	if err != nil || len(kvs) != 2 || kvs[0].Key != "/brokers/topics/t" || kvs[0].Version != rt {
		t.Fatalf("list: %+v %v", kvs, err)
	}
	rd := txn(metastore.Delete("/brokers/topics/t"))
	expect(metastore.EventDelete, "/brokers/topics/t", rd)
	if _, ok, _ := s.Get(ctx, "/brokers/topics/t"); ok {
		t.Fatal("deleted key with children still readable")
	}
	if _, ok, _ := s.Get(ctx, "/brokers/topics/t/states/0"); !ok {
		t.Fatal("deleting a key deleted the key under it")
	}
	rd = txn(metastore.Delete("/brokers/topics/t/states/0"))
	if ok, _, _ := s.conn.Exists("/kk/brokers/topics/t"); ok {
		t.Fatal("implicit parents outlive their last key")
	}
	expect(metastore.EventDelete, "/brokers/topics/t/states/0", rd)
}

// TestWatchFromListRevision: a watch from a List's revision + 1 reports
// the keys deleted between the two, which ZooKeeper keeps no record of.
func TestWatchFromListRevision(t *testing.T) {
	srvs := zktest.StartEnsemble(t, 1)
	s := connect(t, srvs, "/lw")
	other := connect(t, srvs, "/lw")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	sess, err := other.NewSession(ctx, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range []metastore.Op{metastore.PutBound("/brokers/ids/1", []byte("b"), sess.ID()), metastore.Put("/brokers/ids/2", []byte("b"))} {
		if _, err := other.Txn(ctx, nil, []metastore.Op{op}); err != nil {
			t.Fatal(err)
		}
	}
	kvs, rev, err := s.List(ctx, "/brokers/ids/")
	if err != nil || len(kvs) != 2 {
		t.Fatalf("list: %+v %v", kvs, err)
	}
	sess.Close()
	w := s.WatchPrefix(ctx, "/brokers/ids/", rev+1)
	r := <-w
	if r.Err != nil || len(r.Events) != 1 || r.Events[0].Type != metastore.EventDelete || r.Events[0].KV.Key != "/brokers/ids/1" {
		t.Fatalf("watch from the list: %+v", r)
	}
}

func TestParseConnect(t *testing.T) {
	tests := []struct {
		in      string
		servers []string
		chroot  string
		bad     bool
	}{
		{in: "127.0.0.1:2181", servers: []string{"127.0.0.1:2181"}},
		{in: "a:1,b:2,c:3/kafka", servers: []string{"a:1", "b:2", "c:3"}, chroot: "/kafka"},
		{in: "a:1/samsa/prod/", servers: []string{"a:1"}, chroot: "/samsa/prod"},
		{in: "a:1/", servers: []string{"a:1"}},
		{in: "", bad: true},
		{in: "a", bad: true},
		{in: "a:1,,b:2", bad: true},
		{in: "a:1/x//y", bad: true},
	}
	for _, tc := range tests {
		servers, chroot, err := ParseConnect(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("ParseConnect(%q) = %v %q, want error", tc.in, servers, chroot)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(servers, tc.servers) || chroot != tc.chroot {
			t.Errorf("ParseConnect(%q) = %v %q %v, want %v %q", tc.in, servers, chroot, err, tc.servers, tc.chroot)
		}
	}
}

// TestEnsembleMemberLoss kills the ensemble member a session is connected
// to: it moves to another member within its timeout, the session and its
// key live on, and a watch armed before delivers the changes made after.
func TestEnsembleMemberLoss(t *testing.T) {
	srvs := zktest.StartEnsemble(t, 3)
	s := connect(t, srvs, "/loss")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	sess, err := s.NewSession(ctx, 8*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Txn(ctx, nil, []metastore.Op{metastore.PutBound("/brokers/ids/1", []byte("b"), sess.ID())}); err != nil {
		t.Fatal(err)
	}
	w := s.WatchPrefix(ctx, "/brokers/", 0)
	// The session's member (one of three: the quorum stays; the store's
	// own connection may be on it too).
	victim := sess.(*session).conn.Server()
	for _, srv := range srvs {
		if srv.Addr == victim {
			srv.Kill()
		}
	}
	// The first writes may fail while the client moves (or while the
	// ensemble elects a new leader): retry them.
	var rev int64
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		res, err := s.Txn(ctx, nil, []metastore.Op{metastore.Put("/brokers/topics/t", []byte("t"))})
		if err == nil {
			rev = res.Revision
			break
		}
		if time.Now().After(deadline) {
			for _, srv := range srvs {
				out, ferr := zktest.FourLetter(srv.Addr, "srvr")
				t.Logf("%s: %s %v\n%s", srv.Addr, out, ferr, srv.Log())
			}
			t.Fatalf("no write after a member's loss (store on %s): %v", s.conn.Server(), err)
		}
	}
	select {
	case r := <-w:
		if r.Err != nil || len(r.Events) != 1 || r.Events[0].KV.Key != "/brokers/topics/t" || r.Events[0].KV.Version != rev {
			t.Fatalf("watch after a member's loss: %+v, want the put at %d", r, rev)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("watch delivered nothing after a member's loss")
	}
	select {
	case <-sess.Done():
		t.Fatal("session ended with one member of three")
	default:
	}
	if kv, ok, err := s.Get(ctx, "/brokers/ids/1"); err != nil || !ok || kv.Session != sess.ID() {
		t.Fatalf("bound key after a member's loss: %+v %v %v", kv, ok, err)
	}
}

// TestSessionOutlivesQuorumLoss: with two members of three gone for three
// session timeouts, the last one is reachable but serves nobody; no server
// can expire a session then, so the session goes on (as a Kafka broker's
// does) and, once the quorum is back, still holds its ephemeral key.
func TestSessionOutlivesQuorumLoss(t *testing.T) {
	srvs := zktest.StartEnsemble(t, 3)
	s := connect(t, srvs, "/quorum")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const ttl = 2 * time.Second
	sess, err := s.NewSession(ctx, ttl)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Txn(ctx, nil, []metastore.Op{metastore.PutBound("/brokers/ids/1", []byte("b"), sess.ID())}); err != nil {
		t.Fatal(err)
	}
	srvs[0].Kill()
	srvs[1].Kill()
	select {
	case <-sess.Done():
		t.Fatal("session ended while the ensemble had no quorum")
	case <-time.After(3 * ttl):
	}
	if err := srvs[0].Restart(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		kv, ok, err := s.Get(ctx, "/brokers/ids/1")
		if err == nil && ok && kv.Session == sess.ID() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("bound key after the quorum came back: %+v %v %v", kv, ok, err)
		}
	}
	select {
	case <-sess.Done():
		t.Fatal("session ended once the quorum was back")
	default:
	}
}

// TestSessionEndsWhenNoServerReachable: with every server gone the client
// may be the one cut off, and the ensemble then expires its session after
// the timeout: Done closes soon after it.
func TestSessionEndsWhenNoServerReachable(t *testing.T) {
	srv := zktest.Start(t)
	s := connect(t, []*zktest.Server{srv}, "/alone")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const ttl = 2 * time.Second
	sess, err := s.NewSession(ctx, ttl)
	if err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	select {
	case <-sess.Done():
	case <-time.After(ttl + 5*time.Second):
		t.Fatal("session still open with no server reachable for its timeout")
	}
}
