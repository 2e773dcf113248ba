package replica

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/record"
	"github.com/samsa-kafka/samsa/internal/record/recordtest"
	"github.com/samsa-kafka/samsa/internal/storage"
)

func newManager(t *testing.T, dir string) *Manager {
	t.Helper()
	logs, err := storage.OpenManager(storage.ManagerConfig{Dirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logs.Close() })
	return NewManager(logs)
}

func produce(p *Partition) error {
	b := recordtest.Values(1000, "v")
	hdrs, err := record.Validate(b, 1<<20)
	if err != nil {
		return err
	}
	_, err = p.AppendAsLeader(b, hdrs, time.Unix(1, 0), 1)
	return err
}

func TestBecomeRoles(t *testing.T) {
	m := newManager(t, t.TempDir())
	tp := kafka.TopicPartition{Topic: "t", Partition: 0}
	id := [16]byte{1}
	cfg := Config{Log: storage.DefaultLogConfig(), MaxMessageBytes: 1 << 20}

	steps := []struct {
		name    string
		st      State
		wantErr error
		leader  bool
	}{
		{"leader at epoch 0", State{Role: Leader, Leader: 1, LeaderEpoch: 0, Replicas: []int32{1, 2}, ISR: []int32{1, 2}}, nil, true},
		{"same epoch is stale", State{Role: Follower, Leader: 2, LeaderEpoch: 0}, ErrStaleLeaderEpoch, true},
		{"follower at epoch 1", State{Role: Follower, Leader: 2, LeaderEpoch: 1, Replicas: []int32{1, 2}, ISR: []int32{2}}, nil, false},
		{"older epoch is stale", State{Role: Leader, Leader: 1, LeaderEpoch: 0}, ErrStaleLeaderEpoch, false},
		{"leader again at epoch 2", State{Role: Leader, Leader: 1, LeaderEpoch: 2}, nil, true},
	}
	for _, s := range steps {
		p, err := m.Become(tp, id, cfg, s.st)
		if !errors.Is(err, s.wantErr) {
			t.Fatalf("%s: err %v, want %v", s.name, err, s.wantErr)
		}
		if p.IsLeader() != s.leader {
			t.Fatalf("%s: leader %v, want %v", s.name, p.IsLeader(), s.leader)
		}
		err = produce(p)
		_, _, rerr := p.Read(0, 1<<20, storage.MinOneBatch)
		if s.leader && (err != nil || rerr != nil) {
			t.Fatalf("%s: leader refused: produce %v, read %v", s.name, err, rerr)
		}
		if !s.leader && (!errors.Is(err, ErrNotLeader) || !errors.Is(rerr, ErrNotLeader)) {
			t.Fatalf("%s: follower answered produce %v, read %v; want ErrNotLeader", s.name, err, rerr)
		}
	}
	if got := m.Get(tp).State(); got.LeaderEpoch != 2 || got.Role != Leader {
		t.Fatalf("final state %+v", got)
	}
}

func TestBecomeInconsistentTopicID(t *testing.T) {
	dir := t.TempDir()
	tp := kafka.TopicPartition{Topic: "t", Partition: 0}
	cfg := Config{Log: storage.DefaultLogConfig(), MaxMessageBytes: 1 << 20}
	m := newManager(t, dir)
	if _, err := m.Become(tp, [16]byte{1}, cfg, State{Role: Leader}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Become(tp, [16]byte{2}, cfg, State{Role: Leader, LeaderEpoch: 5}); !errors.Is(err, ErrInconsistentTopicID) {
		t.Fatalf("hosted: err %v, want ErrInconsistentTopicID", err)
	}
	// Not hosted, but the log on disk belongs to topic id 1 (a log dir
	// restored from an older backup, say): it is set aside as stray, the
	// partition starts a new log.
	if _, err := produceN(t, m.Get(tp), 3, 1); err != nil {
		t.Fatal(err)
	}
	if err := m.Remove(tp, false); err != nil {
		t.Fatal(err)
	}
	p, err := m.Become(tp, [16]byte{2}, cfg, State{Role: Leader, LeaderEpoch: 5})
	if err != nil {
		t.Fatalf("on disk: %v", err)
	}
	if p.TopicID != [16]byte{2} || p.LogEndOffset() != 0 {
		t.Fatalf("hosted with topic id %x, log end %d; want 02…, 0", p.TopicID, p.LogEndOffset())
	}
	if strays, _ := filepath.Glob(filepath.Join(dir, "t-0.*-stray")); len(strays) != 1 {
		t.Fatalf("stray directories %v, want the old log's", strays)
	}
}
