package group

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-kafka/samsa/internal/record"
)

// The transactional validation of the group core: members and generations
// as OffsetCommit, but no member needed in a non-Empty group and no
// REBALANCE_IN_PROGRESS (Kafka's validateOffsetCommit with
// isTransactional).
func TestTxnCommitValidation(t *testing.T) {
	f, la, _ := stable(t)
	inst := "i"
	for _, tc := range []struct {
		name     string
		member   string
		instance *string
		gen      int32
		want     error
	}{
		{"member of the generation", la, nil, 1, nil},
		{"older generation", la, nil, 0, kerr.IllegalGeneration},
		{"unknown member", "ghost", nil, 1, kerr.UnknownMemberID},
		{"an instance id no static member holds", la, &inst, 1, nil}, // Kafka: not fenced
		{"no member (v0-v2) in a Stable group", "", nil, -1, nil},
	} {
		if err := f.g.ValidateTxnCommit(tc.member, tc.instance, tc.gen); !errors.Is(err, tc.want) && err != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	f.g.Shutdown(f.now)
	if err := f.g.ValidateTxnCommit("", nil, -1); err != kerr.CoordinatorNotAvailable {
		t.Errorf("Dead group: %v", err)
	}
}

// txnStep is one write or marker on a coordinator's partition 0 (group
// "g", topic "t").
type txnStep struct {
	op        string // "txn", "plain", "commit", "abort"
	producer  int64
	partition int32
	offset    int64
}

type wantOffset struct {
	offset   int64 // -1: nothing committed
	unstable bool  // require_stable answers UNSTABLE_OFFSET_COMMIT
}

func runTxnSteps(t *testing.T, c *Coordinator, steps []txnStep) {
	t.Helper()
	for _, s := range steps {
		cm := []Commit{{TP: TP{"t", s.partition}, Offset: s.offset, LeaderEpoch: -1}}
		var errs []error
		switch s.op {
		case "txn":
			errs = c.CommitTxnOffsets(context.Background(), "g", TxnProducer{ID: s.producer, Epoch: 0}, "", nil, -1, cm)
		case "plain":
			errs = c.CommitOffsets(context.Background(), "g", "", nil, -1, cm)
		case "commit", "abort":
			c.CompleteTxn(0, s.producer, s.op == "commit")
			continue
		}
		if errs[0] != nil {
			t.Fatalf("%+v: %v", s, errs[0])
		}
	}
}

func checkOffsets(t *testing.T, c *Coordinator, group string, want map[int32]wantOffset) {
	t.Helper()
	for p, w := range want {
		tp := TP{"t", p}
		got, err := c.FetchOffsets(group, []TP{tp})
		if err != nil || got[0].Offset.Offset != w.offset {
			t.Errorf("%s partition %d: committed %d (%v), want %d", group, p, got[0].Offset.Offset, err, w.offset)
		}
		st, _ := c.FetchStable(group, []TP{tp}, true)
		if u := errors.Is(st[0].Err, kerr.UnstableOffsetCommit); u != w.unstable {
			t.Errorf("%s partition %d: require_stable %v, want unstable %v", group, p, st[0].Err, w.unstable)
		}
		if w.unstable && st[0].Offset.Offset != -1 {
			t.Errorf("%s partition %d: unstable answer with offset %d", group, p, st[0].Offset.Offset)
		}
	}
}

// Pending transactional offsets are invisible (and unstable) until their
// producer's marker: COMMIT makes them committed unless a later write in
// the log is (Kafka's completePendingTxnOffsetCommit), ABORT drops them;
// other producers' stay pending.
func TestTxnOffsetsCompleteTxn(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []txnStep
		want  map[int32]wantOffset
	}{
		{"pending", []txnStep{{"txn", 1, 0, 5}}, map[int32]wantOffset{0: {-1, true}}},
		{"commit", []txnStep{{"txn", 1, 0, 5}, {"commit", 1, 0, 0}}, map[int32]wantOffset{0: {5, false}}},
		{"abort", []txnStep{{"plain", 0, 0, 3}, {"txn", 1, 0, 5}, {"abort", 1, 0, 0}}, map[int32]wantOffset{0: {3, false}}},
		{"pending over a committed one", []txnStep{{"plain", 0, 0, 3}, {"txn", 1, 0, 5}}, map[int32]wantOffset{0: {3, true}}},
		{"a later plain commit wins", []txnStep{{"txn", 1, 0, 5}, {"plain", 0, 0, 7}, {"commit", 1, 0, 0}},
			map[int32]wantOffset{0: {7, false}}},
		{"a later txn commit wins", []txnStep{{"plain", 0, 0, 7}, {"txn", 1, 0, 5}, {"commit", 1, 0, 0}},
			map[int32]wantOffset{0: {5, false}}},
		{"the last write of the transaction", []txnStep{{"txn", 1, 0, 5}, {"txn", 1, 0, 6}, {"commit", 1, 0, 0}},
			map[int32]wantOffset{0: {6, false}}},
		{"other producers stay pending", []txnStep{{"txn", 1, 0, 5}, {"txn", 2, 1, 9}, {"commit", 1, 0, 0}},
			map[int32]wantOffset{0: {5, false}, 1: {-1, true}}},
		{"a marker without pending offsets", []txnStep{{"plain", 0, 0, 3}, {"commit", 7, 0, 0}, {"abort", 8, 0, 0}},
			map[int32]wantOffset{0: {3, false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := t0
			c := newTestCoordinator(newMemLog(), &now)
			c.BecomeLeader(0, 1)
			waitLoaded(t, c)
			runTxnSteps(t, c, tc.steps)
			checkOffsets(t, c, "g", tc.want)
		})
	}
}

// The batches a TxnOffsetCommit writes: one transactional batch of the
// producer, all the request's offsets in it.
func TestTxnOffsetCommitBatch(t *testing.T) {
	now := t0
	l := newMemLog()
	c := newTestCoordinator(l, &now)
	c.BecomeLeader(0, 1)
	waitLoaded(t, c)
	errs := c.CommitTxnOffsets(context.Background(), "g", TxnProducer{ID: 42, Epoch: 3}, "", nil, -1,
		[]Commit{{TP: TP{"t", 0}, Offset: 1}, {TP: TP{"t", 1}, Offset: 2, Metadata: "far too long metadata"}, {TP: TP{"t", 2}, Offset: 3}})
	if errs[0] != nil || errs[1] != kerr.OffsetMetadataTooLarge || errs[2] != nil {
		t.Fatalf("errors %v", errs)
	}
	h, err := record.ReadHeader(l.data[0])
	if err != nil || h.Size() != len(l.data[0]) {
		t.Fatalf("not one batch: %v", err)
	}
	if !h.Transactional() || h.Control() || h.ProducerID != 42 || h.ProducerEpoch != 3 || h.NumRecords != 2 {
		t.Fatalf("batch header %+v", h)
	}
	if !record.CheckCRC(l.data[0]) {
		t.Fatal("bad CRC")
	}
	for _, e := range []struct {
		group string
		want  error
	}{{"", kerr.InvalidGroupID}} {
		if errs := c.CommitTxnOffsets(context.Background(), e.group, TxnProducer{ID: 1}, "", nil, -1, []Commit{{TP: TP{"t", 0}}}); errs[0] != e.want {
			t.Errorf("group %q: %v, want %v", e.group, errs[0], e.want)
		}
	}
	// An unknown group with a generation: created Empty, then refused.
	if errs := c.CommitTxnOffsets(context.Background(), "new", TxnProducer{ID: 1}, "m", nil, 1, []Commit{{TP: TP{"t", 0}}}); errs[0] != kerr.UnknownMemberID {
		t.Errorf("unknown group with a member: %v", errs[0])
	}
}

// A write that fails drops its pending offsets (Kafka's
// failPendingTxnOffsetCommit): the marker commits nothing.
func TestTxnOffsetWriteFails(t *testing.T) {
	now := t0
	l := newMemLog()
	c := newTestCoordinator(l, &now)
	c.BecomeLeader(0, 1)
	waitLoaded(t, c)
	l.hold = true
	done := make(chan []error)
	go func() {
		done <- c.CommitTxnOffsets(context.Background(), "g", TxnProducer{ID: 1}, "", nil, -1, []Commit{{TP: TP{"t", 0}, Offset: 5}})
	}()
	l.release(t, kerr.NotEnoughReplicas)
	if errs := <-done; errs[0] != kerr.CoordinatorNotAvailable {
		t.Fatalf("failed write answered %v", errs[0])
	}
	c.CompleteTxn(0, 1, true)
	checkOffsets(t, c, "g", map[int32]wantOffset{0: {-1, false}})
}

// Pending offsets keep a group: expiry does not remove an Empty group
// with an open transaction, nor a committed offset with a pending one;
// OffsetDelete drops a partition's pending
// offsets; DeleteGroups removes the group with them.
func TestTxnOffsetsKeepGroup(t *testing.T) {
	now := t0
	l := newMemLog()
	c := newTestCoordinator(l, &now)
	c.BecomeLeader(0, 1)
	waitLoaded(t, c)
	runTxnSteps(t, c, []txnStep{{"txn", 1, 0, 5}, {"txn", 1, 1, 6}, {"plain", 0, 2, 9}, {"txn", 2, 2, 10}, {"plain", 0, 3, 1}})
	now = now.Add(2 * time.Hour)
	c.expire()
	if d, _ := c.Describe("g"); d.State != Empty {
		t.Fatalf("group with pending offsets expired: %v", d.State)
	}
	// t/2's commit waits for producer 2's transaction; t/3's expired.
	checkOffsets(t, c, "g", map[int32]wantOffset{2: {9, true}, 3: {-1, false}})
	c.CompleteTxn(0, 2, false)
	if err, errs := c.DeleteOffsets(context.Background(), "g", []TP{{"t", 0}}); err != nil || errs[0] != nil {
		t.Fatalf("OffsetDelete: %v %v", err, errs)
	}
	checkOffsets(t, c, "g", map[int32]wantOffset{0: {-1, false}, 1: {-1, true}})
	if err := c.DeleteGroup(context.Background(), "g"); err != nil {
		t.Fatalf("DeleteGroups: %v", err)
	}
	c.CompleteTxn(0, 1, true)
	checkOffsets(t, c, "g", map[int32]wantOffset{1: {-1, false}})
}

// A marker completes the producer's transaction in the groups of its own
// __consumer_offsets partition only: the same producer's offsets in a
// group of another partition wait for that partition's marker.
func TestCompleteTxnPerPartition(t *testing.T) {
	now := t0
	c := NewCoordinator(CoordinatorConfig{Group: Config{MaxSize: 10}, Partitions: 8, Retention: time.Hour,
		CommitTimeout: 10 * time.Second, MetadataMaxBytes: 10, Log: newMemLog(), Now: func() time.Time { return now }})
	a, b := "a", "b"
	for c.PartitionFor(b) == c.PartitionFor(a) {
		b += "b"
	}
	pa, pb := c.PartitionFor(a), c.PartitionFor(b)
	c.BecomeLeader(pa, 1)
	c.BecomeLeader(pb, 1)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		_, ea := c.FetchOffsets(a, nil)
		_, eb := c.FetchOffsets(b, nil)
		if ea == nil && eb == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("partitions not loaded")
		}
	}
	for _, g := range []string{a, b} {
		if errs := c.CommitTxnOffsets(context.Background(), g, TxnProducer{ID: 1}, "", nil, -1, []Commit{{TP: TP{"t", 0}, Offset: 5}}); errs[0] != nil {
			t.Fatal(errs[0])
		}
	}
	c.CompleteTxn(pa, 1, true)
	checkOffsets(t, c, a, map[int32]wantOffset{0: {5, false}})
	checkOffsets(t, c, b, map[int32]wantOffset{0: {-1, true}})
	c.CompleteTxn(pb, 1, false)
	checkOffsets(t, c, b, map[int32]wantOffset{0: {-1, false}})
	if len(c.txnGroups) != 0 {
		t.Fatalf("producer index left: %v", c.txnGroups)
	}
}

// require_stable also waits for a plain commit in flight (Kafka's
// pendingOffsetCommits); a deleted partition drops pending transactional
// offsets with the committed ones.
func TestRequireStableInFlightAndDeletedPartition(t *testing.T) {
	now := t0
	l := newMemLog()
	c := newTestCoordinator(l, &now)
	c.BecomeLeader(0, 1)
	waitLoaded(t, c)
	runTxnSteps(t, c, []txnStep{{"plain", 0, 0, 3}, {"txn", 1, 1, 5}})
	l.hold = true
	done := make(chan []error)
	go func() {
		done <- c.CommitOffsets(context.Background(), "g", "", nil, -1, []Commit{{TP: TP{"t", 0}, Offset: 4}})
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if st, _ := c.FetchStable("g", []TP{{"t", 0}}, true); errors.Is(st[0].Err, kerr.UnstableOffsetCommit) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a commit in flight is not unstable")
		}
	}
	l.release(t, nil)
	if errs := <-done; errs[0] != nil {
		t.Fatal(errs[0])
	}
	l.hold = false
	checkOffsets(t, c, "g", map[int32]wantOffset{0: {4, false}, 1: {-1, true}})
	c.PartitionsDeleted([]TP{{"t", 1}})
	checkOffsets(t, c, "g", map[int32]wantOffset{1: {-1, false}})
	c.CompleteTxn(0, 1, true)
	checkOffsets(t, c, "g", map[int32]wantOffset{1: {-1, false}})
}
