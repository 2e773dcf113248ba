package replica

import (
	"errors"
	"testing"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/storage"
)

// BecomeHosted applies to the partition it is given, with Become's checks;
// given one removed since, it hosts the partition anew, as Become does, with
// the removed partition's config.
func TestBecomeHosted(t *testing.T) {
	m := newManager(t, t.TempDir())
	tp := kafka.TopicPartition{Topic: "t", Partition: 0}
	cfg := Config{Log: storage.DefaultLogConfig(), MaxMessageBytes: 1 << 20}
	p, err := m.Become(tp, [16]byte{1}, cfg, State{Role: Follower, Leader: 2, LeaderEpoch: 1, Replicas: []int32{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := m.BecomeHosted(p, [16]byte{1}, State{Role: Leader, Leader: 1, LeaderEpoch: 2, Replicas: []int32{1, 2}, ISR: []int32{1}}); err != nil || got != p || !p.IsLeader() {
		t.Fatalf("hosted: %v, same partition %v, leader %v", err, got == p, p.IsLeader())
	}
	if _, err := m.BecomeHosted(p, [16]byte{1}, State{Role: Follower, Leader: 2, LeaderEpoch: 2}); !errors.Is(err, ErrStaleLeaderEpoch) {
		t.Fatalf("same epoch: err %v, want ErrStaleLeaderEpoch", err)
	}
	if _, err := m.BecomeHosted(p, [16]byte{9}, State{Role: Leader, Leader: 1, LeaderEpoch: 3}); !errors.Is(err, ErrInconsistentTopicID) {
		t.Fatalf("other topic id: err %v, want ErrInconsistentTopicID", err)
	}
	p.SetConfig(Config{Log: storage.DefaultLogConfig(), MaxMessageBytes: 777})
	if err := m.Remove(tp, false); err != nil {
		t.Fatal(err)
	}
	got, err := m.BecomeHosted(p, [16]byte{1}, State{Role: Leader, Leader: 1, LeaderEpoch: 1, Replicas: []int32{1}, ISR: []int32{1}})
	if err != nil || got == p || m.Get(tp) != got || !got.IsLeader() {
		t.Fatalf("after removal: %v, new partition %v, hosted %v", err, got != p, m.Get(tp) == got)
	}
	if c := got.Config(); c.MaxMessageBytes != 777 {
		t.Fatalf("hosted anew with config %+v, want the removed partition's", c)
	}
}
