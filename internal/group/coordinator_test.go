package group

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-kafka/samsa/internal/record"
)

// memLog is an in-memory group.Log: one byte log of batches per
// partition, as the broker's log holds them (offsets assigned); a write
// is committed when the test says (hold), else at once; a load waits for
// loadGate when set.
type memLog struct {
	mu       sync.Mutex
	data     map[int32][]byte
	next     map[int32]int64
	hold     bool
	commits  []chan error
	loadGate chan struct{}
}

func newMemLog() *memLog { return &memLog{data: map[int32][]byte{}, next: map[int32]int64{}} }

// put appends a batch at the partition's next offset and returns its base.
func (l *memLog) put(partition int32, batch []byte) (int64, error) {
	h, err := record.ReadHeader(batch)
	if err != nil {
		return 0, err
	}
	b := append([]byte(nil), batch...)
	base := l.next[partition]
	record.SetBaseOffset(b, base)
	l.data[partition] = append(l.data[partition], b...)
	l.next[partition] = base + int64(h.LastOffsetDelta) + 1
	return base, nil
}

// marker appends a producer's transaction marker, as a partition leader
// does for WriteTxnMarkers.
func (l *memLog) marker(partition int32, producerID int64, commit bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.put(partition, record.BuildMarker(record.Marker{ProducerID: producerID, Commit: commit}, 0)); err != nil {
		panic(err)
	}
}

func (l *memLog) Append(partition int32, batch []byte) (func(context.Context) error, int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	base, err := l.put(partition, batch)
	if err != nil {
		return nil, 0, err
	}
	ch := make(chan error, 1)
	if l.hold {
		l.commits = append(l.commits, ch)
	} else {
		ch <- nil
	}
	return func(ctx context.Context) error {
		select {
		case err := <-ch:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}, base, nil
}

// release completes the oldest held write with err.
func (l *memLog) release(t *testing.T, err error) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		l.mu.Lock()
		if len(l.commits) > 0 {
			ch := l.commits[0]
			l.commits = l.commits[1:]
			l.mu.Unlock()
			ch <- err
			return
		}
		l.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatal("no write to release")
		}
	}
}

func (l *memLog) Load(ctx context.Context, partition int32, fn LoadFunc) error {
	if l.loadGate != nil {
		select {
		case <-l.loadGate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock() // fn does not call back into the log
	_, err := ReadBatches(l.data[partition], fn)
	return err
}

func newTestCoordinator(l *memLog, now *time.Time) *Coordinator {
	return NewCoordinator(CoordinatorConfig{
		Group:      Config{MinSessionTimeout: time.Second, MaxSessionTimeout: time.Hour, MaxSize: 100},
		Partitions: 1, Retention: time.Hour, CommitTimeout: 10 * time.Second, MetadataMaxBytes: 10,
		Log: l, Now: func() time.Time { return *now },
	})
}

// waitLoaded waits until the coordinator answers for the group's partition.
func waitLoaded(t *testing.T, c *Coordinator) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, err := c.FetchOffsets("x", nil); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("partition not loaded")
		}
	}
}

func TestCoordinatorLoadAndUnload(t *testing.T) {
	now := t0
	l := newMemLog()
	c := newTestCoordinator(l, &now)
	if _, err := c.FetchOffsets("g", nil); !errors.Is(err, kerr.NotCoordinator) {
		t.Fatalf("before leading: %v", err)
	}
	l.loadGate = make(chan struct{})
	c.BecomeLeader(0, 1)
	if err := c.Heartbeat("g", "m", nil, 1); !errors.Is(err, kerr.CoordinatorLoadInProgress) {
		t.Fatalf("while loading: %v", err)
	}
	close(l.loadGate)
	waitLoaded(t, c)
	tp := TP{"t", 0}
	errs := c.CommitOffsets(context.Background(), "g", "", nil, -1, []Commit{{TP: tp, Offset: 5, LeaderEpoch: 2}, {TP: TP{"t", 1}, Offset: 1, Metadata: "much too long"}})
	if errs[0] != nil || !errors.Is(errs[1], kerr.OffsetMetadataTooLarge) {
		t.Fatalf("commit: %v", errs)
	}
	c.CommitOffsets(context.Background(), "g", "", nil, -1, []Commit{{TP: tp, Offset: 9}})
	c.CommitOffsets(context.Background(), "h", "", nil, -1, []Commit{{TP: tp, Offset: 3}})
	c.DeleteOffsets(context.Background(), "h", []TP{tp})

	// Another broker (a fresh coordinator on the same log) takes over.
	c.Resign(0)
	if _, err := c.FetchOffsets("g", nil); !errors.Is(err, kerr.NotCoordinator) {
		t.Fatalf("after resigning: %v", err)
	}
	l.loadGate = nil
	c2 := newTestCoordinator(l, &now)
	c2.BecomeLeader(0, 2)
	waitLoaded(t, c2)
	got, _ := c2.FetchOffsets("g", []TP{tp, {"t", 1}})
	if got[0].Offset.Offset != 9 || got[1].Offset.Offset != -1 {
		t.Fatalf("reloaded: %+v", got)
	}
	if got, _ := c2.FetchOffsets("h", nil); len(got) != 0 {
		t.Fatalf("a deleted offset came back: %+v", got)
	}
}

// A JoinGroup waiting when the partition is unloaded is answered
// NOT_COORDINATOR; a commit whose write fails is not applied.
func TestCoordinatorResignAnswersWaiters(t *testing.T) {
	now := t0
	l := newMemLog()
	c := newTestCoordinator(l, &now)
	c.cfg.Group.InitialRebalanceDelay = time.Hour // the join waits
	c.BecomeLeader(0, 1)
	waitLoaded(t, c)
	res := make(chan JoinResult, 1)
	go func() {
		res <- c.Join(context.Background(), "g", JoinRequest{ClientID: "c", SessionTimeout: 10 * time.Second,
			RebalanceTimeout: 10 * time.Second, ProtocolType: "consumer", Protocols: []Protocol{{Name: "range"}}})
	}()
	for d, _ := c.Describe("g"); d.State != PreparingRebalance; d, _ = c.Describe("g") {
		time.Sleep(time.Millisecond)
	}
	c.Resign(0)
	if r := <-res; !errors.Is(r.Err, kerr.NotCoordinator) {
		t.Fatalf("waiting join after resign: %+v", r)
	}

	c.BecomeLeader(0, 2)
	waitLoaded(t, c)
	l.mu.Lock()
	l.hold = true
	l.mu.Unlock()
	done := make(chan []error, 1)
	go func() {
		done <- c.CommitOffsets(context.Background(), "g2", "", nil, -1, []Commit{{TP: TP{"t", 0}, Offset: 4}})
	}()
	l.release(t, kerr.NotEnoughReplicas)
	if errs := <-done; !errors.Is(errs[0], kerr.CoordinatorNotAvailable) {
		t.Fatalf("failed write: %v", errs)
	}
	if got, _ := c.FetchOffsets("g2", []TP{{"t", 0}}); got[0].Offset.Offset != -1 {
		t.Fatalf("a failed commit was applied: %+v", got)
	}
}

// Offsets of a group with only commits expire retention after their
// commit, and the group goes with them.
func TestCoordinatorExpiry(t *testing.T) {
	now := t0
	l := newMemLog()
	c := newTestCoordinator(l, &now)
	c.BecomeLeader(0, 1)
	waitLoaded(t, c)
	c.CommitOffsets(context.Background(), "g", "", nil, -1, []Commit{{TP: TP{"t", 0}, Offset: 4}})
	now = now.Add(59 * time.Minute)
	c.expire()
	if got, _ := c.FetchOffsets("g", nil); len(got) != 1 {
		t.Fatalf("expired early: %+v", got)
	}
	now = now.Add(time.Minute)
	c.expire()
	if got, _ := c.FetchOffsets("g", nil); len(got) != 0 {
		t.Fatalf("not expired: %+v", got)
	}
	if gs, _ := c.List(nil); len(gs) != 0 {
		t.Fatalf("empty group without offsets kept: %+v", gs)
	}
}
