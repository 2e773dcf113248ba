package replica

import (
	"testing"
	"time"

	"github.com/samsa-kafka/samsa/internal/kafka"
	"github.com/samsa-kafka/samsa/internal/storage"
)

// The hosted partitions by topic and number: sparse numbers, removal (a
// topic whose last partition goes is forgotten), Lookup across topics, and
// ShrinkISRs visiting every hosted partition.
func TestManagerTables(t *testing.T) {
	m := newManager(t, t.TempDir())
	cfg := Config{Log: storage.DefaultLogConfig(), MaxMessageBytes: 1 << 20, ReplicaLagTimeMax: time.Second}
	host := func(topic string, p int32) *Partition {
		t.Helper()
		part, err := m.Become(kafka.TopicPartition{Topic: topic, Partition: p}, [16]byte{1}, cfg,
			State{Role: Leader, Leader: 1, Replicas: []int32{1, 2}, ISR: []int32{1, 2}})
		if err != nil {
			t.Fatal(err)
		}
		return part
	}
	a7, a0, b3 := host("a", 7), host("a", 0), host("b", 3)
	tp := func(topic string, p int32) kafka.TopicPartition {
		return kafka.TopicPartition{Topic: topic, Partition: p}
	}
	tps := []kafka.TopicPartition{tp("a", 0), tp("a", 7), tp("b", 3), tp("a", 3), tp("a", 8), tp("a", -1), tp("b", 0), tp("c", 0), tp("a", 7)}
	want := []*Partition{a0, a7, b3, nil, nil, nil, nil, nil, a7}
	for i, tp := range tps {
		if got := m.Get(tp); got != want[i] {
			t.Errorf("Get(%v) = %p, want %p", tp, got, want[i])
		}
	}
	m.Lookup(func(get func(kafka.TopicPartition) *Partition) {
		for i, tp := range tps {
			if got := get(tp); got != want[i] {
				t.Errorf("Lookup(%v) = %p, want %p", tp, got, want[i])
			}
		}
	})

	var proposed []kafka.TopicPartition
	m.SetISRProposer(func(p ISRProposal) { proposed = append(proposed, p.TP) })
	m.ShrinkISRs(time.Now().Add(time.Hour)) // follower 2 never fetched: out of every ISR
	if len(proposed) != 3 {
		t.Fatalf("ShrinkISRs proposed for %v, want the 3 hosted partitions", proposed)
	}

	if err := m.RemoveMany([]kafka.TopicPartition{tp("a", 7), tp("b", 3), tp("c", 1)}, false); err != nil {
		t.Fatal(err)
	}
	if m.Get(kafka.TopicPartition{Topic: "a", Partition: 7}) != nil || m.Get(kafka.TopicPartition{Topic: "a", Partition: 0}) != a0 {
		t.Fatal("a-7 still hosted or a-0 lost")
	}
	if m.topics.Topic("b") != nil || m.topics.Len() != 1 {
		t.Fatalf("topic b kept after its last partition, %d hosted", m.topics.Len())
	}
	if !a7.Detached() || !b3.Detached() || a0.Detached() {
		t.Fatal("removed partitions not detached")
	}
	if again := host("a", 7); again == a7 || m.Get(kafka.TopicPartition{Topic: "a", Partition: 7}) != again {
		t.Fatal("a-7 not hosted anew")
	}
}

// CreateTopicLogs returns every partition's log in request order, creating
// the missing ones; BecomeWithLog hosts a partition on the log it is given.
func TestCreateLogsThenBecomeWithLog(t *testing.T) {
	m := newManager(t, t.TempDir())
	cfg := Config{Log: storage.DefaultLogConfig(), MaxMessageBytes: 1 << 20}
	existing, err := m.logs.Create(kafka.TopicPartition{Topic: "t", Partition: 1}, [16]byte{1}, cfg.Log)
	if err != nil {
		t.Fatal(err)
	}
	var reqs []storage.CreateRequest
	for p := range int32(3) {
		reqs = append(reqs, storage.CreateRequest{TopicPartition: kafka.TopicPartition{Topic: "t", Partition: p}, TopicID: [16]byte{1}, Config: cfg.Log})
	}
	logs, err := m.CreateTopicLogs([]storage.TopicLogs{{Topic: "t", TopicID: [16]byte{1}, Config: cfg.Log, Partitions: []int32{0, 1, 2}}})
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range logs {
		if l == nil || l != m.logs.Get(reqs[i].TopicPartition) {
			t.Fatalf("log %d: %p, storage has %p", i, l, m.logs.Get(reqs[i].TopicPartition))
		}
	}
	if logs[1] != existing {
		t.Fatal("existing log not returned")
	}
	p, err := m.BecomeWithLog(reqs[2].TopicPartition, [16]byte{1}, cfg, State{Role: Follower, Leader: 2, Replicas: []int32{1, 2}}, logs[2])
	if err != nil || p.Log() != logs[2] || m.Get(reqs[2].TopicPartition) != p {
		t.Fatalf("BecomeWithLog: %v, log %v, hosted %v", err, p.Log() == logs[2], m.Get(reqs[2].TopicPartition) == p)
	}
	// A log of another topic id is set aside (stray), not hosted: the
	// partition gets a new one.
	p, err = m.BecomeWithLog(reqs[0].TopicPartition, [16]byte{9}, cfg, State{Role: Follower, Leader: 2}, logs[0])
	if err != nil || p.Log() == logs[0] || p.Log().TopicID() != [16]byte{9} || m.logs.Get(reqs[0].TopicPartition) != p.Log() {
		t.Fatalf("BecomeWithLog with another topic id: %v", err)
	}
}

// Partition numbers far past the others go to the sparse side of the table
// (no table of 2^31 entries for one partition), are found, replaced,
// listed and removed like the others, also once the dense side has grown
// past them.
func TestTableSparseNumbers(t *testing.T) {
	m := NewManager(nil)
	part := func(p int32) *Partition { return &Partition{TP: kafka.TopicPartition{Topic: "t", Partition: p}} }
	get := func(p int32) *Partition { return m.getLocked(kafka.TopicPartition{Topic: "t", Partition: p}) }
	huge, far, zero := part(1<<31-1), part(5000), part(0)
	for _, p := range []*Partition{huge, far, zero} {
		m.putLocked(p)
	}
	if m.topics.Len() != 3 {
		t.Fatalf("count %d", m.topics.Len())
	}
	for p := range int32(3000) { // the dense side grows past 5000's place
		if p > 0 {
			m.putLocked(part(p))
		}
	}
	m.putLocked(part(3000))
	for p := int32(3001); p <= 6000; p++ {
		if p != 5000 {
			m.putLocked(part(p))
		}
	}
	if get(5000) != far || get(1<<31-1) != huge || get(0) != zero || get(-1) != nil || get(7000) != nil {
		t.Fatal("look-ups")
	}
	again := part(5000)
	m.putLocked(again) // replaced in place: still one partition 5000
	if get(5000) != again || m.topics.Len() != 6002 || len(m.allLocked()) != 6002 {
		t.Fatalf("replace: count %d, listed %d", m.topics.Len(), len(m.allLocked()))
	}
	for p := range int32(6001) {
		if m.deleteLocked(kafka.TopicPartition{Topic: "t", Partition: p}) == nil {
			t.Fatalf("partition %d not removed", p)
		}
	}
	if get(5000) != nil || m.topics.Len() != 1 || m.deleteLocked(huge.TP) != huge || m.topics.Topics() != 0 {
		t.Fatalf("after removal: count %d, topics %d", m.topics.Len(), m.topics.Topics())
	}
}
