package txn

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// clock is the tests' fake time (now is read only by the test's
// goroutine; Now is for the coordinator's).
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// Now is the fake time, safe from any goroutine.
func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func newClock() *clock { return &clock{now: time.UnixMilli(1_700_000_000_000)} }

var (
	tp0 = kafka.TopicPartition{Topic: "t", Partition: 0}
	tp1 = kafka.TopicPartition{Topic: "t", Partition: 1}
	tp2 = kafka.TopicPartition{Topic: "u", Partition: 0}
)

// ids is a fake producer id source.
type ids struct{ next int64 }

func (i *ids) newID() (int64, error) { i.next++; return i.next, nil }

// completed completes a prepared transit as if its write succeeded.
func completed(t *testing.T, m *Metadata, tr *Transit, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	if tr == nil {
		t.Fatal("prepare: no transit")
	}
	if err := m.Complete(*tr); err != nil {
		t.Fatal(err)
	}
}

// ongoing is an id with producer 100 epoch 0 and tps in an open transaction.
func ongoing(t *testing.T, c *clock, tps ...kafka.TopicPartition) *Metadata {
	t.Helper()
	m := New("tx", 100, 60000, c.now)
	tr, err := m.PrepareInit(60000, nil, c.now, (&ids{}).newID)
	completed(t, m, tr, err)
	tr, err = m.PrepareAddPartitions(100, 0, tps, c.now)
	completed(t, m, tr, err)
	return m
}

func TestTransitionTable(t *testing.T) {
	all := []State{Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort, Dead, PrepareEpochFence}
	allowed := map[[2]State]bool{}
	for to, froms := range validPrevious {
		for _, from := range froms {
			allowed[[2]State{from, to}] = true
		}
	}
	n := 0
	for _, from := range all {
		for _, to := range all {
			if got := CanTransition(from, to); got != allowed[[2]State{from, to}] {
				t.Errorf("%s -> %s: %v", from, to, got)
			}
			if CanTransition(from, to) {
				n++
			}
		}
	}
	if n != 16 { // the table of state.go: 3+4+1+2+1+1+3+1
		t.Errorf("%d allowed transitions, want 16", n)
	}
	for _, bad := range [][2]State{{Empty, PrepareCommit}, {Ongoing, CompleteCommit}, {PrepareCommit, PrepareAbort},
		{CompleteCommit, PrepareCommit}, {Dead, Empty}, {Ongoing, Dead}} {
		if CanTransition(bad[0], bad[1]) {
			t.Errorf("%s -> %s allowed", bad[0], bad[1])
		}
	}
	if s, ok := ParseState("PrepareEpochFence"); !ok || s != PrepareEpochFence || s.String() != "PrepareEpochFence" {
		t.Errorf("ParseState: %v %v", s, ok)
	}
}

func TestInitProducerID(t *testing.T) {
	type want struct {
		err      error
		id       int64
		epoch    int16
		last     int16
		state    State
		illegal  bool
		noWrite  bool
		newIDHit bool
	}
	for _, tc := range []struct {
		name     string
		setup    func(*Metadata) // from producer 100 epoch 5 (last 4), CompleteCommit
		expected *IDEpoch
		want     want
	}{
		{name: "new producer bumps and clears last", want: want{id: 100, epoch: 6, last: -1, state: Empty}},
		{name: "same producer recovering (KIP-360)", expected: &IDEpoch{100, 5}, want: want{id: 100, epoch: 6, last: 5, state: Empty}},
		{name: "retry of a bump already made", expected: &IDEpoch{100, 4}, want: want{id: 100, epoch: 5, last: 4, state: Empty}},
		{name: "older epoch fenced", expected: &IDEpoch{100, 3}, want: want{err: kerr.ProducerFenced}},
		{name: "other producer id fenced", expected: &IDEpoch{7, 5}, want: want{err: kerr.ProducerFenced}},
		{name: "fresh id accepts any expected", setup: func(m *Metadata) { m.ProducerEpoch, m.LastProducerEpoch = NoProducerEpoch, NoProducerEpoch },
			expected: &IDEpoch{7, 3}, want: want{id: 100, epoch: 0, last: -1, state: Empty}},
		{name: "exhausted epoch rotates the id", setup: func(m *Metadata) { m.ProducerEpoch = math.MaxInt16 - 1 },
			want: want{id: 1, epoch: 0, last: -1, state: Empty, newIDHit: true}},
		{name: "exhausted epoch of the caller rotates, last recorded", setup: func(m *Metadata) { m.ProducerEpoch = math.MaxInt16 - 1 },
			expected: &IDEpoch{100, math.MaxInt16 - 1}, want: want{id: 1, epoch: 0, last: math.MaxInt16 - 1, state: Empty, newIDHit: true}},
		{name: "retry of a rotation", setup: func(m *Metadata) {
			m.ProducerID, m.LastProducerID, m.ProducerEpoch, m.LastProducerEpoch = 200, 100, 0, math.MaxInt16-1
		}, expected: &IDEpoch{100, math.MaxInt16 - 1}, want: want{id: 200, epoch: 0, last: math.MaxInt16 - 1, state: Empty}},
		{name: "prepare commit in flight", setup: func(m *Metadata) { m.State = PrepareCommit }, want: want{err: kerr.ConcurrentTransactions}},
		{name: "pending change", setup: func(m *Metadata) { m.pending = Ongoing }, want: want{err: kerr.ConcurrentTransactions}},
		{name: "ongoing is fenced and aborted", setup: func(m *Metadata) {
			m.State, m.Partitions = Ongoing, map[kafka.TopicPartition]struct{}{tp0: {}}
		}, want: want{id: 100, epoch: 6, last: -1, state: PrepareAbort}},
		{name: "ongoing after a failed fence keeps the epoch", setup: func(m *Metadata) {
			m.State, m.failedFence = Ongoing, true
		}, want: want{id: 100, epoch: 5, last: -1, state: PrepareAbort}},
		{name: "dead is a bug", setup: func(m *Metadata) { m.State = Dead }, want: want{illegal: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClock()
			m := New("tx", 100, 1000, c.now)
			m.ProducerEpoch, m.LastProducerEpoch, m.State = 5, 4, CompleteCommit
			if tc.setup != nil {
				tc.setup(m)
			}
			src := &ids{}
			tr, err := m.PrepareInit(2000, tc.expected, c.advance(time.Second), src.newID)
			switch {
			case tc.want.illegal:
				if !errors.Is(err, ErrIllegalState) {
					t.Fatalf("err %v, want illegal state", err)
				}
				return
			case tc.want.err != nil:
				if err != tc.want.err || tr != nil {
					t.Fatalf("err %v transit %v, want %v", err, tr, tc.want.err)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if tr.ProducerID != tc.want.id || tr.ProducerEpoch != tc.want.epoch || tr.LastProducerEpoch != tc.want.last || tr.State != tc.want.state {
				t.Fatalf("transit id %d epoch %d last %d %s, want %+v", tr.ProducerID, tr.ProducerEpoch, tr.LastProducerEpoch, tr.State, tc.want)
			}
			if (src.next > 0) != tc.want.newIDHit {
				t.Errorf("new producer id asked: %v", src.next > 0)
			}
			if _, err := m.PrepareInit(2000, nil, c.now, src.newID); err != kerr.ConcurrentTransactions {
				t.Errorf("second InitProducerId while pending: %v", err)
			}
			if err := m.Complete(*tr); err != nil {
				t.Fatal(err)
			}
			if tr.State == Empty && (m.TimeoutMs != 2000 || len(m.Partitions) != 0 || !m.Start.IsZero() || !m.LastUpdate.Equal(c.now)) {
				t.Errorf("after complete: %+v", m)
			}
		})
	}
}

// TestFenceThenRetry: InitProducerId on an open transaction aborts it with a
// bumped epoch (the old producer is fenced), answers CONCURRENT_TRANSACTIONS
// until the abort completes, and then bumps once more.
func TestFenceThenRetry(t *testing.T) {
	c := newClock()
	m := ongoing(t, c, tp0, tp1)
	src := &ids{}
	tr, err := m.PrepareInit(60000, nil, c.now, src.newID)
	if err != nil || tr.State != PrepareAbort || tr.ProducerEpoch != 1 || len(tr.Partitions) != 2 {
		t.Fatalf("fence: %+v %v", tr, err)
	}
	// The old producer's requests are fenced at once, before the write.
	if _, err := m.PrepareAddPartitions(100, 0, []kafka.TopicPartition{tp2}, c.now); err != kerr.ProducerFenced {
		t.Errorf("old producer AddPartitions: %v", err)
	}
	completed(t, m, tr, nil)
	if _, err := m.PrepareEnd(100, 0, true, c.now); err != kerr.ProducerFenced {
		t.Errorf("old producer EndTxn: %v", err)
	}
	if _, err := m.PrepareInit(60000, nil, c.now, src.newID); err != kerr.ConcurrentTransactions {
		t.Errorf("retry during PrepareAbort: %v", err)
	}
	tr, err = m.PrepareComplete(c.now)
	if err != nil || tr.State != CompleteAbort || len(tr.Partitions) != 0 {
		t.Fatalf("complete: %+v %v", tr, err)
	}
	completed(t, m, tr, nil)
	tr, err = m.PrepareInit(60000, nil, c.now, src.newID)
	if err != nil || tr.ProducerEpoch != 2 || tr.State != Empty {
		t.Fatalf("retry: %+v %v", tr, err)
	}
}

// TestFailedFenceNotBumpedTwice: the fence's write fails; the next fence
// reuses the epoch that never reached a client.
func TestFailedFenceNotBumpedTwice(t *testing.T) {
	c := newClock()
	m := ongoing(t, c, tp0)
	tr, err := m.PrepareFenceAbort(c.now)
	if err != nil || tr.ProducerEpoch != 1 {
		t.Fatalf("%+v %v", tr, err)
	}
	m.Abandon()
	if m.State != Ongoing || m.ProducerEpoch != 1 {
		t.Fatalf("after a failed write: %s epoch %d", m.State, m.ProducerEpoch)
	}
	tr, err = m.PrepareFenceAbort(c.now)
	if err != nil || tr.ProducerEpoch != 1 {
		t.Fatalf("second fence: %+v %v", tr, err)
	}
	completed(t, m, tr, nil)
	tr, _ = m.PrepareComplete(c.now)
	completed(t, m, tr, nil)
	if m.failedFence {
		t.Error("failed fence still remembered after the abort completed")
	}
}

func TestAddPartitions(t *testing.T) {
	c := newClock()
	m := New("tx", 100, 60000, c.now)
	completed(t, m, must(m.PrepareInit(60000, nil, c.now, (&ids{}).newID)), nil)
	start := c.advance(time.Second)
	tr, err := m.PrepareAddPartitions(100, 0, []kafka.TopicPartition{tp1, tp0}, start)
	completed(t, m, tr, err)
	if m.State != Ongoing || !m.Start.Equal(start) || len(m.Partitions) != 2 {
		t.Fatalf("after add: %+v", m)
	}
	// Already there: no write.
	if tr, err := m.PrepareAddPartitions(100, 0, []kafka.TopicPartition{tp0}, c.advance(time.Second)); tr != nil || err != nil {
		t.Fatalf("re-add: %v %v", tr, err)
	}
	tr, err = m.PrepareAddPartitions(100, 0, []kafka.TopicPartition{tp2, tp0}, c.advance(time.Second))
	completed(t, m, tr, err)
	if !m.Start.Equal(start) || len(m.Partitions) != 3 || tr.Partitions[2] != tp2 {
		t.Fatalf("start moved or partitions wrong: %+v %+v", m, tr.Partitions)
	}
	for _, tc := range []struct {
		name  string
		id    int64
		epoch int16
		setup func()
		want  error
	}{
		{"unknown producer id", 7, 0, nil, kerr.InvalidProducerIDMapping},
		{"old epoch", 100, -1, nil, kerr.ProducerFenced},
		{"newer epoch", 100, 1, nil, kerr.ProducerFenced},
		{"pending", 100, 0, func() { m.pending = PrepareCommit }, kerr.ConcurrentTransactions},
		{"preparing commit", 100, 0, func() { m.pending, m.State = none, PrepareCommit }, kerr.ConcurrentTransactions},
	} {
		if tc.setup != nil {
			tc.setup()
		}
		if _, err := m.PrepareAddPartitions(tc.id, tc.epoch, []kafka.TopicPartition{tp0}, c.now); err != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestVerify(t *testing.T) {
	c := newClock()
	m := ongoing(t, c, tp0)
	got, err := m.Verify(100, 0, []kafka.TopicPartition{tp0, tp1})
	if err != nil || got[0] != nil || got[1] != kerr.InvalidTxnState {
		t.Fatalf("%v %v", got, err)
	}
	if _, err := m.Verify(100, 1, nil); err != kerr.ProducerFenced {
		t.Errorf("fenced: %v", err)
	}
	if _, err := m.Verify(9, 0, nil); err != kerr.InvalidProducerIDMapping {
		t.Errorf("mapping: %v", err)
	}
	completed(t, m, must(m.PrepareEnd(100, 0, true, c.now)), nil)
	if _, err := m.Verify(100, 0, []kafka.TopicPartition{tp0}); err != kerr.ConcurrentTransactions {
		t.Errorf("prepare commit: %v", err)
	}
}

func TestEndTxn(t *testing.T) {
	for _, tc := range []struct {
		name   string
		state  State
		commit bool
		want   error
		write  State // the transit's state; none: no write
	}{
		{"commit ongoing", Ongoing, true, nil, PrepareCommit},
		{"abort ongoing", Ongoing, false, nil, PrepareAbort},
		{"retry of a completed commit", CompleteCommit, true, nil, none},
		{"retry of a completed abort", CompleteAbort, false, nil, none},
		{"abort after commit", CompleteCommit, false, kerr.InvalidTxnState, none},
		{"commit after abort", CompleteAbort, true, kerr.InvalidTxnState, none},
		{"retry while committing", PrepareCommit, true, kerr.ConcurrentTransactions, none},
		{"abort while committing", PrepareCommit, false, kerr.InvalidTxnState, none},
		{"retry while aborting", PrepareAbort, false, kerr.ConcurrentTransactions, none},
		{"commit while aborting", PrepareAbort, true, kerr.InvalidTxnState, none},
		{"no transaction", Empty, true, kerr.InvalidTxnState, none},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClock()
			m := ongoing(t, c, tp0)
			m.State = tc.state
			tr, err := m.PrepareEnd(100, 0, tc.commit, c.advance(time.Second))
			if err != tc.want {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
			if got := none; tr != nil {
				got = tr.State
				if got != tc.write {
					t.Fatalf("transit %s, want %s", got, tc.write)
				}
			} else if tc.write != none {
				t.Fatalf("no transit, want %s", tc.write)
			}
		})
	}
	c := newClock()
	m := ongoing(t, c, tp0)
	for _, tc := range []struct {
		id    int64
		epoch int16
		want  error
	}{{5, 0, kerr.InvalidProducerIDMapping}, {100, 1, kerr.ProducerFenced}, {100, -1, kerr.ProducerFenced}} {
		if _, err := m.PrepareEnd(tc.id, tc.epoch, true, c.now); err != tc.want {
			t.Errorf("producer %d epoch %d: %v, want %v", tc.id, tc.epoch, err, tc.want)
		}
	}
	tr := must(m.PrepareEnd(100, 0, true, c.now))
	if _, err := m.PrepareEnd(100, 0, true, c.now); err != kerr.ConcurrentTransactions {
		t.Errorf("while the prepare is written: %v", err)
	}
	completed(t, m, tr, nil)
	// Markers in flight: Complete* pending.
	tr = must(m.PrepareComplete(c.now))
	if _, err := m.PrepareEnd(100, 0, true, c.now); err != kerr.ConcurrentTransactions {
		t.Errorf("while markers are written: %v", err)
	}
	m.RemovePartition(tp0)
	completed(t, m, tr, nil)
	if m.State != CompleteCommit || len(m.Partitions) != 0 {
		t.Fatalf("%+v", m)
	}
}

func TestTimeoutAndExpiry(t *testing.T) {
	c := newClock()
	m := ongoing(t, c, tp0) // timeout 60s, started now
	if m.TimedOut(c.advance(60 * time.Second)) {
		t.Fatal("timed out at exactly its timeout")
	}
	if !m.TimedOut(c.advance(time.Millisecond)) {
		t.Fatal("not timed out after its timeout")
	}
	tr, err := m.PrepareFenceAbort(c.now)
	if err != nil || tr.State != PrepareAbort || tr.ProducerEpoch != 1 {
		t.Fatalf("%+v %v", tr, err)
	}
	if m.TimedOut(c.now) {
		t.Error("timed out again while its abort is pending")
	}
	completed(t, m, tr, nil)
	if m.Expired(c.now, time.Hour) {
		t.Error("expired with a transaction in PrepareAbort")
	}
	completed(t, m, must(m.PrepareComplete(c.now)), nil)
	if m.Expired(c.advance(time.Hour-time.Millisecond), time.Hour) {
		t.Error("expired early")
	}
	if !m.Expired(c.advance(time.Millisecond), time.Hour) {
		t.Fatal("not expired")
	}
	completed(t, m, must(m.PrepareDead(c.now)), nil)
	if m.State != Dead {
		t.Fatal(m.State)
	}
}

// must is a transit that must have been prepared.
func must(tr *Transit, err error) *Transit {
	if err != nil || tr == nil {
		panic(fmt.Sprintf("no transit: %v", err))
	}
	return tr
}
