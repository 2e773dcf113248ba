package metastoretest

import (
	"bytes"
	"testing"

	"github.com/samsa-kafka/samsa/internal/metastore"
)

func testGetListVersions(t *testing.T, s metastore.Store) {
	if _, ok := mustGet(t, s, "/a"); ok {
		t.Fatal("fresh store has /a")
	}
	r1 := put(t, s, "/a", "1")
	kv, ok := mustGet(t, s, "/a")
	if !ok || string(kv.Value) != "1" || kv.Version != r1 || kv.Created != r1 || kv.Session != 0 {
		t.Fatalf("after first put (rev %d): %+v found=%v", r1, kv, ok)
	}
	r2 := put(t, s, "/a", "2")
	if r2 <= r1 {
		t.Fatalf("revision did not grow: %d then %d", r1, r2)
	}
	kv, _ = mustGet(t, s, "/a")
	if string(kv.Value) != "2" || kv.Version != r2 || kv.Created != r1 {
		t.Fatalf("after second put: %+v, want version %d created %d", kv, r2, r1)
	}
	put(t, s, "/b/2", "y")
	r4 := put(t, s, "/b/1", "x")
	kvs, rev, err := s.List(ctxFor(t), "/b/")
	if err != nil {
		t.Fatal(err)
	}
	if rev < r4 {
		t.Fatalf("list revision %d before last write %d", rev, r4)
	}
	if len(kvs) != 2 || kvs[0].Key != "/b/1" || kvs[1].Key != "/b/2" || !bytes.Equal(kvs[0].Value, []byte("x")) || kvs[0].Version != r4 {
		t.Fatalf("list /b/: %+v", kvs)
	}
	rd := del(t, s, "/a")
	if rd <= r4 {
		t.Fatalf("delete revision %d not after %d", rd, r4)
	}
	if _, ok := mustGet(t, s, "/a"); ok {
		t.Fatal("/a still there after delete")
	}
	// Re-creating a key starts a new life: Created is the new revision.
	r6 := put(t, s, "/a", "3")
	kv, _ = mustGet(t, s, "/a")
	if kv.Created != r6 || kv.Version != r6 {
		t.Fatalf("recreated key: %+v, want created %d", kv, r6)
	}
	// Deleting an absent key is not an error.
	if _, err := s.Txn(ctxFor(t), nil, []metastore.Op{metastore.Delete("/absent")}); err != nil {
		t.Fatalf("delete absent key: %v", err)
	}
	kvs, _, err = s.List(ctxFor(t), "/nothing/")
	if err != nil || len(kvs) != 0 {
		t.Fatalf("list of empty prefix: %v, %v", kvs, err)
	}
}

func testListPrefixBoundary(t *testing.T, s metastore.Store) {
	put(t, s, "/controller", "c")
	put(t, s, "/controller_epoch", "1")
	put(t, s, "/brokers/ids/1", "b1")
	put(t, s, "/brokers/ids/10", "b10")
	put(t, s, "/brokers/idsX", "no")
	kvs, _, err := s.List(ctxFor(t), "/brokers/ids/")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, kv := range kvs {
		keys = append(keys, kv.Key)
	}
	if len(keys) != 2 || keys[0] != "/brokers/ids/1" || keys[1] != "/brokers/ids/10" {
		t.Fatalf("list /brokers/ids/: %q", keys)
	}
	all, _, err := s.List(ctxFor(t), "/")
	if err != nil || len(all) != 5 {
		t.Fatalf("list /: %d keys, %v", len(all), err)
	}
	for i := 1; i < len(all); i++ {
		if all[i-1].Key >= all[i].Key {
			t.Fatalf("list not sorted: %q then %q", all[i-1].Key, all[i].Key)
		}
	}
}

func testCmpVersion(t *testing.T, s metastore.Store) {
	ctx := ctxFor(t)
	create := func(val string) metastore.TxnResult {
		res, err := s.Txn(ctx, []metastore.Cmp{{Key: "/k", Version: 0}}, []metastore.Op{metastore.Put("/k", []byte(val))})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := create("first"); !res.Succeeded {
		t.Fatal("create-if-absent failed on an absent key")
	}
	if res := create("second"); res.Succeeded {
		t.Fatal("create-if-absent succeeded on an existing key")
	}
	kv, _ := mustGet(t, s, "/k")
	if string(kv.Value) != "first" {
		t.Fatalf("value %q after failed create", kv.Value)
	}
	res, err := s.Txn(ctx, []metastore.Cmp{{Key: "/k", Version: kv.Version}}, []metastore.Op{metastore.Put("/k", []byte("v2"))})
	if err != nil || !res.Succeeded {
		t.Fatalf("update at current version: %+v %v", res, err)
	}
	res, err = s.Txn(ctx, []metastore.Cmp{{Key: "/k", Version: kv.Version}}, []metastore.Op{metastore.Put("/k", []byte("v3"))})
	if err != nil || res.Succeeded {
		t.Fatalf("update at stale version: %+v %v", res, err)
	}
	kv2, _ := mustGet(t, s, "/k")
	if string(kv2.Value) != "v2" {
		t.Fatalf("value %q after stale update", kv2.Value)
	}
	res, err = s.Txn(ctx, []metastore.Cmp{{Key: "/k", Version: kv.Version}}, []metastore.Op{metastore.Delete("/k")})
	if err != nil || res.Succeeded {
		t.Fatalf("delete at stale version: %+v %v", res, err)
	}
	res, err = s.Txn(ctx, []metastore.Cmp{{Key: "/k", Version: kv2.Version}}, []metastore.Op{metastore.Delete("/k")})
	if err != nil || !res.Succeeded {
		t.Fatalf("delete at current version: %+v %v", res, err)
	}
	if _, ok := mustGet(t, s, "/k"); ok {
		t.Fatal("/k survived its conditional delete")
	}
	// A compare alone (no ops) reports whether it holds.
	res, err = s.Txn(ctx, []metastore.Cmp{{Key: "/k", Version: 0}}, nil)
	if err != nil || !res.Succeeded {
		t.Fatalf("absence check: %+v %v", res, err)
	}
}

func testTxnAtomic(t *testing.T, s metastore.Store) {
	ctx := ctxFor(t)
	guard := put(t, s, "/guard", "g")
	ops := []metastore.Op{
		metastore.Put("/x/1", []byte("a")),
		metastore.Put("/x/2", []byte("b")),
		metastore.Delete("/guard"),
	}
	// One failing compare among several: nothing is applied.
	res, err := s.Txn(ctx, []metastore.Cmp{{Key: "/guard", Version: guard}, {Key: "/x/1", Version: 12345}}, ops)
	if err != nil || res.Succeeded {
		t.Fatalf("txn with a failing cmp: %+v %v", res, err)
	}
	kvs, _, _ := s.List(ctx, "/x/")
	if len(kvs) != 0 {
		t.Fatalf("failed txn applied %d puts", len(kvs))
	}
	if _, ok := mustGet(t, s, "/guard"); !ok {
		t.Fatal("failed txn applied its delete")
	}
	res, err = s.Txn(ctx, []metastore.Cmp{{Key: "/guard", Version: guard}, {Key: "/x/1", Version: 0}}, ops)
	if err != nil || !res.Succeeded {
		t.Fatalf("txn with holding cmps: %+v %v", res, err)
	}
	kvs, rev, _ := s.List(ctx, "/x/")
	if len(kvs) != 2 || rev < res.Revision {
		t.Fatalf("after txn: %+v at %d", kvs, rev)
	}
	for _, kv := range kvs {
		if kv.Version != res.Revision {
			t.Fatalf("%s at version %d, txn revision %d: ops not at one revision", kv.Key, kv.Version, res.Revision)
		}
	}
	if _, ok := mustGet(t, s, "/guard"); ok {
		t.Fatal("txn did not apply its delete")
	}
}

func testTooManyOps(t *testing.T, s metastore.Store) {
	max := s.MaxTxnOps()
	if max <= 0 {
		t.Fatalf("MaxTxnOps %d", max)
	}
	ops := make([]metastore.Op, max)
	for i := range ops {
		ops[i] = metastore.Put(keyN("/many/", i), []byte("v"))
	}
	res, err := s.Txn(ctxFor(t), nil, ops)
	if err != nil || !res.Succeeded {
		t.Fatalf("txn of exactly MaxTxnOps=%d ops: %+v %v", max, res, err)
	}
	// Cmps count too.
	_, err = s.Txn(ctxFor(t), []metastore.Cmp{{Key: "/many/x", Version: 0}}, ops)
	if !isErr(err, metastore.ErrTooManyOps) {
		t.Fatalf("txn of MaxTxnOps+1: err %v, want ErrTooManyOps", err)
	}
	ops = append(ops, metastore.Put("/many/extra", nil))
	_, err = s.Txn(ctxFor(t), nil, ops)
	if !isErr(err, metastore.ErrTooManyOps) {
		t.Fatalf("txn of MaxTxnOps+1 ops: err %v, want ErrTooManyOps", err)
	}
	if _, ok := mustGet(t, s, "/many/extra"); ok {
		t.Fatal("refused txn was applied")
	}
}
