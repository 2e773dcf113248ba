package txn

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/record"
)

// memLog is an in-memory Log: each partition a list of records; a write
// fails with fail (once) when set.
type memLog struct {
	mu    sync.Mutex
	recs  map[int32][]record.KV
	fail  error
	block chan struct{} // when set, Load waits for it to close
}

func newMemLog() *memLog { return &memLog{recs: map[int32][]record.KV{}} }

func (l *memLog) Append(p int32, batch []byte) (func(context.Context) error, int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.fail; err != nil {
		l.fail = nil
		return func(context.Context) error { return err }, 0, nil
	}
	base := int64(len(l.recs[p]))
	err := record.Records(batch, func(r record.Record) bool {
		l.recs[p] = append(l.recs[p], record.KV{Key: r.Key, Value: r.Value})
		return true
	})
	return func(context.Context) error { return nil }, base, err
}

func (l *memLog) Load(ctx context.Context, p int32, fn func(int64, []byte, []byte)) error {
	if l.block != nil {
		<-l.block
	}
	l.mu.Lock()
	recs := append([]record.KV(nil), l.recs[p]...)
	l.mu.Unlock()
	for i, kv := range recs {
		fn(int64(i), kv.Key, kv.Value)
	}
	return ctx.Err()
}

// states are the states written to a partition, in order ("Dead" for a tombstone).
func (l *memLog) states(t *testing.T, p int32) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, kv := range l.recs[p] {
		tr, _, err := Decode(kv.Key, kv.Value)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tr.State.String())
	}
	return out
}

// fakeMarkers records the jobs; a job waits for release when hold is set.
type fakeMarkers struct {
	mu   sync.Mutex
	jobs []MarkerJob
	hold chan struct{}
	err  error
	done chan MarkerJob
}

func (f *fakeMarkers) Write(ctx context.Context, job MarkerJob, written func(kafka.TopicPartition)) error {
	f.mu.Lock()
	f.jobs = append(f.jobs, job)
	hold, err := f.hold, f.err
	f.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err == nil {
		for _, tp := range job.Partitions {
			written(tp)
		}
	}
	if f.done != nil {
		f.done <- job
	}
	return err
}

type rig struct {
	c       *Coordinator
	log     *memLog
	markers *fakeMarkers
	clock   *clock
	ids     *ids
	part    int32
	cancel  context.CancelFunc
}

const txnID = "tx-1"

func newRig(t *testing.T, log *memLog) *rig {
	t.Helper()
	r := &rig{log: log, markers: &fakeMarkers{done: make(chan MarkerJob, 16)}, clock: newClock(), ids: &ids{next: 1000}}
	r.c = NewCoordinator(Config{Partitions: 50, MaxTimeout: 15 * time.Minute, IDExpiration: 7 * 24 * time.Hour,
		ProducerID: func(context.Context) (int64, error) { return r.ids.newID() },
		Log:        log, Markers: r.markers, Now: r.clock.Now})
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	done := make(chan struct{})
	go func() { r.c.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	r.part = r.c.PartitionFor(txnID)
	return r
}

// lead makes the rig's coordinator lead its partition at epoch and waits
// for the load.
func (r *rig) lead(t *testing.T, epoch int32) {
	t.Helper()
	r.c.BecomeLeader(r.part, epoch)
	for {
		_, err := r.c.Describe(txnID)
		if err != kerr.CoordinatorLoadInProgress {
			return
		}
		runtime.Gosched()
	}
}

// waitComplete waits for the markers job and the Complete* after it.
func (r *rig) waitComplete(t *testing.T, want State) MarkerJob {
	t.Helper()
	job := <-r.markers.done
	for {
		s, err := r.c.Describe(txnID)
		if err != nil {
			t.Fatal(err)
		}
		if _, pending := r.c.pending(txnID); s.State == want && !pending {
			return job
		}
		runtime.Gosched()
	}
}

// pending is the id's pending state (tests).
func (c *Coordinator) pending(id string) (State, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m := c.txns[id]; m != nil {
		return m.Pending()
	}
	return none, false
}

func TestCoordinatorCommit(t *testing.T) {
	r := newRig(t, newMemLog())
	if _, _, err := r.c.InitProducerID(context.Background(), txnID, 60000, nil); err != kerr.NotCoordinator {
		t.Fatalf("before leading: %v", err)
	}
	r.lead(t, 4)
	pid, epoch, err := r.c.InitProducerID(context.Background(), txnID, 60000, nil)
	if err != nil || pid != 1001 || epoch != 0 {
		t.Fatalf("InitProducerId: %d %d %v", pid, epoch, err)
	}
	if err := r.c.AddPartitions(context.Background(), txnID, pid, epoch, []kafka.TopicPartition{tp0, tp2}); err != nil {
		t.Fatal(err)
	}
	if err := r.c.AddPartitions(context.Background(), txnID, pid, epoch, []kafka.TopicPartition{tp0}); err != nil {
		t.Fatal(err) // already in: no write
	}
	if err := r.c.EndTxn(context.Background(), txnID, pid, epoch, true); err != nil {
		t.Fatal(err)
	}
	job := r.waitComplete(t, CompleteCommit)
	if !job.Commit || job.CoordinatorEpoch != 4 || job.ProducerID != pid || len(job.Partitions) != 2 {
		t.Errorf("markers job %+v", job)
	}
	want := []string{"Empty", "Ongoing", "PrepareCommit", "CompleteCommit"}
	if got := r.log.states(t, r.part); !equal(got, want) {
		t.Errorf("written %v, want %v", got, want)
	}
	// A retried EndTxn of the completed commit succeeds without a write.
	if err := r.c.EndTxn(context.Background(), txnID, pid, epoch, true); err != nil {
		t.Errorf("retried commit: %v", err)
	}
	if err := r.c.EndTxn(context.Background(), txnID, pid, epoch, false); err != kerr.InvalidTxnState {
		t.Errorf("abort after commit: %v", err)
	}
	if n := len(r.log.states(t, r.part)); n != 4 {
		t.Errorf("%d records after the retries", n)
	}
	if err := r.c.EndTxn(context.Background(), "other", pid, epoch, true); err != kerr.InvalidProducerIDMapping && err != kerr.NotCoordinator {
		t.Errorf("unknown id: %v", err)
	}
}

func TestCoordinatorLoadingAndResign(t *testing.T) {
	log := newMemLog()
	log.block = make(chan struct{})
	r := newRig(t, log)
	r.c.BecomeLeader(r.part, 1)
	if _, _, err := r.c.InitProducerID(context.Background(), txnID, 60000, nil); err != kerr.CoordinatorLoadInProgress {
		t.Fatalf("while loading: %v", err)
	}
	close(log.block)
	r.lead(t, 1)
	if _, _, err := r.c.InitProducerID(context.Background(), txnID, 60000, nil); err != nil {
		t.Fatal(err)
	}
	r.c.Resign(r.part)
	if _, err := r.c.Describe(txnID); err != kerr.NotCoordinator {
		t.Fatalf("after resigning: %v", err)
	}
	r.c.BecomeLeader(r.part, 0) // an older epoch than the one resigned does load again: the partition is not held
	r.lead(t, 0)
	if s, err := r.c.Describe(txnID); err != nil || s.ProducerEpoch != 0 {
		t.Fatalf("reloaded: %+v %v", s, err)
	}
}

func TestCoordinatorWriteFailure(t *testing.T) {
	r := newRig(t, newMemLog())
	r.lead(t, 1)
	pid, epoch, _ := r.c.InitProducerID(context.Background(), txnID, 60000, nil)
	r.log.fail = kerr.NotEnoughReplicas
	if err := r.c.AddPartitions(context.Background(), txnID, pid, epoch, []kafka.TopicPartition{tp0}); err != kerr.CoordinatorNotAvailable {
		t.Fatalf("failed write: %v", err)
	}
	if s, _ := r.c.Describe(txnID); s.State != Empty {
		t.Fatalf("state after a failed write: %s", s.State)
	}
	if err := r.c.AddPartitions(context.Background(), txnID, pid, epoch, []kafka.TopicPartition{tp0}); err != nil {
		t.Fatalf("retry: %v", err)
	}
	r.log.fail = kerr.NotLeaderForPartition
	if err := r.c.EndTxn(context.Background(), txnID, pid, epoch, false); err != kerr.NotCoordinator {
		t.Fatalf("lost leadership: %v", err)
	}
}

// TestCoordinatorFailover: a new coordinator loads a partition whose last
// record of the id is PrepareCommit, sends the markers with its own
// coordinator epoch and writes CompleteCommit.
func TestCoordinatorFailover(t *testing.T) {
	log := newMemLog()
	old := newRig(t, log)
	old.lead(t, 3)
	old.markers.hold = make(chan struct{}) // the old coordinator dies before its markers
	pid, epoch, _ := old.c.InitProducerID(context.Background(), txnID, 60000, nil)
	if err := old.c.AddPartitions(context.Background(), txnID, pid, epoch, []kafka.TopicPartition{tp0, tp1}); err != nil {
		t.Fatal(err)
	}
	if err := old.c.EndTxn(context.Background(), txnID, pid, epoch, true); err != nil {
		t.Fatal(err)
	}
	old.c.Resign(old.part) // its markers stop
	r := newRig(t, log)
	r.lead(t, 4)
	job := r.waitComplete(t, CompleteCommit)
	if !job.Commit || job.CoordinatorEpoch != 4 || len(job.Partitions) != 2 || job.ProducerEpoch != epoch {
		t.Errorf("resumed job %+v", job)
	}
	want := []string{"Empty", "Ongoing", "PrepareCommit", "CompleteCommit"}
	if got := log.states(t, r.part); !equal(got, want) {
		t.Errorf("written %v, want %v", got, want)
	}
	select {
	case j := <-old.markers.done:
		t.Errorf("the resigned coordinator finished its markers: %+v", j)
	default:
	}
}

// TestCoordinatorFenceOpenTransaction: a second producer's InitProducerId
// aborts the first one's open transaction (CONCURRENT_TRANSACTIONS until
// then), and gets the epoch after the fence's.
func TestCoordinatorFenceOpenTransaction(t *testing.T) {
	r := newRig(t, newMemLog())
	r.lead(t, 1)
	pid, epoch, _ := r.c.InitProducerID(context.Background(), txnID, 60000, nil)
	_ = r.c.AddPartitions(context.Background(), txnID, pid, epoch, []kafka.TopicPartition{tp0})
	r.markers.hold = make(chan struct{})
	if _, _, err := r.c.InitProducerID(context.Background(), txnID, 60000, nil); err != kerr.ConcurrentTransactions {
		t.Fatalf("fence: %v", err)
	}
	if _, _, err := r.c.InitProducerID(context.Background(), txnID, 60000, nil); err != kerr.ConcurrentTransactions {
		t.Fatalf("while the abort's markers are written: %v", err)
	}
	if err := r.c.EndTxn(context.Background(), txnID, pid, epoch, true); err != kerr.ProducerFenced {
		t.Fatalf("the fenced producer's commit: %v", err)
	}
	close(r.markers.hold)
	job := r.waitComplete(t, CompleteAbort)
	if job.Commit || job.ProducerEpoch != 1 {
		t.Errorf("abort job %+v", job)
	}
	pid2, epoch2, err := r.c.InitProducerID(context.Background(), txnID, 60000, nil)
	if err != nil || pid2 != pid || epoch2 != 2 {
		t.Fatalf("after the abort: %d %d %v", pid2, epoch2, err)
	}
}

func TestCoordinatorTimeoutAndExpiry(t *testing.T) {
	r := newRig(t, newMemLog())
	r.lead(t, 1)
	pid, epoch, _ := r.c.InitProducerID(context.Background(), txnID, 10000, nil)
	_ = r.c.AddPartitions(context.Background(), txnID, pid, epoch, []kafka.TopicPartition{tp0})
	r.clock.advance(10 * time.Second)
	r.c.AbortTimedOut()
	if s, _ := r.c.Describe(txnID); s.State != Ongoing {
		t.Fatalf("aborted at its timeout: %s", s.State)
	}
	r.clock.advance(time.Millisecond)
	r.c.AbortTimedOut()
	job := r.waitComplete(t, CompleteAbort)
	if job.Commit || job.ProducerEpoch != epoch+1 {
		t.Errorf("timeout abort %+v", job)
	}
	if err := r.c.AddPartitions(context.Background(), txnID, pid, epoch, []kafka.TopicPartition{tp0}); err != kerr.ProducerFenced {
		t.Errorf("the timed-out producer: %v", err)
	}
	r.clock.advance(7*24*time.Hour - time.Millisecond)
	r.c.RemoveExpired()
	if _, err := r.c.Describe(txnID); err != nil {
		t.Fatalf("expired early: %v", err)
	}
	r.clock.advance(time.Millisecond)
	r.c.RemoveExpired()
	if _, err := r.c.Describe(txnID); err != kerr.TransactionalIDNotFound {
		t.Fatalf("after expiry: %v", err)
	}
	want := []string{"Empty", "Ongoing", "PrepareAbort", "CompleteAbort", "Dead"}
	if got := r.log.states(t, r.part); !equal(got, want) {
		t.Errorf("written %v, want %v", got, want)
	}
	// Reloaded, the tombstone wins.
	r.c.Resign(r.part)
	r.lead(t, 2)
	if _, err := r.c.Describe(txnID); err != kerr.TransactionalIDNotFound {
		t.Fatalf("reloaded after expiry: %v", err)
	}
}

func TestCoordinatorList(t *testing.T) {
	r := newRig(t, newMemLog())
	for p := int32(0); p < 50; p++ {
		r.c.BecomeLeader(p, 1)
	}
	r.lead(t, 1)
	for {
		if _, err := r.c.List(Filter{}); err == nil {
			break
		}
		runtime.Gosched()
	}
	for _, id := range []string{"a", "b", "c"} {
		pid, epoch, err := r.c.InitProducerID(context.Background(), id, 60000, nil)
		if err != nil {
			t.Fatal(err)
		}
		if id != "a" {
			_ = r.c.AddPartitions(context.Background(), id, pid, epoch, []kafka.TopicPartition{tp0})
		}
		r.clock.advance(time.Second)
	}
	for _, tc := range []struct {
		f    Filter
		want int
	}{
		{Filter{}, 3},
		{Filter{States: []State{Ongoing}}, 2},
		{Filter{States: []State{Empty}}, 1},
		{Filter{ProducerIDs: []int64{1001, 1003}}, 2},
		{Filter{States: []State{Ongoing}, MinDuration: 1500 * time.Millisecond}, 1}, // b started 2s ago, c 1s ago
	} {
		got, err := r.c.List(tc.f)
		if err != nil || len(got) != tc.want {
			t.Errorf("%+v: %d %v, want %d", tc.f, len(got), err, tc.want)
		}
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

var _ = errors.New

// TestCoordinatorEndTxnWait: with EndTxnWait, EndTxn answers once the
// markers and CompleteCommit are written, so the producer's next
// AddPartitions is not CONCURRENT_TRANSACTIONS; markers that do not finish
// within the bound do not hold the answer back.
func TestCoordinatorEndTxnWait(t *testing.T) {
	r := newRig(t, newMemLog())
	r.c.cfg.EndTxnWait = time.Hour
	r.lead(t, 1)
	pid, epoch, _ := r.c.InitProducerID(context.Background(), txnID, 60000, nil)
	_ = r.c.AddPartitions(context.Background(), txnID, pid, epoch, []kafka.TopicPartition{tp0})
	if err := r.c.EndTxn(context.Background(), txnID, pid, epoch, true); err != nil {
		t.Fatal(err)
	}
	if s, _ := r.c.Describe(txnID); s.State != CompleteCommit {
		t.Fatalf("answered in %s", s.State)
	}
	if err := r.c.AddPartitions(context.Background(), txnID, pid, epoch, []kafka.TopicPartition{tp0}); err != nil {
		t.Fatalf("next transaction: %v", err)
	}
	r.markers.hold = make(chan struct{})
	defer close(r.markers.hold)
	r.c.cfg.EndTxnWait = time.Millisecond
	if err := r.c.EndTxn(context.Background(), txnID, pid, epoch, false); err != nil {
		t.Fatal(err)
	}
	if st, pending := r.c.pending(txnID); !pending || st != CompleteAbort {
		t.Fatalf("markers held: pending %s %v", st, pending)
	}
}
