package replica

import (
	"testing"

	"github.com/samsa-kafka/samsa/internal/kafka"
)

// Kafka's ReplicaManager gauges over partitions led here with ISRs of every
// size against min.insync.replicas 2, and one followed.
func TestGauges(t *testing.T) {
	m := newManager(t, t.TempDir())
	if g := m.Gauges(); g != (Gauges{}) {
		t.Fatalf("no partitions: %+v", g)
	}
	host := func(p int32, st State) {
		t.Helper()
		if _, err := m.Become(kafka.TopicPartition{Topic: "t", Partition: p}, [16]byte{1}, testConfig(2), st); err != nil {
			t.Fatal(err)
		}
	}
	replicas := []int32{1, 2, 3}
	host(0, State{Role: Leader, Leader: 1, LeaderEpoch: 1, Replicas: replicas, ISR: []int32{1, 2, 3}}) // full
	host(1, State{Role: Leader, Leader: 1, LeaderEpoch: 1, Replicas: replicas, ISR: []int32{1, 2}})    // under-replicated, at min ISR
	host(2, State{Role: Leader, Leader: 1, LeaderEpoch: 1, Replicas: replicas, ISR: []int32{1}})       // under-replicated, under min ISR
	host(3, State{Role: Follower, Leader: 2, LeaderEpoch: 1, Replicas: replicas, ISR: []int32{2}})     // not ours to count
	want := Gauges{Partitions: 4, Leaders: 3, UnderReplicated: 2, UnderMinISR: 1, AtMinISR: 1}
	if g := m.Gauges(); g != want {
		t.Fatalf("gauges %+v, want %+v", g, want)
	}
	if err := m.Remove(kafka.TopicPartition{Topic: "t", Partition: 2}, true); err != nil {
		t.Fatal(err)
	}
	want = Gauges{Partitions: 3, Leaders: 2, UnderReplicated: 1, AtMinISR: 1}
	if g := m.Gauges(); g != want {
		t.Fatalf("gauges after a removal %+v, want %+v", g, want)
	}
}
